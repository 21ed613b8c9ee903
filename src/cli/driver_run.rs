//! `run --client`: the scenarios of a driver's profile through a pool of its processes, and
//! what the processes did, on stderr.

use std::process::ExitCode;
use std::time::Duration;

use mcp_conformance::{error_chain, exit_code, runner::MockLauncher, scenario, terminal, verdict};
use mcp_refclient::Profile;

use crate::fail;

/// How `run --client` runs its driver.
pub(crate) struct DriverRun {
    pub(crate) step_guard: Duration,
    pub(crate) jobs: usize,
    pub(crate) reuse: bool,
}

/// Runs the scenarios of the driver's profile through the driver.
pub(crate) fn run_driver(
    command: &str,
    scenarios: &[scenario::LoadedScenario],
    launcher: &MockLauncher,
    how: DriverRun,
) -> Result<Vec<verdict::ScenarioResult>, ExitCode> {
    use mcp_conformance::cut::driver::{self, DriverPool};
    let step_guard = how.step_guard;
    let give_up = |e: &dyn std::error::Error, code: u8| {
        fail(&error_chain(e));
        ExitCode::from(code)
    };
    let argv = driver::split_command(command).map_err(|e| give_up(&e, exit_code::USAGE))?;
    let described =
        driver::probe(&argv, step_guard).map_err(|e| give_up(&e, exit_code::FAILURES))?;
    if Profile::from_name(&described.profile).is_none() {
        fail(&format!(
            "the driver claims the unknown profile `{}` (expected strict, yoagent or kova)",
            described.profile
        ));
        return Err(ExitCode::from(exit_code::FAILURES));
    }
    let options = mcp_conformance::runner::RunOptions {
        step_guard,
        workers: how.jobs.max(1),
        ..mcp_conformance::runner::RunOptions::portable()
    };
    let pool = DriverPool::new(argv, described.clone(), step_guard, how.reuse);
    let results = verdict::run_all_clients_for(
        scenarios,
        &described,
        |scenario| pool.client(&scenario.scenario),
        launcher,
        options,
    );
    for line in driver_summary(&pool, &results) {
        terminal::eprint(&line);
    }
    Ok(results)
}

/// What the driver processes did: started, reused, replaced (and why, a line each).
fn driver_summary(
    pool: &mcp_conformance::cut::driver::DriverPool,
    results: &[verdict::ScenarioResult],
) -> Vec<String> {
    let counts = pool.counts();
    let mut line = format!(
        "driver: {} process start(s) for {} scenario run(s)",
        counts.starts,
        results.iter().filter(|r| r.evidence.is_some()).count()
    );
    if pool.reuses() {
        line.push_str(&format!(
            ", reused {} time(s), {} fresh for scenarios about the process itself, \
             {} replaced after a scenario",
            counts.reused, counts.fresh, counts.replaced
        ));
    } else {
        line.push_str(" (one per scenario)");
    }
    let notes = results.iter().filter_map(|result| {
        let note = result.note.as_ref()?;
        Some(format!("  {}: {note}", result.scenario))
    });
    std::iter::once(line).chain(notes).collect()
}
