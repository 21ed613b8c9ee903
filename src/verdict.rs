//! Verdicts: one per scenario and profile, from an outcome and the scenario's `[expect]`.

use crate::cut::{self, ClientUnderTest, Described};
use crate::report::evidence::Evidence;
use crate::runner::auth_flow::FLOW_CREDENTIAL;
use crate::runner::{self, check::Failure, Judged, MockLauncher, Outcome, RunOptions};
use crate::scenario::{Expectations, LoadedScenario};
use mcp_refclient::{Profile, TestHooks};
use serde::Serialize;

/// How a scenario fared under one profile.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Every expectation held.
    Pass,
    /// Some expectation did not hold.
    Fail {
        /// What did not hold, expected against actual.
        failures: Vec<Failure>,
    },
    /// The scenario needs something the client cannot express (a transport, a capability):
    /// it says nothing about the client, and is never counted as a pass.
    NotApplicable {
        /// What the scenario needs that the client did not declare.
        reason: String,
    },
    /// The harness failed; says nothing about the client.
    HarnessFault {
        /// What went wrong.
        reason: String,
    },
}

/// One scenario run's result.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioResult {
    /// The scenario's name (`stdio/banner-before-initialize`).
    pub scenario: String,
    /// The client under test (`mcp-refclient 0.1.0`).
    pub client: String,
    /// The profile.
    pub profile: &'static str,
    /// The rules it checks.
    pub rules: Vec<String>,
    /// Rules of the scenario that do not bind the client (another profile's promise): the
    /// scenario was judged on its other rules, without the expectations set apart for these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_held: Vec<NotHeld>,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Wall time of the run in milliseconds.
    pub millis: u128,
    /// Of `millis`, how long the scenario waited for its place beside the others (a driver
    /// process's start included); the rest is bounded by [`runner::bound::wall_bound`].
    #[serde(skip_serializing_if = "is_zero")]
    pub waited_ms: u128,
    /// What the runner did to the client's process after the run, when it had to (a
    /// reusable driver replaced by a fresh one, and why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The run's transcript, steps and log, redacted, for the HTML report (none for a
    /// scenario that did not run).
    #[serde(skip)]
    pub evidence: Option<crate::report::evidence::Evidence>,
}

/// A rule of a scenario the client is not judged on, and why.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct NotHeld {
    /// The rule.
    pub rule: String,
    /// Why it does not bind the client.
    pub reason: String,
}

/// Judges an outcome: the reference client on every expectation, any other client on the
/// portable ones; each failure names the rules it counts against. `not_held` are rules of
/// the scenario the client is not judged on: their `[expect.by_rule]` tables are left out.
pub fn judge(scenario: &LoadedScenario, outcome: &Outcome, not_held: &[NotHeld]) -> Verdict {
    let held: Vec<String> = scenario
        .scenario
        .rules
        .iter()
        .filter(|rule| !not_held.iter().any(|n| &n.rule == *rule))
        .cloned()
        .collect();
    match judge_unattributed(scenario, outcome, &held) {
        Verdict::Fail { mut failures } => {
            // A secret the run handed the client (checked in every scenario) is the
            // business of the redaction rule it falls under, where the scenario names it.
            failures.retain_mut(|failure| {
                let named = secret_rules(failure)
                    .iter()
                    .find(|rule| scenario.scenario.rules.iter().any(|r| r == *rule));
                match named {
                    Some(rule) => {
                        failure.rules = vec![rule.to_string()];
                        held.iter().any(|r| r == rule)
                    }
                    None => true,
                }
            });
            if failures.is_empty() {
                return Verdict::Pass;
            }
            let general = general_rules(scenario, &held);
            for failure in failures.iter_mut().filter(|f| f.rules.is_empty()) {
                failure.rules = general.clone();
            }
            Verdict::Fail { failures }
        }
        other => other,
    }
}

