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
