//! The validator's reports: the terminal table (grouped by area, with a summary line), JSON
//! and JUnit XML.

use super::outcome::{CheckResult, Status};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use serde::Serialize;
use std::fmt::Write;
use std::time::Duration;

/// One validated target.
#[derive(Clone, Debug, Serialize)]
pub struct TargetReport {
    /// The config name, or the command line / URL.
    pub name: String,
    /// The command line or URL.
    pub target: String,
    /// Why the target could not be reached (then `checks` is empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreachable: Option<String>,
    /// The counts.
    pub summary: Summary,
    /// Every check, in report order.
    pub checks: Vec<CheckResult>,
    /// Wall time in milliseconds.
    pub millis: u128,
}

/// Counts of one target's statuses.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Summary {
    /// Checks that passed.
    pub passed: usize,
    /// Checks that failed (stale baseline entries included).
    pub failed: usize,
    /// Should-checks that failed outside `--strict`.
    pub warnings: usize,
    /// Failures the baseline expects.
    pub expected_failures: usize,
    /// Checks that could not run.
    pub skipped: usize,
    /// Checks that only ran out of time.
    pub inconclusive: usize,
    /// Harness faults.
    pub harness_faults: usize,
}

impl Summary {
    /// Counts `checks`.
    pub fn of(checks: &[CheckResult]) -> Summary {
        let mut s = Summary::default();
        for check in checks {
            match check.status {
                Status::Pass => s.passed += 1,
                Status::Fail | Status::Stale => s.failed += 1,
                Status::Warn => s.warnings += 1,
                Status::ExpectedFailure => s.expected_failures += 1,
                Status::Skip => s.skipped += 1,
                Status::Inconclusive => s.inconclusive += 1,
                Status::HarnessFault => s.harness_faults += 1,
            }
        }
        s
    }

    /// The summary line.
    pub fn line(&self) -> String {
        let mut line = format!("{} passed, {} failed", self.passed, self.failed);
        for (n, what) in [
            (self.warnings, "warnings"),
            (self.expected_failures, "expected failures"),
            (self.skipped, "skipped"),
            (self.inconclusive, "inconclusive"),
            (self.harness_faults, "harness faults"),
        ] {
            if n > 0 {
                let _ = write!(line, ", {n} {what}");
            }
        }
        line
    }
}

/// The longest text field of a report; longer ones are cut.
pub const MAX_FIELD: usize = 4096;

/// Applies `scrub` to every text of a report that can hold what a server sent or what the
/// command line gave (names, notes, failures), before any rendering.
pub fn scrub(report: &mut TargetReport, scrub: impl Fn(&str) -> String) {
    // A field quoting a server at length (an 8 MB version string) is cut first.
    let each = |text: &mut String| *text = scrub(&super::text::cut(text, MAX_FIELD));
    each(&mut report.name);
    each(&mut report.target);
    report.unreachable.iter_mut().for_each(each);
    for check in &mut report.checks {
        check.note.iter_mut().for_each(each);
        if let Some(f) = &mut check.failure {
            each(&mut f.expected);
            each(&mut f.actual);
            f.sent.iter_mut().for_each(each);
            f.received.iter_mut().for_each(each);
        }
    }
}

