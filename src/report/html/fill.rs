//! Fills the report's model from what `run` and `matrix` judged: the same results the JSON
//! reports are rendered from, with each run's evidence.

use super::model::{Area, Cell, Column, Detail, Mismatch, Report, Row, RuleQuote, Tone};
use crate::matrix::run::{Mark, Matrix};
use crate::scenario::LoadedScenario;
use crate::verdict::{ScenarioResult, Verdict};

/// The report of `run`: a column per client and profile, a row per scenario.
pub fn from_run(title: &str, results: &[ScenarioResult], scenarios: &[LoadedScenario]) -> Report {
    let mut columns: Vec<(String, &'static str)> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for result in results {
        if !columns
            .iter()
            .any(|(c, p)| *c == result.client && *p == result.profile)
        {
            columns.push((result.client.clone(), result.profile));
        }
        if !names.contains(&result.scenario.as_str()) {
            names.push(&result.scenario);
        }
    }
    let rows = names
        .iter()
        .map(|name| {
            let cells = columns
                .iter()
                .map(|(client, profile)| {
                    results
                        .iter()
                        .find(|r| {
                            r.scenario == *name && r.client == *client && r.profile == *profile
                        })
                        .map(|r| cell(tone_of(&r.verdict), r, find(scenarios, name), None))
                })
                .collect();
            row(
                name,
                find(scenarios, name),
                results_rules(results, name),
                cells,
            )
        })
        .collect();
    Report {
        title: title.to_string(),
        columns: columns
            .iter()
            .map(|(client, profile)| Column {
                name: profile.to_string(),
                about: format!("{client}, profile {profile}"),
            })
            .collect(),
        areas: grouped(rows),
    }
}

/// The report of `matrix`: a column per row of the rows file, a row per scenario, each cell
/// held against its column's baseline.
pub fn from_matrix(title: &str, matrix: &Matrix, scenarios: &[LoadedScenario]) -> Report {
    let rows = matrix
        .scenarios
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let cells = matrix
                .columns
                .iter()
                .map(|column| {
                    let cell = &column.cells[i];
                    let tone = match cell.mark {
                        Mark::Pass => Tone::Pass,
                        Mark::Fail => Tone::Fail,
                        Mark::Baselined => Tone::Known,
                        Mark::Stale => Tone::Stale,
                        Mark::NotApplicable => Tone::NotApplicable,
                        Mark::HarnessFault => Tone::HarnessFault,
                        Mark::NotInProfile => return None,
                    };
                    let known = cell.known.as_ref().map(|known| match &cell.rule {
                        Some(rule) => format!("{rule}: {known}"),
                        None => known.clone(),
                    });
                    let result = cell.result.as_ref()?;
                    Some(self::cell(tone, result, find(scenarios, &s.name), known))
                })
                .collect();
            row(&s.name, find(scenarios, &s.name), s.rules.clone(), cells)
        })
        .collect();
    Report {
        title: title.to_string(),
        columns: matrix
            .columns
            .iter()
            .map(|c| Column {
                name: c.row.clone(),
                about: format!("{}, profile {}", c.client.label(), c.profile),
            })
            .collect(),
        areas: grouped(rows),
    }
}

fn find<'a>(scenarios: &'a [LoadedScenario], name: &str) -> Option<&'a LoadedScenario> {
    scenarios.iter().find(|s| s.name == name)
}

fn results_rules(results: &[ScenarioResult], name: &str) -> Vec<String> {
    results
        .iter()
        .find(|r| r.scenario == name)
        .map(|r| r.rules.clone())
        .unwrap_or_default()
}

fn tone_of(verdict: &Verdict) -> Tone {
    match verdict {
        Verdict::Pass => Tone::Pass,
        Verdict::Fail { .. } => Tone::Fail,
        Verdict::NotApplicable { .. } => Tone::NotApplicable,
        Verdict::HarnessFault { .. } => Tone::HarnessFault,
    }
}

