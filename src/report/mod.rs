//! Reports of a run: the terminal table, JSON, JUnit XML and the static HTML folder.

pub mod evidence;
pub mod html;
pub mod json;
pub mod junit;
pub mod table;

use crate::verdict::{ScenarioResult, Verdict};

/// The clients a run judged, each once, in order (`mcp-refclient 0.1.0`).
pub fn clients(results: &[ScenarioResult]) -> Vec<&str> {
    let mut clients: Vec<&str> = Vec::new();
    for result in results {
        if !clients.contains(&result.client.as_str()) {
            clients.push(&result.client);
        }
    }
    clients
}

/// Counts of a run's verdicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Runs that passed.
    pub passed: usize,
    /// Runs that failed.
    pub failed: usize,
    /// Runs the harness could not judge.
    pub harness_faults: usize,
    /// Scenarios the client cannot express (never counted as passed).
    pub not_applicable: usize,
}

impl Summary {
    /// Counts the verdicts of `results`.
    pub fn of(results: &[ScenarioResult]) -> Summary {
        let mut summary = Summary::default();
        for result in results {
            match result.verdict {
                Verdict::Pass => summary.passed += 1,
                Verdict::Fail { .. } => summary.failed += 1,
                Verdict::HarnessFault { .. } => summary.harness_faults += 1,
                Verdict::NotApplicable { .. } => summary.not_applicable += 1,
            }
        }
        summary
    }
}

/// The run by tier (see `tier` in the rule registry): for each tier, the judged scenarios
/// naming a rule of it that passed, of those judged, then the scenarios not applicable —
/// `spec 51/54 · robustness 80/121 · profile 9/9 · n/a 12`. A scenario naming rules of
/// several tiers counts under each, by its rules of that tier alone (a failure of a
/// robustness rule does not fail its specification rule); a rule that does not bind the
/// client is left out; a tier no judged scenario names is left out.
pub fn tiers_line(results: &[ScenarioResult]) -> String {
    use crate::rules::{self, Tier};
    let mut parts = Vec::new();
    for tier in Tier::ALL {
        let (mut passed, mut judged) = (0, 0);
        for result in results {
            let of_tier: Vec<&String> = result
                .rules
                .iter()
                .filter(|id| rules::find(id).is_some_and(|rule| rule.tier == Some(tier)))
                .filter(|id| !result.not_held.iter().any(|n| &n.rule == *id))
                .collect();
            if of_tier.is_empty() {
                continue;
            }
            match &result.verdict {
                Verdict::Pass => (passed, judged) = (passed + 1, judged + 1),
                Verdict::Fail { failures } => {
                    judged += 1;
                    let failed = |id: &String| {
                        failures
                            .iter()
                            .any(|f| f.rules.is_empty() || f.rules.contains(id))
                    };
                    if !of_tier.iter().any(|id| failed(id)) {
                        passed += 1;
                    }
                }
                Verdict::NotApplicable { .. } | Verdict::HarnessFault { .. } => {}
            }
        }
        if judged > 0 {
            let name = match tier {
                Tier::Specification => "spec",
                other => other.name(),
            };
            parts.push(format!("{name} {passed}/{judged}"));
        }
    }
    parts.push(format!("n/a {}", Summary::of(results).not_applicable));
    parts.join(" · ")
}