/// Renders the terminal table of every target; every text from a server or a file is one
/// escaped line ([`crate::terminal::line`]), so none can forge a line of the table.
pub fn table(reports: &[TargetReport]) -> String {
    let mut out = String::new();
    for report in reports {
        let _ = writeln!(out, "validate {} ({} ms)", esc(&report.name), report.millis);
        if report.name != report.target {
            let _ = writeln!(out, "  target: {}", esc(&report.target));
        }
        if let Some(why) = &report.unreachable {
            let _ = writeln!(out, "  UNREACHABLE: {}\n", esc(why));
            continue;
        }
        let revisions = report
            .checks
            .iter()
            .filter(|c| c.revision != "all")
            .map(|c| c.revision.as_str())
            .collect::<std::collections::BTreeSet<_>>();
        let width = report.checks.iter().map(|c| c.id.len()).max().unwrap_or(10);
        let mut area = "";
        for check in &report.checks {
            if check.area() != area {
                area = check.area();
                let _ = writeln!(out, "\n  {area}");
            }
            let revision = if revisions.len() > 1 {
                format!(" @{}", check.revision)
            } else {
                String::new()
            };
            let _ = write!(
                out,
                "    {:<7} {:<6} {:<width$}{revision} {:>6} ms",
                check.status.label(),
                check.level,
                check.id,
                check.millis
            );
            match (&check.note, check.status) {
                (Some(note), Status::Skip) => {
                    let _ = write!(out, "  skipped: {}", esc(note));
                }
                (Some(note), Status::Pass) => {
                    let _ = write!(out, "  {}", esc(note));
                }
                _ => {}
            }
            out.push('\n');
            if matches!(check.status, Status::Pass | Status::Skip) {
                continue;
            }
            let _ = writeln!(out, "        rule:     {}", check.requirement);
            if let Some(note) = &check.note {
                let label = match check.status {
                    Status::ExpectedFailure => "baseline",
                    Status::Stale => "stale",
                    Status::HarnessFault => "harness",
                    _ => "note",
                };
                let pad = " ".repeat(8usize.saturating_sub(label.len() + 1));
                let _ = writeln!(out, "        {label}: {pad}{}", esc(note));
            }
            if let Some(f) = &check.failure {
                let _ = writeln!(out, "        expected: {}", esc(&f.expected));
                let _ = writeln!(out, "        actual:   {}", esc(&f.actual));
                if let Some(sent) = &f.sent {
                    let _ = writeln!(out, "        sent:     {}", indented(sent));
                }
                if let Some(received) = &f.received {
                    let _ = writeln!(out, "        received: {}", indented(received));
                }
            }
        }
        if revisions.len() == 1 {
            let _ = writeln!(
                out,
                "\n  revision offered: {}",
                revisions.iter().next().copied().unwrap_or_default()
            );
        }
        let _ = writeln!(out, "  {}\n", report.summary.line());
    }
    if reports.len() > 1 {
        let mut total = Summary::default();
        for r in reports {
            total.passed += r.summary.passed;
            total.failed += r.summary.failed;
            total.warnings += r.summary.warnings;
            total.expected_failures += r.summary.expected_failures;
            total.skipped += r.summary.skipped;
            total.harness_faults += r.summary.harness_faults;
        }
        let unreachable = reports.iter().filter(|r| r.unreachable.is_some()).count();
        let _ = writeln!(
            out,
            "{} servers ({unreachable} unreachable): {}",
            reports.len(),
            total.line()
        );
    }
    out
}

/// One line of server or file text, control characters escaped.
fn esc(text: &str) -> String {
    crate::terminal::line(text)
}

/// Several lines (a sent pair, received messages) under the label, each escaped.
fn indented(text: &str) -> String {
    text.split('\n')
        .map(esc)
        .collect::<Vec<_>>()
        .join("\n                  ")
}

/// Renders the JSON report: `{ "targets": [ ... ] }`.
pub fn json(reports: &[TargetReport]) -> String {
    serde_json::to_string_pretty(&serde_json::json!({ "targets": reports }))
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot render: {e}\"}}"))
}

/// Renders the JUnit XML report: one suite per target, one case per check.
pub fn junit(reports: &[TargetReport]) -> String {
    let mut junit = Report::new("mcp-conformance validate");
    for report in reports {
        let mut suite = TestSuite::new(report.name.clone());
        if let Some(why) = &report.unreachable {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status.set_message("target unreachable");
            status.set_description(why.clone());
            suite.add_test_case(TestCase::new("unreachable", status));
        }
        for check in &report.checks {
            let detail = || {
                let mut text = format!("rule: {}", check.requirement);
                if let Some(note) = &check.note {
                    let _ = write!(text, "\nnote: {note}");
                }
                if let Some(f) = &check.failure {
                    let _ = write!(text, "\nexpected: {}\nactual: {}", f.expected, f.actual);
                    if let Some(sent) = &f.sent {
                        let _ = write!(text, "\nsent: {sent}");
                    }
                    if let Some(received) = &f.received {
                        let _ = write!(text, "\nreceived: {received}");
                    }
                }
                text
            };
            let status = match check.status {
                Status::Pass | Status::Warn => TestCaseStatus::success(),
                Status::Fail | Status::Stale => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    status.set_message(if check.status == Status::Stale {
                        "stale baseline entry"
                    } else {
                        "failed"
                    });
                    status.set_description(detail());
                    status
                }
                Status::HarnessFault => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                    status.set_message("harness fault");
                    status.set_description(detail());
                    status
                }
                Status::Skip | Status::ExpectedFailure | Status::Inconclusive => {
                    let mut status = TestCaseStatus::skipped();
                    status.set_message(match check.status {
                        Status::Skip => "skipped",
                        Status::Inconclusive => "inconclusive (time ran out)",
                        _ => "expected failure (baseline)",
                    });
                    status.set_description(detail());
                    status
                }
            };
            let mut case = TestCase::new(format!("{}@{}", check.id, check.revision), status);
            case.set_classname(check.area().to_string());
            case.set_time(Duration::from_millis(
                u64::try_from(check.millis).unwrap_or(u64::MAX),
            ));
            if check.status == Status::Warn {
                case.set_system_out(format!("warning (should-rule failed):\n{}", detail()));
            }
            suite.add_test_case(case);
        }
        junit.add_test_suite(suite);
    }
    junit
        .to_string()
        .unwrap_or_else(|e| format!("<!-- cannot render the JUnit report: {e} -->"))
}