fn row(
    name: &str,
    scenario: Option<&LoadedScenario>,
    rules: Vec<String>,
    cells: Vec<Option<Cell>>,
) -> Row {
    let rules = scenario.map(|s| s.scenario.rules.clone()).unwrap_or(rules);
    Row {
        name: name.to_string(),
        rules: rules
            .into_iter()
            .map(|id| {
                let level = crate::rules::find(&id)
                    .map(|r| r.level.name())
                    .unwrap_or("unknown");
                (id, level.to_string())
            })
            .collect(),
        cells,
    }
}

/// Rows grouped by the group of their first rule (`stdio`, `http`, …), areas sorted, rows in
/// their order.
fn grouped(rows: Vec<Row>) -> Vec<Area> {
    let mut areas: Vec<Area> = Vec::new();
    for row in rows {
        let name = row
            .rules
            .first()
            .map(|(id, _)| id.split('.').next().unwrap_or(id).to_string())
            .unwrap_or_else(|| "other".into());
        match areas.iter_mut().find(|a| a.name == name) {
            Some(area) => area.rows.push(row),
            None => areas.push(Area {
                name,
                rows: vec![row],
            }),
        }
    }
    areas.sort_by(|a, b| a.name.cmp(&b.name));
    areas
}

fn cell(
    verdict: Tone,
    result: &ScenarioResult,
    scenario: Option<&LoadedScenario>,
    known: Option<String>,
) -> Cell {
    let (mismatches, reason) = match &result.verdict {
        Verdict::Pass => (Vec::new(), None),
        // The redacted copy the evidence keeps, where the run left evidence.
        Verdict::Fail { failures } => (
            result
                .evidence
                .as_ref()
                .map_or(failures, |e| &e.failures)
                .iter()
                .map(|f| Mismatch {
                    what: f.label(),
                    expected: f.expected.clone(),
                    observed: f.actual.clone(),
                })
                .collect(),
            None,
        ),
        Verdict::NotApplicable { reason } | Verdict::HarnessFault { reason } => {
            (Vec::new(), Some(reason.clone()))
        }
    };
    let evidence = result.evidence.clone().unwrap_or_default();
    Cell {
        verdict,
        detail: Detail {
            requirement: scenario
                .map(|s| s.scenario.requirement.clone())
                .unwrap_or_default(),
            rules: result
                .rules
                .iter()
                .map(|id| match crate::rules::find(id) {
                    Some(rule) => RuleQuote {
                        id: id.clone(),
                        level: rule.level.name().to_string(),
                        text: rule.text.clone(),
                        sources: rule.sources.clone(),
                    },
                    None => RuleQuote {
                        id: id.clone(),
                        level: "unknown".into(),
                        ..RuleQuote::default()
                    },
                })
                .collect(),
            script: scenario.map(script).unwrap_or_default(),
            mismatches,
            reason,
            known,
            transcript: result.evidence.as_ref().map(|e| e.transcript.clone()),
            steps: evidence.steps,
            log: evidence.log,
            log_left_out: evidence.log_left_out,
            millis: result.millis,
        },
    }
}

/// The server's script in short: its transport, then each step's name (and the method an
/// `expect` waits for). No values: a script may hold the secrets the client is handed.
fn script(scenario: &LoadedScenario) -> Vec<String> {
    let server = &scenario.scenario.server;
    let transport = serde_json::to_value(server.transport)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let mut lines = vec![format!("transport: {transport}")];
    for step in &server.steps {
        let line = match serde_json::to_value(step) {
            Ok(serde_json::Value::String(name)) => name,
            Ok(serde_json::Value::Object(map)) => map
                .iter()
                .next()
                .map(
                    |(name, value)| match value.get("method").and_then(|m| m.as_str()) {
                        Some(method) => format!("{name} {method}"),
                        None => name.clone(),
                    },
                )
                .unwrap_or_default(),
            _ => "?".into(),
        };
        lines.push(line);
    }
    lines
}
