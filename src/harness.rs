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
//! stale and fails its trial until removed. An entry with a `rule` stands for that rule of
//! the scenario alone (a scenario is listed once per rule it breaks): a failure of another
//! of its rules still fails the trial, naming the rule ([`held_against`]):
//!
//! ```toml
//! [[expected]]
//! scenario = "stdio/banner-before-initialize"
//! rule = "stdio.banner.skipped"
//! reason = "the SDK treats any stdout line that is not JSON as fatal"
//! ```

use crate::cut::{self, ClientUnderTest};
use crate::matrix::run::Mark;
use crate::runner::{check::Failure, MockLauncher, RunOptions};
use crate::scenario::{self, LoadedScenario};
use crate::verdict::{self, NotHeld, Verdict};
use libtest_mimic::{Arguments, Failed, Trial};
use serde::{Deserialize, Serialize};
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
    /// The client fails it only some of the time, by a race in its own code that the reason
    /// and the evidence show (two equal timers, whichever fires first): a run where it
    /// passes leaves the entry standing instead of making it stale.
    #[serde(default)]
    pub intermittent: bool,
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
            // A scenario may be listed once per rule it checks; an entry without a rule
            // stands for the whole scenario, alone.
            if baseline.expected[..i].iter().any(|e| {
                e.scenario == entry.scenario
                    && (e.rule == entry.rule || e.rule.is_none() || entry.rule.is_none())
            }) {
                return Err(format!(
                    "the baseline {} lists `{}`{} twice",
                    path.display(),
                    entry.scenario,
                    entry
                        .rule
                        .as_ref()
                        .map(|r| format!(" for `{r}`"))
                        .unwrap_or_default()
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

    /// The entries for `scenario`: one per rule it is known to fail (or one for the whole
    /// scenario, without a rule).
    pub fn entries(&self, scenario: &str) -> Vec<&KnownFailure> {
        self.expected
            .iter()
            .filter(|e| e.scenario == scenario)
            .collect()
    }
}

/// How one rule of a scenario fared, held against the baseline.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct RuleMark {
    /// The rule.
    pub rule: String,
    /// Its mark: `pass`, `fail` (a failure of it no entry explains), `baselined`, `stale`
    /// (an entry names it but it passes or no longer applies), `not_applicable` (it does
    /// not bind the client).
    pub mark: Mark,
}

/// A verdict held against the baseline's entries for its scenario (`known`), one rule at a
/// time: a failure is explained by an entry naming one of the rules it counts against (or
/// by an entry without a rule), so a known failure of one rule never hides a new failure of
/// another. Gives the scenario's mark (the worst of its rules') and each rule's.
pub fn held_against(
    rules: &[String],
    verdict: &Verdict,
    not_held: &[NotHeld],
    known: &[&KnownFailure],
) -> (Mark, Vec<RuleMark>) {
    let failures: &[Failure] = match verdict {
        Verdict::Pass => &[],
        Verdict::Fail { failures } => failures,
        Verdict::NotApplicable { .. } if known.is_empty() => return (Mark::NotApplicable, vec![]),
        Verdict::NotApplicable { .. } => return (Mark::Stale, vec![]),
        Verdict::HarnessFault { .. } => return (Mark::HarnessFault, vec![]),
    };
    let covers = |e: &KnownFailure, rule: &str| e.rule.as_deref().is_none_or(|r| r == rule);
    let explained = |f: &Failure| {
        known
            .iter()
            .any(|e| f.rules.is_empty() || f.rules.iter().any(|r| covers(e, r)))
    };
    let marks: Vec<RuleMark> = rules
        .iter()
        .map(|rule| {
            let naming: Vec<&&KnownFailure> = known
                .iter()
                .filter(|e| e.rule.as_ref() == Some(rule))
                .collect();
            let named = !naming.is_empty();
            let mine: Vec<&Failure> = failures
                .iter()
                .filter(|f| f.rules.is_empty() || f.rules.contains(rule))
                .collect();
            let mark = if not_held.iter().any(|n| &n.rule == rule) {
                if named {
                    Mark::Stale
                } else {
                    Mark::NotApplicable
                }
            } else if mine.is_empty() {
                if !named {
                    Mark::Pass
                } else if naming.iter().all(|e| e.intermittent) {
                    Mark::Baselined
                } else {
                    Mark::Stale
                }
            } else if mine.iter().all(|f| explained(f)) {
                Mark::Baselined
            } else {
                Mark::Fail
            };
            RuleMark {
                rule: rule.clone(),
                mark,
            }
        })
        .collect();
    let mark = match Mark::worst(marks.iter().map(|m| m.mark)) {
        Some(mark @ (Mark::Fail | Mark::Stale | Mark::Baselined)) => mark,
        // A failure that names no expectation: the whole scenario's.
        _ if failures.is_empty() && matches!(verdict, Verdict::Fail { .. }) => {
            if known.is_empty() {
                Mark::Fail
            } else {
                Mark::Baselined
            }
        }
        _ if !failures.is_empty() && failures.iter().all(explained) => Mark::Baselined,
        _ if !failures.is_empty() => Mark::Fail,
        // An entry without a rule, for a scenario that passes.
        _ if !known.is_empty() && known.iter().all(|e| e.intermittent) => Mark::Baselined,
        _ if !known.is_empty() => Mark::Stale,
        _ => Mark::Pass,
    };
    (mark, marks)
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
fn applicability(
    described: &cut::Described,
    loaded: &LoadedScenario,
) -> Result<Vec<NotHeld>, String> {
    verdict::applicable(described, loaded, RunOptions::portable())
}

/// A trial; one that is not applicable (ignored, but run all the same by `--ignored`,
/// `--include-ignored` or nextest's `--run-ignored`) is judged as not applicable, not run.
fn trial<A: ClientUnderTest + 'static>(
    loaded: &LoadedScenario,
    applicable: Result<Vec<NotHeld>, String>,
    factory: &dyn Fn() -> A,
    launcher: &MockLauncher,
    baseline: &Baseline,
) -> Result<(), Failed> {
    let (verdict, not_held) = match applicable {
        Ok(_) => {
            let result =
                verdict::run_client_one(loaded, factory(), launcher, RunOptions::portable()).0;
            (result.verdict, result.not_held)
        }
        Err(reason) => (Verdict::NotApplicable { reason }, Vec::new()),
    };
    against_baseline(loaded, &verdict, &not_held, &baseline.entries(&loaded.name))
        .map_err(Failed::from)
}

/// A trial's result, one rule at a time ([`held_against`]): a failure the baseline lists
/// passes, a failure of a rule no entry explains fails (naming the rule), an entry whose
/// rule passes is stale and fails.
fn against_baseline(
    loaded: &LoadedScenario,
    verdict: &Verdict,
    not_held: &[NotHeld],
    known: &[&KnownFailure],
) -> Result<(), String> {
    let (mark, marks) = held_against(&loaded.scenario.rules, verdict, not_held, known);
    match (mark, verdict) {
        (Mark::Pass | Mark::Baselined | Mark::NotApplicable, _) => Ok(()),
        (_, Verdict::HarnessFault { reason }) => {
            Err(format!("harness fault (not the client's): {reason}"))
        }
        (_, Verdict::NotApplicable { reason }) => Err(format!(
            "listed in the baseline, but not applicable: {reason}"
        )),
        (_, verdict) => {
            let failures: &[Failure] = match verdict {
                Verdict::Fail { failures } => failures,
                _ => &[],
            };
            let mut lines = Vec::new();
            for m in marks.iter().filter(|m| m.mark == Mark::Fail) {
                lines.push(format!(
                    "{} fails rule {} (not in the baseline)",
                    loaded.name, m.rule
                ));
                for f in failures.iter().filter(|f| f.rules.contains(&m.rule)) {
                    lines.push(format!(
                        "  {}\n    expected: {}\n    actual:   {}",
                        f.label(),
                        f.expected,
                        f.actual
                    ));
                }
            }
            if lines.is_empty() && mark == Mark::Fail {
                lines.push(format!(
                    "{} ({})",
                    loaded.name,
                    loaded.scenario.rules.join(", ")
                ));
                for f in failures {
                    lines.push(format!(
                        "  {}\n    expected: {}\n    actual:   {}",
                        f.label(),
                        f.expected,
                        f.actual
                    ));
                }
            }
            let stale_rules: Vec<&str> = marks
                .iter()
                .filter(|m| m.mark == Mark::Stale)
                .map(|m| m.rule.as_str())
                .collect();
            for entry in known.iter().filter(|e| {
                e.rule
                    .as_deref()
                    .map_or(mark == Mark::Stale && stale_rules.is_empty(), |r| {
                        stale_rules.contains(&r)
                    })
            }) {
                lines.push(format!(
                    "stale baseline entry: {}{} passes now (listed because: {}); remove it from the baseline",
                    loaded.name,
                    entry
                        .rule
                        .as_ref()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default(),
                    entry.reason
                ));
            }
            Err(lines.join("\n"))
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
            intermittent: false,
        };
        let failed = Verdict::Fail { failures: vec![] };
        assert_eq!(against_baseline(&loaded, &failed, &[], &[&known]), Ok(()));
        assert!(against_baseline(&loaded, &failed, &[], &[]).is_err());
        let stale = against_baseline(&loaded, &Verdict::Pass, &[], &[&known]).unwrap_err();
        assert!(stale.starts_with("stale baseline entry"), "{stale}");
        assert_eq!(against_baseline(&loaded, &Verdict::Pass, &[], &[]), Ok(()));
    }

    fn failure(what: &str, rules: &[&str]) -> Failure {
        Failure {
            what: what.into(),
            expected: "e".into(),
            actual: "a".into(),
            rules: rules.iter().map(|r| r.to_string()).collect(),
        }
    }

    fn entry(scenario: &str, rule: &str) -> KnownFailure {
        KnownFailure {
            scenario: scenario.into(),
            reason: format!("fails {rule}"),
            rule: Some(rule.into()),
            evidence: Some("src/x.rs:1".into()),
            intermittent: false,
        }
    }

    #[test]
    fn a_known_failure_of_one_rule_hides_no_new_failure_of_another() {
        let rules = ["a.one".to_string(), "b.two".to_string()];
        let known = entry("s", "a.one");
        // Rule a's own expectation failed: known.
        let a_only = Verdict::Fail {
            failures: vec![failure("step 1", &["a.one"])],
        };
        let (mark, marks) = held_against(&rules, &a_only, &[], &[&known]);
        assert_eq!(mark, Mark::Baselined);
        assert_eq!(
            marks.iter().map(|m| m.mark).collect::<Vec<_>>(),
            [Mark::Baselined, Mark::Pass]
        );
        // Rule b's own expectation fails too: the scenario fails, on b.
        let both = Verdict::Fail {
            failures: vec![failure("step 1", &["a.one"]), failure("step 2", &["b.two"])],
        };
        let (mark, marks) = held_against(&rules, &both, &[], &[&known]);
        assert_eq!(mark, Mark::Fail);
        assert_eq!(marks[1].mark, Mark::Fail);
        // A failure of what both rules ask is explained by an entry for either.
        let shared = Verdict::Fail {
            failures: vec![failure("script", &["a.one", "b.two"])],
        };
        assert_eq!(
            held_against(&rules, &shared, &[], &[&known]).0,
            Mark::Baselined
        );
        // b fails alone: the entry for a is stale, and b is new.
        let b_only = Verdict::Fail {
            failures: vec![failure("step 2", &["b.two"])],
        };
        let (mark, marks) = held_against(&rules, &b_only, &[], &[&known]);
        assert_eq!(mark, Mark::Fail);
        assert_eq!(
            marks.iter().map(|m| m.mark).collect::<Vec<_>>(),
            [Mark::Stale, Mark::Fail]
        );
        // A rule that does not bind the client is not applicable on its own.
        let not_held = [NotHeld {
            rule: "b.two".into(),
            reason: "r".into(),
        }];
        let (mark, marks) = held_against(&rules, &Verdict::Pass, &not_held, &[]);
        assert_eq!(mark, Mark::Pass);
        assert_eq!(marks[1].mark, Mark::NotApplicable);
    }

    #[test]
    fn an_intermittent_entry_stands_through_a_pass_and_hides_no_other_rule() {
        let rules = ["a.one".to_string(), "b.two".to_string()];
        let racy = KnownFailure {
            intermittent: true,
            ..entry("s", "a.one")
        };
        // The race went the client's way this time: known, not stale.
        let (mark, marks) = held_against(&rules, &Verdict::Pass, &[], &[&racy]);
        assert_eq!(mark, Mark::Baselined);
        assert_eq!(marks[0].mark, Mark::Baselined);
        // It went the other way: known all the same.
        let a_only = Verdict::Fail {
            failures: vec![failure("step 1", &["a.one"])],
        };
        assert_eq!(
            held_against(&rules, &a_only, &[], &[&racy]).0,
            Mark::Baselined
        );
        // Another rule's failure is still new.
        let b_only = Verdict::Fail {
            failures: vec![failure("step 2", &["b.two"])],
        };
        assert_eq!(held_against(&rules, &b_only, &[], &[&racy]).0, Mark::Fail);
        // A scenario that no longer applies leaves it stale, race or not.
        let gone = Verdict::NotApplicable { reason: "r".into() };
        assert_eq!(held_against(&rules, &gone, &[], &[&racy]).0, Mark::Stale);
        // An entry for the whole scenario likewise stands through a pass.
        let whole = KnownFailure { rule: None, ..racy };
        assert_eq!(
            held_against(&rules, &Verdict::Pass, &[], &[&whole]).0,
            Mark::Baselined
        );
        let steady = KnownFailure {
            intermittent: false,
            ..whole
        };
        assert_eq!(
            held_against(&rules, &Verdict::Pass, &[], &[&steady]).0,
            Mark::Stale
        );
    }

    #[test]
    fn a_trial_with_a_known_failure_of_one_rule_fails_naming_the_other_rule_that_failed() {
        let root = bundled_scenarios();
        let loaded = scenario::load(&root, &root.join("stdio/stderr-tail-kept.toml")).unwrap();
        let known = entry(&loaded.name, "stdio.exit.error-text");
        let both = Verdict::Fail {
            failures: vec![
                failure("step 2", &["stdio.exit.error-text"]),
                failure("step 1", &["stdio.stderr.tail"]),
            ],
        };
        let error = against_baseline(&loaded, &both, &[], &[&known]).unwrap_err();
        assert!(
            error.starts_with(
                "stdio/stderr-tail-kept fails rule stdio.stderr.tail (not in the baseline)\n  step 1 (stdio.stderr.tail)"
            ),
            "{error}"
        );
        assert!(!error.contains("step 2"), "{error}");
        let one = Verdict::Fail {
            failures: vec![failure("step 2", &["stdio.exit.error-text"])],
        };
        assert_eq!(against_baseline(&loaded, &one, &[], &[&known]), Ok(()));
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
                intermittent: false,
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
