//! One trial per scenario file: `cargo test stdio/` runs the scenarios of `scenarios/stdio/`.
//!
//! Each trial runs the scenario under every profile it applies to, checks its `[expect]`,
//! and pins the normalized transcripts in `snapshots/<same path>.snap`.
//!
//! With `SCENARIOS_FAIL_FAST` set, the trials that start after a failure fail at once without
//! running: a mutation run asks only whether any scenario fails, and each of its mutants
//! then costs the scenarios in flight, not the whole suite.

#[path = "support/slots.rs"]
mod slots;
#[path = "support/trials.rs"]
mod trials;

use libtest_mimic::{Failed, Trial};
use mcp_conformance::error_chain;
use mcp_conformance::runner::{estimate, transcript, MockLauncher};
use mcp_conformance::scenario::{self, LoadedScenario};
use mcp_conformance::verdict::{self, Verdict};
use mcp_refclient::TestHooks;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the first failed trial when `SCENARIOS_FAIL_FAST` asks to stop there.
static FAILED: AtomicBool = AtomicBool::new(false);

/// The scenario runs at once, over every trial.
static SLOTS: std::sync::LazyLock<slots::Slots> =
    std::sync::LazyLock::new(|| slots::Slots::per_core(8));

fn main() {
    // The trials wait on servers and bounds far more than they compute. A trial runs its
    // profiles side by side, each in one of SLOTS (eight runs per core at most), and as many
    // trials as slots keep them busy.
    let args = trials::waiting_trials(8);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut paths = scenario::discover(&root).expect("the scenarios folder can be listed");
    // The longest first (by what their scripts wait at least), so that no long one starts
    // last; a file that does not load sorts last and fails in its trial.
    let least_ms = |path: &std::path::PathBuf| {
        scenario::load(&root, path).map_or(0, |s| estimate::least_ms(&s.scenario))
    };
    let mut timed: Vec<_> = paths.drain(..).map(|p| (least_ms(&p), p)).collect();
    timed.sort_by_key(|(least, _)| std::cmp::Reverse(*least));
    let paths: Vec<_> = timed.into_iter().map(|(_, p)| p).collect();
    let fail_fast = std::env::var_os("SCENARIOS_FAIL_FAST").is_some();
    let trials = paths
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(&root)
                .unwrap()
                .with_extension("")
                .to_string_lossy()
                .replace('\\', "/");
            let root = root.clone();
            Trial::test(name, move || {
                if fail_fast && FAILED.load(Ordering::Relaxed) {
                    return Err("not run: an earlier scenario failed (SCENARIOS_FAIL_FAST)".into());
                }
                let result = run_trial(&root, &path);
                if result.is_err() {
                    FAILED.store(true, Ordering::Relaxed);
                }
                result
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn run_trial(root: &Path, path: &Path) -> Result<(), Failed> {
    let loaded = scenario::load(root, path).map_err(|e| Failed::from(error_chain(&e)))?;
    let launcher = MockLauncher::conformance_binary(env!("CARGO_BIN_EXE_mcp-conformance"));
    let mut transcripts = String::new();
    let mut problems = Vec::new();
    // Each profile's run is independent of the others: side by side, in profile order after.
    let runs: Vec<_> = std::thread::scope(|scope| {
        let running: Vec<_> = loaded
            .profiles()
            .into_iter()
            .map(|profile| {
                let (loaded, launcher) = (&loaded, &launcher);
                scope.spawn(move || {
                    SLOTS.run(|| {
                        let hooks = TestHooks::default();
                        (profile, verdict::run_one(loaded, profile, launcher, &hooks))
                    })
                })
            })
            .collect();
        running
            .into_iter()
            .map(|run| {
                run.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    for (profile, (result, outcome)) in runs {
        transcripts.push_str(&transcript::render(&outcome));
        match result.verdict {
            Verdict::Pass => {}
            Verdict::Fail { failures } => {
                for failure in failures {
                    problems.push(format!(
                        "[{}] {}\n    expected: {}\n    actual:   {}",
                        profile.name(),
                        failure.what,
                        failure.expected,
                        failure.actual
                    ));
                }
            }
            Verdict::HarnessFault { reason } => {
                problems.push(format!("[{}] harness fault: {reason}", profile.name()))
            }
            // The reference client expresses every capability.
            Verdict::NotApplicable { reason } => {
                problems.push(format!("[{}] not applicable: {reason}", profile.name()))
            }
        }
    }
    if !problems.is_empty() {
        return Err(format!("{}\n\n{transcripts}", problems.join("\n")).into());
    }
    assert_snapshot(&loaded, &transcripts)
}

fn assert_snapshot(loaded: &LoadedScenario, transcripts: &str) -> Result<(), Failed> {
    let snapshots = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(loaded.area());
    let file_name = loaded
        .name
        .rsplit('/')
        .next()
        .unwrap_or(&loaded.name)
        .to_string();
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(snapshots);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_description(loaded.scenario.requirement.clone());
    settings.set_input_file(&loaded.path);
    settings.set_omit_expression(true);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_snapshot!(file_name, transcripts));
    }));
    outcome.map_err(|panic| {
        let text = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "snapshot mismatch".into());
        Failed::from(text)
    })
}
