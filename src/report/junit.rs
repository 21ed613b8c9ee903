//! The JUnit XML report: one test suite per profile, one test case per scenario.

use crate::verdict::{ScenarioResult, Verdict};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// Text a client, a server or a file controls, as the report holds it: one line (a newline
/// in it cannot start a line a CI page shows as the report's), its control characters shown
/// escaped as on the terminal (XML 1.0 has no form for most of them, not even a character
/// reference).
fn one_line(text: &str) -> String {
    crate::terminal::line(text)
}

/// Renders the JUnit XML report.
pub fn render(results: &[ScenarioResult]) -> String {
    let mut report = Report::new(one_line(&format!(
        "mcp-conformance: {}",
        super::clients(results).join(", ")
    )));
    let mut profiles: Vec<&str> = results.iter().map(|r| r.profile).collect();
    profiles.dedup();
    profiles.sort_unstable();
    profiles.dedup();
    for profile in profiles {
        let mut suite = TestSuite::new(profile);
        for result in results.iter().filter(|r| r.profile == profile) {
            let status = match &result.verdict {
                Verdict::Pass => TestCaseStatus::success(),
                Verdict::Fail { failures } => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    let text: Vec<String> =
                        failures.iter().map(|f| one_line(&f.to_string())).collect();
                    status.set_message(
                        failures
                            .first()
                            .map(|f| one_line(&f.label()))
                            .unwrap_or_default(),
                    );
                    status.set_description(text.join("\n"));
                    status
                }
                Verdict::HarnessFault { reason } => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                    status.set_message("harness fault");
                    status.set_description(one_line(reason));
                    status
                }
                Verdict::NotApplicable { reason } => {
                    let mut status = TestCaseStatus::skipped();
                    status.set_message(one_line(&format!("not applicable: {reason}")));
                    status
                }
            };
            let mut case = TestCase::new(one_line(&result.scenario), status);
            case.set_classname(result.rules.join(" "));
            case.extra
                .insert("client".into(), one_line(&result.client).into());
            case.set_time(Duration::from_millis(
                u64::try_from(result.millis).unwrap_or(u64::MAX),
            ));
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot render the JUnit report: {e} -->"))
}
