//! `cargo test` for a client author: the bundled scenarios as one libtest trial each, for an
//! adapter written in the author's own `tests/conformance.rs`.
//!
//! ```toml
//! # Cargo.toml of the client's crate
//! [dev-dependencies]
//! mcp-conformance = "0.1"
//!
//! [[test]]
//! name = "conformance"
//! harness = false
//! ```
//!
//! The adapter implements [`crate::cut::ClientUnderTest`] (see that module for a whole
//! one); `main` hands a factory for it to [`main`]. Trials are named by scenario
//! (`stdio/banner-before-initialize`): `cargo test --test conformance stdio/` runs a folder,
//! `-- stdio.banner` the scenarios of the rules starting so, `--list` lists them, and
//! nextest runs them as any libtest binary. Scenarios the client cannot express (see
//! [`crate::cut::Described`]), and those of rules its profile does not promise (see
//! [`crate::cut::sources`]), are ignored, with the reason printed.
//!
//! Known failures go in a baseline file, a reason each; an entry whose scenario passes is
//! stale and fails its trial until removed:
//!
//! ```toml
//! [[expected]]
//! scenario = "stdio/banner-before-initialize"
//! reason = "the SDK treats any stdout line that is not JSON as fatal"
//! ```

use crate::cut::{self, ClientUnderTest};
use crate::runner::{MockLauncher, RunOptions};
use crate::scenario::{self, LoadedScenario};
use crate::verdict::{self, Verdict};
use libtest_mimic::{Arguments, Failed, Trial};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The baseline file: scenarios the client is known to fail, a reason each.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The known failures.
    #[serde(default)]
    pub expected: Vec<KnownFailure>,
}

/// One known failure.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownFailure {
    /// The scenario's name (`stdio/banner-before-initialize`).
    pub scenario: String,
    /// Why the client fails it.
    pub reason: String,
    /// The rule it breaks: one of the scenario's rules (a matrix row's baseline needs it).
    #[serde(default)]
    pub rule: Option<String>,
    /// One line of evidence from the client's source (`src/x.rs:120: …`) or documentation
    /// (the sentence), so a reader can confirm the failure is the client's (a matrix row's
    /// baseline needs it).
    #[serde(default)]
    pub evidence: Option<String>,
}

impl Baseline {
    /// Reads a baseline; a missing file is an empty baseline. Every entry must name a
    /// bundled scenario.
    pub fn load(path: &Path, scenarios: &[LoadedScenario]) -> Result<Baseline, String> {
        use mcp_mock_servers::files::{read_text, FileError};
        // The same checks as every other input: a FIFO or `/dev/zero` is refused at once.
        let text = match read_text(path) {
            Ok(text) => text,
            Err(FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Baseline::default())
            }
            Err(e) => return Err(format!("cannot read the baseline {}: {e}", path.display())),
        };
        use mcp_mock_servers::load::{toml_error, MAX_SCRIPT_DEPTH, MAX_SCRIPT_VALUES};
        let invalid = |why: String| format!("the baseline {} is not valid: {why}", path.display());
        mcp_mock_servers::weight::check_toml(&text, MAX_SCRIPT_VALUES, MAX_SCRIPT_DEPTH)
            .map_err(|heavy| invalid(format!("too large to load: {heavy}")))?;
        let baseline: Baseline =
            toml::from_str(&text).map_err(|e| invalid(toml_error(&text, &e)))?;
        if let Some(unknown) = baseline
            .expected
            .iter()
            .find(|e| !scenarios.iter().any(|s| s.name == e.scenario))
        {
            return Err(format!(
                "the baseline {} names an unknown scenario `{}`",
                path.display(),
                unknown.scenario
            ));
        }
        for (i, entry) in baseline.expected.iter().enumerate() {
            if baseline.expected[..i]
                .iter()
                .any(|e| e.scenario == entry.scenario)
            {
                return Err(format!(
                    "the baseline {} lists `{}` twice",
                    path.display(),
                    entry.scenario
                ));
            }
            let Some(rule) = &entry.rule else { continue };
            let rules = scenarios
                .iter()
                .find(|s| s.name == entry.scenario)
                .map(|s| s.scenario.rules.clone())
                .unwrap_or_default();
            if !rules.contains(rule) {
                return Err(format!(
                    "the baseline {}: `{}` checks {}, not the rule `{rule}`",
                    path.display(),
                    entry.scenario,
                    rules.join(", ")
                ));
            }
        }
        Ok(baseline)
    }

    /// Every entry's rule and evidence, else the first entry without them: a matrix row's
    /// baseline is a list of claims about someone else's client, each to be checked.
    pub fn require_evidence(&self, path: &Path) -> Result<(), String> {
        let missing = |e: &&KnownFailure| {
            e.rule.is_none()
                || e.evidence
                    .as_deref()
                    .is_none_or(|line| line.trim().is_empty() || line.contains('\n'))
        };
        match self.expected.iter().find(missing) {
            Some(entry) => Err(format!(
                "the baseline {}: `{}` needs a `rule` and one line of `evidence` (the client's source file:line or its doc sentence)",
                path.display(),
                entry.scenario
            )),
            None => Ok(()),
        }
    }

    /// The entry for `scenario`, if listed.
    pub fn find(&self, scenario: &str) -> Option<&KnownFailure> {
        self.expected.iter().find(|e| e.scenario == scenario)
    }
}

