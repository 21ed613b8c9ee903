//! Reports of a run: the terminal table, JSON and JUnit XML.

pub mod json;
pub mod junit;
pub mod table;

use crate::verdict::{ScenarioResult, Verdict};

/// Counts of a run's verdicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Runs that passed.
    pub passed: usize,
    /// Runs that failed.
    pub failed: usize,
    /// Runs the harness could not judge.
    pub harness_faults: usize,
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
            }
        }
        summary
    }
}
