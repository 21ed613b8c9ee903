//! Fills the report's model from what `validate` judged: a column per target and revision
//! (over stdio or Streamable HTTP, as the target says), a row per check grouped by its area,
//! each cell's page the check's quoted rule, its finding and the exchange behind a failure.
//! The reports come scrubbed of every secret the run was given.

use super::model::{Area, Cell, Column, Detail, Mismatch, Report, Row, RuleQuote, Tone};
use crate::rules;
use crate::validate::outcome::{CheckResult, Status};
use crate::validate::report::TargetReport;

/// The report of `validate`.
pub fn from_validate(reports: &[TargetReport]) -> Report {
    let mut columns: Vec<(usize, String)> = Vec::new();
    let mut about: Vec<Column> = Vec::new();
    for (index, report) in reports.iter().enumerate() {
        let mut revisions: Vec<&str> = Vec::new();
        for check in &report.checks {
            if !revisions.contains(&check.revision.as_str()) {
                revisions.push(&check.revision);
            }
        }
        if revisions.is_empty() {
            // Unreachable: one column that says why, with no cell.
            revisions.push("");
        }
        for revision in revisions {
            columns.push((index, revision.to_string()));
            about.push(Column {
                name: match revision {
                    "" => report.name.clone(),
                    revision => format!("{} {revision}", report.name),
                },
                about: match &report.unreachable {
                    Some(why) => format!("{}: cannot reach it: {why}", report.target),
                    None => report.target.clone(),
                },
            });
        }
    }
    let mut ids: Vec<&CheckResult> = Vec::new();
    for check in reports.iter().flat_map(|r| &r.checks) {
        if !ids.iter().any(|c| c.id == check.id) {
            ids.push(check);
        }
    }
    let mut areas: Vec<Area> = Vec::new();
    for first in ids {
        let cells = columns
            .iter()
            .map(|(index, revision)| {
                reports[*index]
                    .checks
                    .iter()
                    .find(|c| c.id == first.id && c.revision == *revision)
                    .map(cell)
            })
            .collect();
        let row = Row {
            name: first.id.clone(),
            rules: vec![(first.id.clone(), first.level.to_string())],
            cells,
        };
        match areas.iter_mut().find(|a| a.name == first.area()) {
            Some(area) => area.rows.push(row),
            None => areas.push(Area {
                name: first.area().to_string(),
                rows: vec![row],
            }),
        }
    }
    Report {
        title: "mcp-conformance validate".to_string(),
        columns: about,
        areas,
    }
}

fn tone(status: Status) -> Tone {
    match status {
        Status::Pass => Tone::Pass,
        Status::Warn => Tone::Warn,
        Status::ExpectedFailure => Tone::Known,
        Status::Skip => Tone::NotApplicable,
        // Reported, not failing, as a should-rule outside `--strict` is.
        Status::Inconclusive => Tone::Warn,
        Status::Fail => Tone::Fail,
        Status::Stale => Tone::Stale,
        Status::HarnessFault => Tone::HarnessFault,
    }
}

fn cell(check: &CheckResult) -> Cell {
    let verdict = tone(check.status);
    let rule = rules::find(&check.id);
    let mut detail = Detail {
        requirement: check.requirement.clone(),
        rules: vec![RuleQuote {
            id: check.id.clone(),
            level: check.level.to_string(),
            text: rule.map_or_else(|| check.requirement.clone(), |r| r.text.clone()),
            sources: rule.map(|r| r.sources.clone()).unwrap_or_default(),
        }],
        millis: check.millis,
        ..Detail::default()
    };
    if let Some(failure) = &check.failure {
        detail.mismatches.push(Mismatch {
            what: format!("{} at {}", check.id, check.revision),
            expected: failure.expected.clone(),
            observed: failure.actual.clone(),
        });
        let exchange: Vec<String> = [("→", &failure.sent), ("←", &failure.received)]
            .into_iter()
            .filter_map(|(arrow, text)| text.as_ref().map(|t| format!("{arrow} {t}")))
            .collect();
        if !exchange.is_empty() {
            detail.transcript = Some(exchange.join("\n"));
        }
    }
    match (verdict, &check.note) {
        (Tone::NotApplicable | Tone::HarnessFault, Some(note)) => {
            detail.reason = Some(note.clone())
        }
        (Tone::Known | Tone::Stale, Some(note)) => detail.known = Some(note.clone()),
        (_, Some(note)) => detail.log.push(format!("note: {note}")),
        (_, None) => {}
    }
    Cell { verdict, detail }
}