/// The scenarios bundled with this crate.
pub fn bundled_scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// Runs the bundled scenarios against clients from `factory`, one libtest trial per
/// scenario of the client's profile, with `baseline_path` (relative to the crate being
/// tested) listing known failures. Call it from `main` of a `harness = false` test.
///
/// The test binary also serves the scripted stdio servers (it re-runs itself as
/// `… mock-stdio`), so a dev-dependency is all it takes.
pub fn main<A, F>(factory: F, baseline_path: impl AsRef<Path>) -> ExitCode
where
    A: ClientUnderTest + 'static,
    F: Fn() -> A + Send + Sync + 'static,
{
    let mut argv = std::env::args_os();
    if argv.nth(1).is_some_and(|a| a == "mock-stdio") {
        return mcp_mock_servers::stdio_main(argv.collect());
    }
    let mut args = Arguments::from_args();
    let scenarios = match scenario::load_all(&bundled_scenarios()) {
        Ok(scenarios) => scenarios,
        Err(e) => return usage(&crate::error_chain(&e)),
    };
    let baseline_path = match std::env::var_os("CARGO_MANIFEST_DIR") {
        Some(root) if baseline_path.as_ref().is_relative() => Path::new(&root).join(baseline_path),
        _ => baseline_path.as_ref().to_path_buf(),
    };
    let baseline = match Baseline::load(&baseline_path, &scenarios) {
        Ok(baseline) => Arc::new(baseline),
        Err(e) => return usage(&e),
    };
    let launcher = match MockLauncher::this_binary() {
        Ok(launcher) => launcher,
        Err(e) => {
            return usage(&format!(
                "cannot find this test binary to serve the scripted servers: {e}"
            ))
        }
    };
    let described = factory().describe();
    let Some(profile) = mcp_refclient::Profile::from_name(&described.profile) else {
        return usage(&format!(
            "the adapter claims the unknown profile `{}` (expected strict, yoagent or kova)",
            described.profile
        ));
    };
    // A filter that reads as a rule id (`stdio.banner`) selects by rule.
    let rule_filter = args.filter.take_if(|f| f.contains('.') && !f.contains('/'));
    if args.test_threads.is_none() {
        // Scenarios wait far more than they compute.
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        args.test_threads = Some(cores * 4);
    }
    let factory = Arc::new(factory);
    let trials = scenarios
        .into_iter()
        .filter(|s| s.profiles().contains(&profile))
        .filter(|s| {
            rule_filter
                .as_ref()
                .is_none_or(|f| s.scenario.rules.iter().any(|r| r.starts_with(f.as_str())))
        })
        .map(|loaded| {
            let applicable = applicability(&described, &loaded);
            let name = loaded.name.clone();
            if let Err(reason) = &applicable {
                if !args.list {
                    eprintln!("not applicable: {name}: {reason}");
                }
            }
            let ignored = applicable.is_err();
            let (factory, launcher, baseline) =
                (factory.clone(), launcher.clone(), baseline.clone());
            Trial::test(name, move || {
                trial(&loaded, applicable.clone(), &*factory, &launcher, &baseline)
            })
            .with_ignored_flag(ignored)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// Whether the client `described` is judged on `loaded`, as `run --client` and the matrix
/// judge it ([`verdict::applicable`]); else why not.
fn applicability(described: &cut::Described, loaded: &LoadedScenario) -> Result<(), String> {
    verdict::applicable(described, loaded, RunOptions::portable())
}

/// A trial; one that is not applicable (ignored, but run all the same by `--ignored`,
/// `--include-ignored` or nextest's `--run-ignored`) is judged as not applicable, not run.
fn trial<A: ClientUnderTest + 'static>(
    loaded: &LoadedScenario,
    applicable: Result<(), String>,
    factory: &dyn Fn() -> A,
    launcher: &MockLauncher,
    baseline: &Baseline,
) -> Result<(), Failed> {
    let verdict = match applicable {
        Ok(()) => {
            verdict::run_client_one(loaded, factory(), launcher, RunOptions::portable())
                .0
                .verdict
        }
        Err(reason) => Verdict::NotApplicable { reason },
    };
    against_baseline(loaded, verdict, baseline.find(&loaded.name)).map_err(Failed::from)
}

/// A trial's result: a failure the baseline lists passes, a listed scenario that passes
/// is a stale entry and fails.
fn against_baseline(
    loaded: &LoadedScenario,
    verdict: Verdict,
    known: Option<&KnownFailure>,
) -> Result<(), String> {
    match (verdict, known) {
        (Verdict::Pass, None)
        | (Verdict::NotApplicable { .. }, None)
        | (Verdict::Fail { .. }, Some(_)) => Ok(()),
        (Verdict::Pass, Some(entry)) => Err(format!(
            "stale baseline entry: {} passes now (listed because: {}); remove it from the baseline",
            loaded.name, entry.reason
        )),
        (Verdict::Fail { failures }, None) => {
            let lines: Vec<String> = failures
                .iter()
                .map(|f| {
                    format!(
                        "{}\n    expected: {}\n    actual:   {}",
                        f.what, f.expected, f.actual
                    )
                })
                .collect();
            Err(format!(
                "{} ({})\n{}",
                loaded.name,
                loaded.scenario.rules.join(", "),
                lines.join("\n")
            ))
        }
        (Verdict::NotApplicable { reason }, Some(_)) => Err(format!(
            "listed in the baseline, but not applicable: {reason}"
        )),
        (Verdict::HarnessFault { reason }, _) => {
            Err(format!("harness fault (not the client's): {reason}"))
        }
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(crate::exit_code::USAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_failure_passes_and_a_listed_pass_is_a_stale_entry() {
        let root = bundled_scenarios();
        let loaded =
            scenario::load(&root, &root.join("stdio/banner-before-initialize.toml")).unwrap();
        let known = KnownFailure {
            scenario: loaded.name.clone(),
            reason: "r".into(),
            rule: None,
            evidence: None,
        };
        let failed = Verdict::Fail { failures: vec![] };
        assert_eq!(
            against_baseline(&loaded, failed.clone(), Some(&known)),
            Ok(())
        );
        assert!(against_baseline(&loaded, failed, None).is_err());
        let stale = against_baseline(&loaded, Verdict::Pass, Some(&known)).unwrap_err();
        assert!(stale.starts_with("stale baseline entry"), "{stale}");
        assert_eq!(against_baseline(&loaded, Verdict::Pass, None), Ok(()));
    }

    /// A client whose every step would panic: a trial that runs it fails.
    struct Untouchable;

    impl ClientUnderTest for Untouchable {
        fn describe(&self) -> cut::Described {
            cut::Described {
                name: "untouchable".into(),
                version: "0".into(),
                transports: vec![cut::TransportKind::Stdio],
                capabilities: Vec::new(),
                profile: "strict".into(),
            }
        }
        async fn connect(&self, _: &cut::Target, _: &cut::Settings) -> cut::StepResult {
            panic!("a scenario outside the client's promises was run")
        }
        async fn list_tools(&self) -> cut::StepResult {
            panic!("run")
        }
        async fn call_tool(
            &self,
            _: &str,
            _: serde_json::Value,
            _: Option<std::time::Duration>,
        ) -> cut::StepResult {
            panic!("run")
        }
        async fn close(&self) -> cut::StepResult {
            panic!("run")
        }
        async fn drop_connection(&self) -> cut::StepResult {
            panic!("run")
        }
    }

    #[test]
    fn an_ignored_trial_run_anyway_is_not_applicable_not_judged() {
        let root = bundled_scenarios();
        // A profile-tier promise of yoagent's documentation: it does not bind a strict client.
        let loaded = scenario::load(&root, &root.join("stdio/exit-error-text.toml")).unwrap();
        let applicable = applicability(&Untouchable.describe(), &loaded);
        assert!(
            applicable
                .as_ref()
                .is_err_and(|why| why.contains("is a profile-tier promise of yoagent's")),
            "{applicable:?}"
        );
        let launcher = MockLauncher::conformance_binary("/nonexistent");
        let factory =
            || -> Untouchable { panic!("the factory of a not-applicable trial was called") };
        let known = |reason: &str| Baseline {
            expected: vec![KnownFailure {
                scenario: loaded.name.clone(),
                reason: reason.into(),
                rule: None,
                evidence: None,
            }],
        };
        assert!(trial(
            &loaded,
            applicable.clone(),
            &factory,
            &launcher,
            &Baseline::default()
        )
        .is_ok());
        // A baseline entry for it says so, as for a scenario the client cannot express.
        assert!(trial(&loaded, applicable, &factory, &launcher, &known("r")).is_err());
    }

    #[test]
    fn a_baseline_naming_no_bundled_scenario_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("baseline.toml");
        std::fs::write(
            &path,
            "[[expected]]\nscenario = \"stdio/nowhere\"\nreason = \"r\"\n",
        )
        .unwrap();
        let error = Baseline::load(&path, &[]).unwrap_err();
        assert!(
            error.contains("unknown scenario `stdio/nowhere`"),
            "{error}"
        );
        assert!(Baseline::load(&dir.path().join("absent.toml"), &[])
            .unwrap()
            .expected
            .is_empty());
    }
}
