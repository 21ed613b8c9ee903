//! The human table on the terminal.

use super::Summary;
use crate::verdict::{ScenarioResult, Verdict};
use std::fmt::Write;

/// Text a client, a server or a file controls, as one line of the table: a newline or an
/// escape in a driver's error text or hello name cannot start a line of its own (a forged
/// `pass` row or summary).
fn one_line(text: &str) -> String {
    crate::terminal::line(text)
}

/// Renders the table: one row per scenario run, failures with expected against actual,
/// and a summary line.
pub fn render(results: &[ScenarioResult]) -> String {
    let width = results
        .iter()
        .map(|r| r.scenario.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let mut out = String::new();
    let clients: Vec<String> = super::clients(results).into_iter().map(one_line).collect();
    let _ = writeln!(out, "client: {}", clients.join(", "));
    let _ = writeln!(
        out,
        "{:<width$}  {:<8}  {:<6}  {:>6}  rules",
        "scenario", "profile", "result", "ms"
    );
    for result in results {
        let verdict = match &result.verdict {
            Verdict::Pass => "pass",
            Verdict::Fail { .. } => "FAIL",
            Verdict::HarnessFault { .. } => "HARNESS",
            Verdict::NotApplicable { .. } => "n/a",
        };
        let _ = writeln!(
            out,
            "{:<width$}  {:<8}  {:<6}  {:>6}  {}",
            // A file name may hold a newline: one escaped line, like everything else printed.
            one_line(&result.scenario),
            result.profile,
            verdict,
            result.millis,
            result.rules.join(", ")
        );
        match &result.verdict {
            Verdict::Pass => {}
            Verdict::Fail { failures } => {
                for failure in failures {
                    let _ = writeln!(out, "    {}", one_line(&failure.label()));
                    let _ = writeln!(out, "      expected: {}", one_line(&failure.expected));
                    let _ = writeln!(out, "      actual:   {}", one_line(&failure.actual));
                }
            }
            Verdict::HarnessFault { reason } => {
                let _ = writeln!(
                    out,
                    "    harness fault (not the client's): {}",
                    one_line(reason)
                );
            }
            Verdict::NotApplicable { reason } => {
                let _ = writeln!(out, "    not applicable: {}", one_line(reason));
            }
        }
        for rule in &result.not_held {
            let _ = writeln!(
                out,
                "    not judged on {}: {}",
                rule.rule,
                one_line(&rule.reason)
            );
        }
    }
    let summary = Summary::of(results);
    let _ = write!(
        out,
        "\n{} passed, {} failed",
        summary.passed, summary.failed
    );
    if summary.not_applicable > 0 {
        let _ = write!(out, ", {} not applicable", summary.not_applicable);
    }
    if summary.harness_faults > 0 {
        let _ = write!(out, ", {} harness faults", summary.harness_faults);
    }
    let _ = write!(out, "\nby tier: {}", super::tiers_line(results));
    out.push('\n');
    out
}

/// The profile × rule-group matrix: for each group, how many of its scenario runs passed
/// under each profile (`-` where no scenario of the group applies to the profile).
pub fn render_matrix(results: &[ScenarioResult]) -> String {
    let mut profiles: Vec<&str> = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    for result in results {
        if !profiles.contains(&result.profile) {
            profiles.push(result.profile);
        }
        for rule in &result.rules {
            let group = rule.split('.').next().unwrap_or(rule).to_string();
            if !groups.contains(&group) {
                groups.push(group);
            }
        }
    }
    groups.sort();
    let mut out = String::new();
    let _ = write!(out, "{:<12}", "group");
    for profile in &profiles {
        let _ = write!(out, "  {profile:>9}");
    }
    out.push('\n');
    for group in &groups {
        let _ = write!(out, "{group:<12}");
        for profile in &profiles {
            let runs: Vec<&ScenarioResult> = results
                .iter()
                .filter(|r| {
                    r.profile == *profile
                        && r.rules
                            .iter()
                            .any(|rule| rule.split('.').next() == Some(group.as_str()))
                })
                .collect();
            let passed = runs.iter().filter(|r| r.verdict == Verdict::Pass).count();
            let cell = if runs.is_empty() {
                "-".to_string()
            } else {
                format!("{passed}/{}", runs.len())
            };
            let _ = write!(out, "  {cell:>9}");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::check::Failure;

    fn result(scenario: &str, profile: &'static str, rules: &[&str], pass: bool) -> ScenarioResult {
        let verdict = if pass {
            Verdict::Pass
        } else {
            Verdict::Fail {
                failures: vec![Failure {
                    what: "step 1".into(),
                    expected: "success".into(),
                    actual: "error".into(),
                    rules: Vec::new(),
                }],
            }
        };
        ScenarioResult {
            scenario: scenario.into(),
            client: "mcp-refclient 0.1.0".into(),
            profile,
            rules: rules.iter().map(|r| r.to_string()).collect(),
            not_held: Vec::new(),
            verdict,
            millis: 1,
            waited_ms: 0,
            note: None,
            evidence: None,
        }
    }

    #[test]
    fn the_matrix_counts_passes_per_group_and_profile() {
        let results = [
            result(
                "a",
                "strict",
                &["stdio.ping.answered", "timeouts.call.bounded"],
                true,
            ),
            result(
                "a",
                "kova",
                &["stdio.ping.answered", "timeouts.call.bounded"],
                false,
            ),
            result("b", "strict", &["stdio.banner.skipped"], true),
        ];
        let matrix = render_matrix(&results);
        assert!(
            matrix.contains("stdio               2/2        0/1"),
            "{matrix}"
        );
        assert!(
            matrix.contains("timeouts            1/1        0/1"),
            "{matrix}"
        );
    }

    #[test]
    fn a_failure_shows_expected_and_actual_and_the_summary_counts_it() {
        let table = render(&[result("a", "strict", &["stdio.ping.answered"], false)]);
        assert!(
            table.contains("expected: success") && table.contains("actual:   error"),
            "{table}"
        );
        assert!(
            table.ends_with("0 passed, 1 failed\nby tier: spec 0/1 · n/a 0\n"),
            "{table}"
        );
        assert!(
            table.starts_with("client: mcp-refclient 0.1.0\n"),
            "{table}"
        );
    }

    #[test]
    fn a_scenario_the_client_cannot_express_shows_its_reason_and_is_no_pass() {
        let mut na = result("a", "strict", &["stdio.ping.answered"], true);
        na.verdict = Verdict::NotApplicable {
            reason: "needs `exited`".into(),
        };
        let table = render(&[na, result("b", "strict", &["stdio.ping.answered"], true)]);
        assert!(
            table.contains("n/a") && table.contains("not applicable: needs `exited`"),
            "{table}"
        );
        assert!(
            table.ends_with("1 passed, 0 failed, 1 not applicable\nby tier: spec 1/1 · n/a 1\n"),
            "{table}"
        );
    }

    #[test]
    fn the_tiers_line_keeps_specification_robustness_and_profile_apart() {
        let results = [
            result("a", "strict", &["stdio.ping.answered"], true),
            result(
                "b",
                "strict",
                &["lifecycle.initialized.undeliverable"],
                false,
            ),
            result(
                "c",
                "strict",
                &["stdio.ping.answered", "lifecycle.initialized.undeliverable"],
                true,
            ),
            result("d", "strict", &["stdio.exit.error-text"], true),
        ];
        assert_eq!(
            crate::report::tiers_line(&results),
            "spec 2/2 · robustness 1/2 · profile 1/1 · n/a 0"
        );
    }

    #[test]
    fn a_newline_in_a_client_name_or_error_text_forges_no_line() {
        let mut forged = result("a", "strict", &["stdio.ping.answered"], false);
        forged.client = "evil\npass  stdio/x  FORGED-LINE".into();
        forged.verdict = Verdict::Fail {
            failures: vec![Failure {
                what: "step 1\n\n9 passed, 0 failed".into(),
                expected: "success".into(),
                actual: "error\r\x1b[2Kpass".into(),
                rules: Vec::new(),
            }],
        };
        let table = render(&[forged]);
        assert!(
            table
                .lines()
                .all(|l| !l.starts_with("pass") && !l.starts_with("9 passed")),
            "{table}"
        );
        assert!(table.contains("evil\\npass"), "{table}");
        assert!(
            !table.chars().any(|c| c.is_control() && c != '\n'),
            "{table}"
        );
    }
}