/// The redaction rules a failed secret check falls under, the closest first: a key-like
/// part of the URL is `redaction.key-like-parts`' (then `redaction.origin-only`'s, an error
/// naming the server by its origin alone: promises of yoagent's document), a credential of
/// the authorization flow `auth.oauth.credentials-redacted`' (then, at a revision that rule
/// does not reach, `redaction.credentials`'), a header value or a token
/// `redaction.credentials`'.
fn secret_rules(failure: &Failure) -> &'static [&'static str] {
    match failure.what.as_str() {
        "secret" if failure.expected.contains("a key-like part of the URL") => {
            &["redaction.key-like-parts", "redaction.origin-only"]
        }
        "secret" if failure.expected.contains(FLOW_CREDENTIAL) => &FLOW_REDACTION,
        "secret" => &["redaction.credentials"],
        _ => &[],
    }
}

/// The rules a leak of the authorization flow's credentials counts against, the closest
/// first (`redaction.credentials` where the scenario's revision predates the other).
const FLOW_REDACTION: [&str; 2] = ["auth.oauth.credentials-redacted", "redaction.credentials"];

/// The rules an expectation that names none counts against: every rule held, but in a
/// scenario with an authorization server the flow's redaction rule is there for the leaks
/// of its credentials alone, unless it is all the scenario checks.
fn general_rules(scenario: &LoadedScenario, held: &[String]) -> Vec<String> {
    if scenario.scenario.server.auth.is_none() {
        return held.to_vec();
    }
    let others: Vec<String> = held
        .iter()
        .filter(|rule| !FLOW_REDACTION.contains(&rule.as_str()))
        .cloned()
        .collect();
    if others.is_empty() {
        held.to_vec()
    } else {
        others
    }
}

fn judge_unattributed(scenario: &LoadedScenario, outcome: &Outcome, held: &[String]) -> Verdict {
    if let Some(reason) = &outcome.harness_fault {
        return Verdict::HarnessFault {
            reason: outcome.redact(reason),
        };
    }
    if let Some(fault) = &outcome.client_fault {
        let failure = Failure {
            what: "client".into(),
            expected: "a client that answers every step as the protocol says".into(),
            actual: outcome.redact(fault),
            rules: Vec::new(),
        };
        return Verdict::Fail {
            failures: vec![failure],
        };
    }
    if let Some(step) = outcome
        .steps
        .iter()
        .find(|s| matches!(&s.result, Err(e) if e.kind == "harness"))
    {
        let reason = step
            .result
            .as_ref()
            .err()
            .map(|e| e.text.clone())
            .unwrap_or_default();
        return Verdict::HarnessFault {
            reason: format!("step {}: {reason}", step.number),
        };
    }
    let expect = match outcome.judged {
        Judged::Everything => scenario.scenario.expect.clone(),
        Judged::Portable => scenario.scenario.expect.portable(),
    };
    let mut failures = runner::check::check(&expect, &scenario.scenario.server, outcome);
    if let (Judged::Everything, Some(reference)) =
        (outcome.judged, &scenario.scenario.expect.reference)
    {
        // The reference client's own choices, on top; what the rest checks is not said twice.
        let part = Expectations {
            script_completed: false,
            ..(**reference).clone()
        };
        for failure in runner::check::check(&part, &scenario.scenario.server, outcome) {
            if !failures.contains(&failure) {
                failures.push(failure);
            }
        }
    }
    for (rule, table) in &scenario.scenario.expect.by_rule {
        if !held.contains(rule) {
            continue;
        }
        // What this rule alone asks; what the rest checks (a hung step, a secret handed to
        // the client) is not said twice.
        let table = match outcome.judged {
            Judged::Everything => table.clone(),
            Judged::Portable => table.portable(),
        };
        let part = Expectations {
            script_completed: false,
            ..table
        };
        for mut failure in runner::check::check(&part, &scenario.scenario.server, outcome) {
            if !failures.iter().any(|f| same_check(f, &failure)) {
                failure.rules = vec![rule.clone()];
                failures.push(failure);
            }
        }
    }
    if failures.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail { failures }
    }
}

