//! Every row of adapters/matrix.toml, through its driver as `matrix` runs it: reused over
//! every scenario of its profile, it holds its baseline (a failure not listed, or a listed
//! scenario that passes, fails the test; the SDK rows also pass the basic scenarios); and
//! started afresh for every scenario of a fixed sample spread over every area, it gets the
//! same mark on each. So does the reference driver behind the pass-through proxy of
//! tests/drivers/ over strict scenarios. A driver that declares `reusable` starts far fewer
//! processes reused. The reference rows, held to every scenario of their profile, pass each
//! through the driver as the reference client does in process (tests/scenarios.rs): the
//! `interrupt_host` ones too, the driver being its client's host.
//!
//! Each test takes a lane (a row runs several scenarios at once). The rows' builds run first (the Rust adapters' drivers; the SDKs' installer, which
//! installs the pinned SDKs on first use into target/validate-servers/ and is a no-op after).

use crate::matrix_row::matrix_row;
use crate::{lane, servers, support::*};
use mcp_conformance::cut::driver::{self, DriverPool};
use mcp_conformance::cut::Capability;
use mcp_conformance::matrix::run::{self, Column, Mark, Options};
use mcp_conformance::runner::RunOptions;
use mcp_conformance::scenario::LoadedScenario;
use mcp_conformance::verdict::{self, Verdict};
use mcp_refclient::Profile;
use std::path::Path;
use std::time::{Duration, Instant};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `every`-th scenario (in path order) of `all`: a fixed sample spread over every area,
/// rather than the whole profile twice (the SDK rows start an interpreter per scenario when
/// not reused, about a second each on two cores).
fn sample(all: Vec<LoadedScenario>, every: usize) -> Vec<LoadedScenario> {
    all.into_iter().step_by(every).collect()
}

/// Connect, list, call and close over each transport the SDK clients speak: these pass, or
/// the driver or the harness is wrong.
const BASIC: &[&str] = &[
    "stdio/framing-one-line-per-message",
    "http/protocol-version-header",
    "legacy-sse/strict-handshake-then-call",
];

/// The fewest passes a working SDK row has (37 and 43 today, of the strict scenarios whose
/// every rule the specification states).
const PASS_FLOOR: usize = 32;

/// A cell's result, cut for a failure message.
fn shown(cell: &run::Cell, chars: usize) -> String {
    serde_json::to_string(&cell.result)
        .unwrap_or_default()
        .chars()
        .take(chars)
        .collect()
}

/// The row's column holds its baseline: no cell off it.
fn assert_holds_its_baseline(name: &str, column: &Column) {
    let wrong: Vec<String> = column
        .cells
        .iter()
        .filter(|cell| cell.mark.fails())
        .map(|cell| format!("{} {:?}: {}", cell.scenario, cell.mark, shown(cell, 600)))
        .collect();
    assert!(
        wrong.is_empty(),
        "{name}: {} cell(s) off the baseline:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// An SDK row works at all: the basic scenarios pass, and a floor of passes that still
/// catches a row that stopped working (a strict third-party row is held to the
/// specification's rules only).
fn assert_works(name: &str, column: &Column) {
    for basic in BASIC {
        let cell = column
            .cells
            .iter()
            .find(|c| c.scenario == *basic)
            .unwrap_or_else(|| panic!("{basic} exists"));
        assert_eq!(cell.mark, Mark::Pass, "{name}: {basic}");
    }
    let passes = column.cells.iter().filter(|c| c.mark == Mark::Pass).count();
    assert!(
        passes >= PASS_FLOOR,
        "{name}: {passes} passes, fewer than {PASS_FLOOR}"
    );
}

fn assert_row_holds_its_baseline_reused_and_started_per_scenario(name: &str, every: usize) {
    let _lane = lane();
    let (rows, options) = matrix_row(name, true);
    servers::installed(root());
    run::build(&rows, &options).expect("the row builds");
    let all = all_scenarios();
    let started = Instant::now();
    let reused = run::run(&rows, &all, &launcher(), &options).expect("the row runs");
    let reused = reused.columns.into_iter().next().expect("one column");
    eprintln!(
        "{name}, reused: {} s, {:?}",
        started.elapsed().as_secs(),
        reused.drivers
    );
    assert_holds_its_baseline(name, &reused);
    if name.ends_with("-sdk") {
        assert_works(name, &reused);
    }
    let started = Instant::now();
    let per_scenario = Options {
        // The baseline names scenarios outside the sample too.
        every_scenario: all.clone(),
        reuse: false,
        ..options.clone()
    };
    let fresh =
        run::run(&rows, &sample(all, every), &launcher(), &per_scenario).expect("the row runs");
    let fresh = fresh.columns.into_iter().next().expect("one column");
    eprintln!(
        "{name}, one process per scenario: {} s, {:?}",
        started.elapsed().as_secs(),
        fresh.drivers
    );
    let differ: Vec<String> = fresh
        .cells
        .iter()
        .filter_map(|b| {
            let a = reused.cells.iter().find(|a| a.scenario == b.scenario)?;
            (a.mark != b.mark).then(|| {
                format!(
                    "{}: reused {:?} / per scenario {:?}: {}",
                    a.scenario,
                    a.mark,
                    b.mark,
                    shown(a, 400)
                )
            })
        })
        .collect();
    assert!(differ.is_empty(), "{name}:\n{}", differ.join("\n"));
    assert_eq!(fresh.drivers.reused, 0, "{name}: no reuse asked");
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
// Started per scenario, each row is compared on a fixed sample spread over every area: what
// differs between a reused driver and a fresh one is the process's life, which any scenario
// of an area shows. The reference rows, whose scenarios wait out their bounds in full (every
// one passes), on every fourth; the Rust adapters on every third; the SDK rows, which start
// an interpreter per scenario, on every second (TypeScript) and sixth (Python).
#[case::reference_strict("reference-strict", 4)]
#[case::reference_yoagent("reference-yoagent", 4)]
#[case::reference_kova("reference-kova", 4)]
#[case::rmcp("rmcp", 3)]
#[case::yoagent("yoagent", 3)]
#[case::kova("kova", 3)]
#[case::typescript_sdk("typescript-sdk", 2)]
#[case::python_sdk("python-sdk", 6)]
fn a_row_holds_its_baseline_reused_and_gets_the_same_marks_started_per_scenario(
    #[case] name: &str,
    #[case] every: usize,
) {
    assert_row_holds_its_baseline_reused_and_started_per_scenario(name, every);
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
    let _lane = lane();
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
        // A Python proxy and a driver per scenario when not reused: four at once.
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
