//! Reused drivers get the verdicts of drivers started per scenario: each row of
//! adapters/matrix.toml runs over every scenario of its profile both ways (`reuse` on and
//! off), and every cell's mark is the same; so does the reference driver behind the
//! pass-through proxy of tests/drivers/ over every strict scenario. A driver that declares
//! `reusable` starts far fewer processes reused.
//!
//! A test binary of its own (each case runs a row twice over its whole profile), one row at a
//! time. The rows' builds run first (the Rust adapters' drivers; the SDKs' installer, a no-op
//! once installed).

#[path = "support/matrix_row.rs"]
mod matrix_row;
#[path = "validate/servers.rs"]
mod servers;
#[path = "integration/support.rs"]
#[allow(dead_code)]
mod support;

use matrix_row::matrix_row;
use mcp_conformance::cut::driver::{self, DriverPool};
use mcp_conformance::cut::Capability;
use mcp_conformance::matrix::run::{self, Options};
use mcp_conformance::runner::RunOptions;
use mcp_conformance::scenario::LoadedScenario;
use mcp_conformance::verdict::{self, Verdict};
use mcp_refclient::Profile;
use std::path::Path;
use std::time::{Duration, Instant};
use support::*;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `every`-th scenario (in path order) of `all`: the SDK rows start an interpreter per
/// scenario when not reused (about a second each on two cores), so they are compared on a
/// fixed sample spread over every area rather than on their whole profile twice.
fn sample(all: Vec<LoadedScenario>, every: usize) -> Vec<LoadedScenario> {
    all.into_iter().step_by(every).collect()
}

fn assert_same_verdicts_reused(name: &str, every: usize) {
    let (_one, rows, reused) = matrix_row(name, true);
    servers::installed(root());
    run::build(&rows, &reused).expect("the row builds");
    let scenarios = sample(all_scenarios(), every);
    let mut runs = Vec::new();
    for reuse in [true, false] {
        let started = Instant::now();
        let options = Options {
            // The baseline names scenarios outside the sample too.
            every_scenario: all_scenarios(),
            reuse,
            ..reused.clone()
        };
        let matrix = run::run(&rows, &scenarios, &launcher(), &options).expect("the row runs");
        eprintln!(
            "{name}, reuse {reuse}: {} s, {:?}",
            started.elapsed().as_secs(),
            matrix.columns[0].drivers
        );
        runs.push(matrix.columns.into_iter().next().expect("one column"));
    }
    let (reused, per_scenario) = (&runs[0], &runs[1]);
    let differ: Vec<String> = reused
        .cells
        .iter()
        .zip(&per_scenario.cells)
        .filter(|(a, b)| a.mark != b.mark)
        .map(|(a, b)| {
            format!(
                "{}: reused {:?} / per scenario {:?}: {}",
                a.scenario,
                a.mark,
                b.mark,
                serde_json::to_string(&a.result)
                    .unwrap_or_default()
                    .chars()
                    .take(400)
                    .collect::<String>()
            )
        })
        .collect();
    assert!(differ.is_empty(), "{name}:\n{}", differ.join("\n"));
    // Run, not only judged: a scenario of a rule the row is not held to has a result but no run.
    let ran = reused
        .cells
        .iter()
        .filter(|c| c.result.as_ref().is_some_and(|r| r.evidence.is_some()))
        .count();
    if reused.client.capabilities.contains(&Capability::Reusable) {
        assert!(
            reused.drivers.starts < ran / 2 && reused.drivers.reused > ran / 2,
            "{name}: {:?} for {ran} scenarios",
            reused.drivers
        );
    }
}

#[rstest::rstest]
#[case::reference_strict("reference-strict", 1)]
#[case::reference_yoagent("reference-yoagent", 1)]
#[case::reference_kova("reference-kova", 1)]
#[case::rmcp("rmcp", 1)]
#[case::yoagent("yoagent", 1)]
#[case::kova("kova", 1)]
#[case::typescript_sdk("typescript-sdk", 2)]
#[case::python_sdk("python-sdk", 4)]
fn a_row_gets_the_same_verdicts_reused_as_started_per_scenario(
    #[case] name: &str,
    #[case] every: usize,
) {
    assert_same_verdicts_reused(name, every);
}

/// A verdict's class, for comparing two runs (which step failed may move with the load).
fn class(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "pass",
        Verdict::Fail { .. } => "fail",
        Verdict::NotApplicable { .. } => "n/a",
        Verdict::HarnessFault { .. } => "harness fault",
    }
}

#[test]
fn the_reference_driver_behind_the_proxy_gets_the_same_verdicts_reused_as_started_per_scenario() {
    let argv = vec![
        "python3".to_string(),
        root().join("tests/drivers/proxy.py").display().to_string(),
        "--".into(),
        conformance_bin().into(),
        "driver".into(),
        "--profile".into(),
        "strict".into(),
    ];
    let hello_within = Duration::from_secs(30);
    let described = driver::probe(&argv, hello_within).expect("the driver says hello");
    // A Python proxy starts per scenario when not reused: a fixed sample of every area.
    let strict: Vec<_> = all_scenarios()
        .into_iter()
        .filter(|s| s.profiles().contains(&Profile::Strict))
        .collect();
    let scenarios = sample(strict, 3);
    let options = RunOptions {
        step_guard: Duration::from_secs(20),
        workers: 4,
        ..RunOptions::portable()
    };
    let mut runs = Vec::new();
    for reuse in [true, false] {
        let pool = DriverPool::new(argv.clone(), described.clone(), hello_within, reuse);
        let results = verdict::run_all_clients_for(
            &scenarios,
            &described,
            |scenario| pool.client(&scenario.scenario),
            &launcher(),
            options,
        );
        runs.push((results, pool.counts()));
    }
    let ((reused, counts), (per_scenario, fresh_counts)) = (&runs[0], &runs[1]);
    let differ: Vec<String> = reused
        .iter()
        .zip(per_scenario)
        .filter(|(a, b)| class(&a.verdict) != class(&b.verdict))
        .map(|(a, b)| {
            format!(
                "{}: reused {:?} / per scenario {:?}",
                a.scenario, a.verdict, b.verdict
            )
        })
        .collect();
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    let ran = per_scenario.iter().filter(|r| r.evidence.is_some()).count();
    assert_eq!(fresh_counts.starts, 0, "no pool without reuse");
    assert!(
        counts.reused > ran / 2 && counts.starts < ran / 4,
        "{counts:?} for {ran} scenario runs"
    );
    // Each replacement is a result's note.
    let noted = reused.iter().filter(|r| r.note.is_some()).count();
    assert_eq!(noted, counts.replaced, "{counts:?}");
}