fn same_check(a: &Failure, b: &Failure) -> bool {
    (&a.what, &a.expected, &a.actual) == (&b.what, &b.expected, &b.actual)
}

/// Runs one scenario with the reference client under one profile and judges it.
pub fn run_one(
    scenario: &LoadedScenario,
    profile: Profile,
    launcher: &MockLauncher,
    hooks: &TestHooks,
) -> (ScenarioResult, Outcome) {
    let started = std::time::Instant::now();
    let outcome = runner::run(scenario, profile, launcher, hooks);
    let verdict = judge(scenario, &outcome, &[]);
    let evidence = Evidence::of(&outcome, &verdict, &scenario.scenario.expect.secrets());
    let mut result = result(scenario, &outcome.client, verdict, started);
    result.evidence = Some(evidence);
    result.waited_ms = outcome.waited.as_millis();
    (result, outcome)
}

/// Whether the client `described` is judged on `scenario`: it can express what the scenario
/// needs, and (unless `options` hold it to every rule) some rule of the scenario binds its
/// profile by its tier ([`cut::sources::binds`]); else why not. The rules that do not bind
/// it come back: the scenario is judged on the others, provided each of these has its
/// expectations set apart (`[expect.by_rule."RULE"]`), so none of them is asked of the
/// client. `run --client`, the matrix and the Rust harness all judge through this one check.
pub fn applicable(
    described: &Described,
    scenario: &LoadedScenario,
    options: RunOptions,
) -> Result<Vec<NotHeld>, String> {
    cut::can_express(described, &cut::needs::of(&scenario.scenario))?;
    if options.every_rule {
        return Ok(Vec::new());
    }
    let rules = &scenario.scenario.rules;
    let not_held: Vec<NotHeld> = rules
        .iter()
        .filter_map(|rule| {
            let reason = cut::sources::binds(&described.profile, rule).err()?;
            Some(NotHeld {
                rule: rule.clone(),
                reason,
            })
        })
        .collect();
    let set_apart = |n: &NotHeld| scenario.scenario.expect.by_rule.contains_key(&n.rule);
    match not_held.first() {
        None => Ok(not_held),
        Some(_) if not_held.len() < rules.len() && not_held.iter().all(set_apart) => Ok(not_held),
        Some(first) => Err(first.reason.clone()),
    }
}

/// Runs one scenario with any client under test and judges it; a scenario the client
/// cannot express, or whose rules do not bind its profile, is not applicable, and does not
/// run (no outcome).
pub fn run_client_one<A: ClientUnderTest + 'static>(
    scenario: &LoadedScenario,
    adapter: A,
    launcher: &MockLauncher,
    options: RunOptions,
) -> (ScenarioResult, Option<Outcome>) {
    let started = std::time::Instant::now();
    let described = adapter.describe();
    let not_held = match applicable(&described, scenario, options) {
        Ok(not_held) => not_held,
        Err(reason) => {
            return (
                result(
                    scenario,
                    &described,
                    Verdict::NotApplicable { reason },
                    started,
                ),
                None,
            )
        }
    };
    let outcome = runner::run_client(scenario, adapter, launcher, options);
    let verdict = judge(scenario, &outcome, &not_held);
    let evidence = Evidence::of(&outcome, &verdict, &scenario.scenario.expect.secrets());
    let mut result = result(scenario, &described, verdict, started);
    result.not_held = not_held;
    result.evidence = Some(evidence);
    result.note = outcome.note.clone();
    result.waited_ms = outcome.waited.as_millis();
    (result, Some(outcome))
}

