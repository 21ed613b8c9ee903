//! The JUnit XML report: one test suite per profile, one test case per scenario.

use crate::verdict::{ScenarioResult, Verdict};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// Renders the JUnit XML report.
pub fn render(results: &[ScenarioResult]) -> String {
    let mut report = Report::new(format!(
        "mcp-conformance: {}",
        super::clients(results).join(", ")
    ));
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
                    let text: Vec<String> = failures.iter().map(ToString::to_string).collect();
                    status
                        .set_message(failures.first().map(|f| f.what.clone()).unwrap_or_default());
                    status.set_description(text.join("\n"));
                    status
                }
                Verdict::HarnessFault { reason } => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                    status.set_message("harness fault");
                    status.set_description(reason.clone());
                    status
                }
                Verdict::NotApplicable { reason } => {
                    let mut status = TestCaseStatus::skipped();
                    status.set_message(format!("not applicable: {reason}"));
                    status
                }
            };
            let mut case = TestCase::new(result.scenario.clone(), status);
            case.set_classname(result.rules.join(" "));
            case.extra
                .insert("client".into(), result.client.clone().into());
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
