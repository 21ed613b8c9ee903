//! Verdicts: one per scenario and profile, from an outcome and the scenario's `[expect]`.

use crate::runner::{self, check::Failure, MockLauncher, Outcome};
use crate::scenario::LoadedScenario;
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
    /// The profile.
    pub profile: &'static str,
    /// The rules it checks.
    pub rules: Vec<String>,
    /// The verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Wall time of the run in milliseconds.
    pub millis: u128,
}

/// Judges an outcome.
pub fn judge(scenario: &LoadedScenario, outcome: &Outcome) -> Verdict {
    if let Some(reason) = &outcome.harness_fault {
        return Verdict::HarnessFault { reason: outcome.redact(reason) };
    }
    if let Some(step) = outcome.steps.iter().find(|s| matches!(&s.result, Err(e) if e.kind == "harness")) {
        let reason = step.result.as_ref().err().map(|e| e.text.clone()).unwrap_or_default();
        return Verdict::HarnessFault { reason: format!("step {}: {reason}", step.number) };
    }
    let failures = runner::check::check(&scenario.scenario.expect, &scenario.scenario.server, outcome);
    if failures.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail { failures }
    }
}

/// Runs one scenario under one profile and judges it.
pub fn run_one(scenario: &LoadedScenario, profile: Profile, launcher: &MockLauncher, hooks: &TestHooks) -> (ScenarioResult, Outcome) {
    let started = std::time::Instant::now();
    let outcome = runner::run(scenario, profile, launcher, hooks);
    let verdict = judge(scenario, &outcome);
    let result = ScenarioResult {
        scenario: scenario.name.clone(),
        profile: profile.name(),
        rules: scenario.scenario.rules.clone(),
        verdict,
        millis: started.elapsed().as_millis(),
    };
    (result, outcome)
}

/// Runs every scenario under each of `profiles` it applies to, several at a time, and
/// returns the results in scenario order.
pub fn run_all(scenarios: &[LoadedScenario], profiles: &[Profile], launcher: &MockLauncher) -> Vec<ScenarioResult> {
    let jobs: Vec<(&LoadedScenario, Profile)> = scenarios
        .iter()
        .flat_map(|s| s.profiles().into_iter().filter(|p| profiles.contains(p)).map(move |p| (s, p)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    // Runs mostly wait on servers and bounds, so more workers than cores pay off.
    let workers = std::thread::available_parallelism().map(|n| n.get() * 4).unwrap_or(8).min(jobs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some((scenario, profile)) = jobs.get(i) else { break };
                let (result, _) = run_one(scenario, *profile, launcher, &TestHooks::default());
                results.lock().unwrap_or_else(|e| e.into_inner()).push((i, result));
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