fn result(
    scenario: &LoadedScenario,
    client: &Described,
    verdict: Verdict,
    started: std::time::Instant,
) -> ScenarioResult {
    ScenarioResult {
        scenario: scenario.name.clone(),
        client: client.label(),
        profile: Profile::from_name(&client.profile)
            .map(Profile::name)
            .unwrap_or("strict"),
        rules: scenario.scenario.rules.clone(),
        not_held: Vec::new(),
        verdict,
        millis: started.elapsed().as_millis(),
        waited_ms: 0,
        note: None,
        evidence: None,
    }
}

/// Runs every scenario under each of `profiles` it applies to with the reference client,
/// several at a time, and returns the results in scenario order.
pub fn run_all(
    scenarios: &[LoadedScenario],
    profiles: &[Profile],
    launcher: &MockLauncher,
) -> Vec<ScenarioResult> {
    let jobs: Vec<(&LoadedScenario, Profile)> = scenarios
        .iter()
        .flat_map(|s| {
            s.profiles()
                .into_iter()
                .filter(|p| profiles.contains(p))
                .map(move |p| (s, p))
        })
        .collect();
    let workers = RunOptions::default().workers;
    let least_ms =
        |(scenario, _): &(&LoadedScenario, Profile)| runner::estimate::least_ms(&scenario.scenario);
    in_parallel_longest_first(&jobs, workers, least_ms, |(scenario, profile)| {
        run_one(scenario, *profile, launcher, &TestHooks::default()).0
    })
}

/// Runs every scenario of the client's profile with clients from `factory` (one per
/// scenario), several at a time, and returns the results in scenario order.
pub fn run_all_clients<A, F>(
    scenarios: &[LoadedScenario],
    factory: F,
    launcher: &MockLauncher,
    options: RunOptions,
) -> Vec<ScenarioResult>
where
    A: ClientUnderTest + 'static,
    F: Fn() -> A + Sync,
{
    let described = factory().describe();
    run_all_clients_for(scenarios, &described, |_| factory(), launcher, options)
}

/// [`run_all_clients`], each scenario's client made for it by `factory` (a pooled driver
/// shares a process unless the scenario is about the process); `described` is the
/// clients' hello.
pub fn run_all_clients_for<A, F>(
    scenarios: &[LoadedScenario],
    described: &Described,
    factory: F,
    launcher: &MockLauncher,
    options: RunOptions,
) -> Vec<ScenarioResult>
where
    A: ClientUnderTest + 'static,
    F: Fn(&LoadedScenario) -> A + Sync,
{
    let profile = Profile::from_name(&described.profile).unwrap_or_default();
    let jobs: Vec<&LoadedScenario> = scenarios
        .iter()
        .filter(|s| s.profiles().contains(&profile))
        .collect();
    let least_ms = |scenario: &&LoadedScenario| runner::estimate::least_ms(&scenario.scenario);
    in_parallel_longest_first(&jobs, options.workers, least_ms, |scenario| {
        run_client_one(scenario, factory(scenario), launcher, options).0
    })
}

/// Runs `job` over `jobs` on `workers` threads; results in the jobs' order.
pub(crate) fn in_parallel<J: Sync, R: Send>(
    jobs: &[J],
    workers: usize,
    job: impl Fn(&J) -> R + Sync,
) -> Vec<R> {
    in_parallel_longest_first(jobs, workers, |_| 0, job)
}

