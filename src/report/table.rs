//! The human table on the terminal.

use super::Summary;
use crate::verdict::{ScenarioResult, Verdict};
use std::fmt::Write;

/// Renders the table: one row per scenario run, failures with expected against actual,
/// and a summary line.
pub fn render(results: &[ScenarioResult]) -> String {
    let width = results.iter().map(|r| r.scenario.len()).max().unwrap_or(8).max(8);
    let mut out = String::new();
    let _ = writeln!(out, "{:<width$}  {:<8}  {:<6}  {:>6}  rules", "scenario", "profile", "result", "ms");
    for result in results {
        let verdict = match &result.verdict {
            Verdict::Pass => "pass",
            Verdict::Fail { .. } => "FAIL",
            Verdict::HarnessFault { .. } => "HARNESS",
        };
        let _ = writeln!(
            out,
            "{:<width$}  {:<8}  {:<6}  {:>6}  {}",
            result.scenario,
            result.profile,
            verdict,
            result.millis,
            result.rules.join(", ")
        );
        match &result.verdict {
            Verdict::Pass => {}
            Verdict::Fail { failures } => {
                for failure in failures {
                    let _ = writeln!(out, "    {}", failure.what);
                    let _ = writeln!(out, "      expected: {}", failure.expected);
                    let _ = writeln!(out, "      actual:   {}", failure.actual);
                }
            }
            Verdict::HarnessFault { reason } => {
                let _ = writeln!(out, "    harness fault (not the client's): {reason}");
            }
        }
    }
    let summary = Summary::of(results);
    let _ = write!(out, "\n{} passed, {} failed", summary.passed, summary.failed);
    if summary.harness_faults > 0 {
        let _ = write!(out, ", {} harness faults", summary.harness_faults);
    }
    out.push('\n');
    out
}