/// [`in_parallel`], the jobs started longest first (by `least_ms`, see
/// [`runner::estimate`]): a long scenario started last would set the run's wall time. A job
/// that mostly waits (at least [`runner::estimate::MOSTLY_WAITING_MS`]) gets a thread of its
/// own beside the `workers`, which share the rest.
pub fn in_parallel_longest_first<J: Sync, R: Send>(
    jobs: &[J],
    workers: usize,
    least_ms: impl Fn(&J) -> u64,
    job: impl Fn(&J) -> R + Sync,
) -> Vec<R> {
    let order = runner::estimate::longest_first(jobs, &least_ms);
    let waiting = order
        .iter()
        .take_while(|&&i| least_ms(&jobs[i]) >= runner::estimate::MOSTLY_WAITING_MS)
        .count();
    let (waiting, shared) = order.split_at(waiting);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    let keep = |i: usize, result: R| {
        results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((i, result))
    };
    let workers = workers.clamp(1, shared.len().max(1));
    std::thread::scope(|scope| {
        for &i in waiting {
            let (job, keep) = (&job, &keep);
            scope.spawn(move || keep(i, job(&jobs[i])));
        }
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(&i) =
                    shared.get(next.fetch_add(1, std::sync::atomic::Ordering::SeqCst))
                {
                    keep(i, job(&jobs[i]));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

fn is_zero(ms: &u128) -> bool {
    *ms == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(path: &str) -> LoadedScenario {
        let root = crate::harness::bundled_scenarios();
        crate::scenario::load(&root, &root.join(path)).unwrap()
    }

    /// A client that can express everything `scenario` needs, under `profile`.
    fn able(scenario: &LoadedScenario, profile: &str) -> crate::cut::Described {
        let needs = crate::cut::needs::of(&scenario.scenario);
        crate::cut::Described {
            name: "able".into(),
            version: "0".into(),
            transports: needs.transports,
            capabilities: needs.capabilities,
            profile: profile.into(),
        }
    }

    #[test]
    fn a_leaked_secret_counts_against_the_redaction_rule_closest_to_its_kind() {
        let failure = |source: &str| Failure {
            what: "secret".into(),
            expected: format!("no trace of {source} in what the client produced"),
            actual: "found in a DEBUG log line".into(),
            rules: Vec::new(),
        };
        let flow = format!("{FLOW_CREDENTIAL} authorization code");
        assert_eq!(
            secret_rules(&failure(&flow)),
            ["auth.oauth.credentials-redacted", "redaction.credentials"]
        );
        assert_eq!(
            secret_rules(&failure("a key-like part of the URL")),
            ["redaction.key-like-parts", "redaction.origin-only"]
        );
        assert_eq!(
            secret_rules(&failure("the value of header `x-api-key`")),
            ["redaction.credentials"]
        );
        let other = Failure {
            what: "step 2".into(),
            ..failure(&flow)
        };
        assert!(secret_rules(&other).is_empty());
    }

    #[test]
    fn a_scenario_naming_another_profiles_promise_is_judged_on_its_other_rules_where_that_promise_is_set_apart(
    ) {
        let portable = crate::runner::RunOptions::portable();
        // Set apart: a strict or kova client is judged on the stderr tail alone.
        let tail = load("stdio/stderr-tail-kept.toml");
        for profile in ["strict", "kova"] {
            let not_held = applicable(&able(&tail, profile), &tail, portable).unwrap();
            assert_eq!(
                not_held.iter().map(|n| n.rule.as_str()).collect::<Vec<_>>(),
                ["stdio.exit.error-text"],
                "{profile}"
            );
            assert!(not_held[0]
                .reason
                .contains("profile-tier promise of yoagent's"));
        }
        assert_eq!(
            applicable(&able(&tail, "yoagent"), &tail, portable),
            Ok(vec![])
        );
        // Not set apart: not applicable as a whole, with the promise's reason.
        let bound = load("timeouts/client-bound-set.toml");
        let why = applicable(&able(&bound, "strict"), &bound, portable).unwrap_err();
        assert!(
            why.contains("rule `timeouts.client.configurable` is a profile-tier promise"),
            "{why}"
        );
        // Every rule of its own profile's promises: none held, not applicable.
        let exit_text = load("stdio/exit-error-text.toml");
        assert!(applicable(&able(&exit_text, "kova"), &exit_text, portable).is_err());
        // The reference client is held to every rule.
        assert_eq!(
            applicable(&able(&bound, "strict"), &bound, Default::default()),
            Ok(vec![])
        );
    }
}
