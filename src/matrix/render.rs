//! The matrix as text, Markdown and JSON: scenario × row, a summary per row, rule group
//! × row, and why runs were not applicable × row.

use super::reasons;
use super::run::{Column, Mark, Matrix};
use crate::rules::{self, Tier};
use crate::terminal;
use crate::verdict::Verdict;
use serde::Serialize;
use std::fmt::Write;

/// A row's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Passed.
    pub pass: usize,
    /// Failed, not in the baseline.
    pub fail: usize,
    /// Failed as the baseline says.
    pub baselined: usize,
    /// Listed in the baseline, but passing (or no longer applicable).
    pub stale: usize,
    /// Not applicable: the client cannot express what the scenario needs.
    pub not_applicable: usize,
    /// Harness faults.
    pub harness_faults: usize,
    /// Not scenarios of the row's profile.
    pub not_in_profile: usize,
}

impl Counts {
    /// The counts of `cells`.
    pub fn of(marks: impl IntoIterator<Item = Mark>) -> Counts {
        let mut counts = Counts::default();
        for mark in marks {
            *match mark {
                Mark::Pass => &mut counts.pass,
                Mark::Fail => &mut counts.fail,
                Mark::Baselined => &mut counts.baselined,
                Mark::Stale => &mut counts.stale,
                Mark::NotApplicable => &mut counts.not_applicable,
                Mark::HarnessFault => &mut counts.harness_faults,
                Mark::NotInProfile => &mut counts.not_in_profile,
            } += 1;
        }
        counts
    }

    /// Runs that judged the client (passes and failures, baselined or not).
    pub fn judged(&self) -> usize {
        self.pass + self.fail + self.baselined + self.stale
    }
}

/// A row's counts over every scenario.
pub fn counts(column: &Column) -> Counts {
    Counts::of(column.cells.iter().map(|c| c.mark))
}

/// The rule groups (`stdio`, `http`, …) of the matrix's scenarios, sorted.
pub fn groups(matrix: &Matrix) -> Vec<String> {
    let mut groups: Vec<String> = matrix
        .scenarios
        .iter()
        .flat_map(|s| s.rules.iter().map(|r| group_of(r).to_string()))
        .collect();
    groups.sort();
    groups.dedup();
    groups
}

fn group_of(rule: &str) -> &str {
    rule.split('.').next().unwrap_or(rule)
}

/// A row's cell in one group: `passed/judged`, `-` where it judged none.
fn group_cell(matrix: &Matrix, column: &Column, group: &str) -> String {
    let marks = matrix
        .scenarios
        .iter()
        .zip(&column.cells)
        .filter(|(s, _)| s.rules.iter().any(|r| group_of(r) == group))
        .map(|(_, cell)| cell.mark);
    let counts = Counts::of(marks);
    if counts.judged() == 0 {
        "-".into()
    } else {
        format!("{}/{}", counts.pass, counts.judged())
    }
}

/// Whether `rule` is of `tier` (an unknown rule is of none).
fn of_tier(rule: &str, tier: Tier) -> bool {
    rules::find(rule).is_some_and(|r| r.tier == Some(tier))
}

/// A row's cell in one tier, counting each scenario that names a rule of the tier:
/// `passed/judged`, and the scenarios not applicable (`12/30 · n/a 4`); `-` where there
/// are none.
fn tier_cell(matrix: &Matrix, column: &Column, tier: Tier) -> String {
    // A scenario counts under the tier by its rules of that tier alone: a specification
    // rule that failed is never hidden behind a robustness rule that passed, nor the
    // reverse, and a rule that does not bind the client is not applicable on its own.
    let marks = matrix
        .scenarios
        .iter()
        .zip(&column.cells)
        .filter(|(s, _)| s.rules.iter().any(|r| of_tier(r, tier)))
        .map(|(_, cell)| {
            let own = cell
                .rules
                .iter()
                .filter(|m| of_tier(&m.rule, tier))
                .map(|m| m.mark);
            Mark::worst(own).unwrap_or(cell.mark)
        });
    let counts = Counts::of(marks);
    match (counts.judged(), counts.not_applicable) {
        (0, 0) => "-".into(),
        (judged, 0) => format!("{}/{judged}", counts.pass),
        (judged, na) => format!("{}/{judged} · n/a {na}", counts.pass),
    }
}

/// The tier × row table: whom a rule binds (specification, robustness, a profile's own
/// promise) kept apart, as Autobahn keeps strict and non-strict outcomes apart.
fn tier_table(matrix: &Matrix) -> (Vec<String>, Vec<Vec<String>>) {
    let mut head = vec!["tier".to_string()];
    head.extend(matrix.columns.iter().map(|c| c.row.clone()));
    let lines = Tier::ALL
        .iter()
        .map(|&tier| {
            std::iter::once(tier.name().to_string())
                .chain(matrix.columns.iter().map(|c| tier_cell(matrix, c, tier)))
                .collect()
        })
        .collect();
    (head, lines)
}

/// How many of a row's runs judged the client, of those that bind it: its profile's runs
/// less the harness faults and the runs that hold only another profile's promise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Binding {
    /// Runs that judged the client.
    pub judged: usize,
    /// Runs that bind it: judged, or not applicable for what it cannot express.
    pub of: usize,
}

/// A row's [`Binding`].
pub fn binding(column: &Column) -> Binding {
    let c = counts(column);
    Binding {
        judged: c.judged(),
        of: c.judged() + c.not_applicable - reasons::not_binding(column),
    }
}

/// The per-row summary lines' cells: row, client, profile, the counts, and the runs judged
/// of those that bind the client.
fn summary_cells(column: &Column) -> [String; 10] {
    let c = counts(column);
    let b = binding(column);
    [
        column.row.clone(),
        terminal::line(&column.client.label()),
        column.profile.clone(),
        c.pass.to_string(),
        c.fail.to_string(),
        c.baselined.to_string(),
        c.not_applicable.to_string(),
        c.stale.to_string(),
        c.harness_faults.to_string(),
        format!("{}/{}", b.judged, b.of),
    ]
}

const SUMMARY_HEAD: [&str; 10] = [
    "row", "client", "profile", "pass", "fail", "known", "n/a", "stale", "harness", "judged",
];

/// The matrix for a terminal: scenario × row, what failed, the per-row summary, and the
/// tier × row and group × row tables.
pub fn text(matrix: &Matrix) -> String {
    let width = matrix
        .scenarios
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let widths: Vec<usize> = matrix.columns.iter().map(|c| c.row.len().max(7)).collect();
    let mut out = String::new();
    let _ = write!(out, "{:<width$}", "scenario");
    for (column, w) in matrix.columns.iter().zip(&widths) {
        let _ = write!(out, "  {:<w$}", column.row);
    }
    out.push('\n');
    for (i, scenario) in matrix.scenarios.iter().enumerate() {
        let _ = write!(out, "{:<width$}", terminal::line(&scenario.name));
        for (column, w) in matrix.columns.iter().zip(&widths) {
            let _ = write!(out, "  {:<w$}", column.cells[i].mark.short());
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
    }
    out.push_str(&problems(matrix));
    out.push('\n');
    out.push_str(&aligned(
        &SUMMARY_HEAD.map(String::from),
        &matrix.columns.iter().map(summary_cells).collect::<Vec<_>>(),
    ));
    out.push('\n');
    let (head, lines) = tier_table(matrix);
    out.push_str(&aligned(&head, &lines));
    out.push('\n');
    let (head, lines) = group_table(matrix);
    out.push_str(&aligned(&head, &lines));
    if let Some((head, lines)) = reasons::table(matrix) {
        out.push('\n');
        out.push_str(&aligned(&head, &lines));
    }
    let _ = writeln!(
        out,
        "\n{} scenario(s) × {} row(s) in {:.1} s",
        matrix.scenarios.len(),
        matrix.columns.len(),
        matrix.millis as f64 / 1000.0
    );
    out
}

/// The rule-group × row table: its head and one line per group.
fn group_table(matrix: &Matrix) -> (Vec<String>, Vec<Vec<String>>) {
    let mut head = vec!["group".to_string()];
    head.extend(matrix.columns.iter().map(|c| c.row.clone()));
    let lines = groups(matrix)
        .iter()
        .map(|g| {
            std::iter::once(g.clone())
                .chain(matrix.columns.iter().map(|c| group_cell(matrix, c, g)))
                .collect()
        })
        .collect();
    (head, lines)
}

/// Every cell that fails the matrix, with what did not hold.
fn problems(matrix: &Matrix) -> String {
    let mut out = String::new();
    for column in &matrix.columns {
        for cell in column.cells.iter().filter(|c| c.mark.fails()) {
            let _ = writeln!(
                out,
                "\n{} {}: {}",
                column.row,
                cell.mark.short(),
                terminal::line(&cell.scenario)
            );
            match cell.result.as_ref().map(|r| &r.verdict) {
                Some(Verdict::Fail { failures }) if cell.mark == Mark::Fail => {
                    for rule in cell.rules.iter().filter(|r| r.mark == Mark::Fail) {
                        let _ = writeln!(
                            out,
                            "    rule {} failed (no baseline entry explains it)",
                            rule.rule
                        );
                    }
                    for rule in cell.rules.iter().filter(|r| r.mark == Mark::Stale) {
                        let _ = writeln!(
                            out,
                            "    stale baseline entry for rule {} (it passes or no longer applies)",
                            rule.rule
                        );
                    }
                    for failure in failures {
                        let _ = writeln!(out, "    {}", terminal::line(&failure.label()));
                        let _ =
                            writeln!(out, "      expected: {}", terminal::line(&failure.expected));
                        let _ =
                            writeln!(out, "      actual:   {}", terminal::line(&failure.actual));
                    }
                }
                Some(Verdict::HarnessFault { reason }) => {
                    let _ = writeln!(
                        out,
                        "    harness fault (not the client's): {}",
                        terminal::line(reason)
                    );
                }
                _ => {
                    let known = cell.known.as_deref().unwrap_or("");
                    let _ = writeln!(
                        out,
                        "    stale baseline entry (it passes or no longer applies): {}",
                        terminal::line(known)
                    );
                }
            }
        }
    }
    out
}

/// Columns padded to their widest cell.
fn aligned(head: &[String], lines: &[impl AsRef<[String]>]) -> String {
    let mut widths: Vec<usize> = head.iter().map(String::len).collect();
    for line in lines {
        for (w, cell) in widths.iter_mut().zip(line.as_ref()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for line in std::iter::once(head).chain(lines.iter().map(AsRef::as_ref)) {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out
}

/// The matrix in Markdown: the per-row summary, tier × row, group × row, then scenario × row.
pub fn markdown(matrix: &Matrix) -> String {
    let mut out = String::new();
    let table = |out: &mut String, head: &[String], lines: &[Vec<String>]| {
        let _ = writeln!(out, "| {} |", head.join(" | "));
        let _ = writeln!(out, "|{}", head.iter().map(|_| "---|").collect::<String>());
        for line in lines {
            let _ = writeln!(
                out,
                "| {} |",
                line.iter()
                    .map(|c| c.replace('|', "\\|"))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
        }
    };
    let summary: Vec<Vec<String>> = matrix
        .columns
        .iter()
        .map(|c| summary_cells(c).to_vec())
        .collect();
    table(&mut out, &SUMMARY_HEAD.map(String::from), &summary);
    out.push('\n');
    let (head, lines) = tier_table(matrix);
    table(&mut out, &head, &lines);
    out.push('\n');
    let (head, lines) = group_table(matrix);
    table(&mut out, &head, &lines);
    out.push('\n');
    if let Some((head, lines)) = reasons::table(matrix) {
        table(&mut out, &head, &lines);
        out.push('\n');
    }
    let mut head = vec!["scenario".to_string()];
    head.extend(matrix.columns.iter().map(|c| c.row.clone()));
    let lines: Vec<Vec<String>> = matrix
        .scenarios
        .iter()
        .enumerate()
        .map(|(i, s)| {
            std::iter::once(format!("`{}`", s.name))
                .chain(
                    matrix
                        .columns
                        .iter()
                        .map(|c| c.cells[i].mark.short().to_string()),
                )
                .collect()
        })
        .collect();
    table(&mut out, &head, &lines);
    let _ = writeln!(
        out,
        "\n{} scenario(s) × {} row(s) in {:.1} s",
        matrix.scenarios.len(),
        matrix.columns.len(),
        matrix.millis as f64 / 1000.0
    );
    out
}

/// The matrix as JSON: `{"rows": [{row, client, profile, counts, binding, not_applicable}], "tiers": …, "groups": …, "scenarios": …, "columns": …}`.
pub fn json(matrix: &Matrix) -> String {
    let rows: Vec<serde_json::Value> = matrix
        .columns
        .iter()
        .map(|c| serde_json::json!({"row": c.row, "client": c.client.label(), "profile": c.profile, "counts": counts(c), "binding": binding(c), "not_applicable": reasons::of(c)}))
        .collect();
    let groups: serde_json::Map<String, serde_json::Value> = groups(matrix)
        .into_iter()
        .map(|g| {
            let cells: serde_json::Map<String, serde_json::Value> = matrix
                .columns
                .iter()
                .map(|c| (c.row.clone(), serde_json::json!(group_cell(matrix, c, &g))))
                .collect();
            (g, serde_json::Value::Object(cells))
        })
        .collect();
    let tiers: serde_json::Map<String, serde_json::Value> = Tier::ALL
        .iter()
        .map(|&tier| {
            let cells: serde_json::Map<String, serde_json::Value> = matrix
                .columns
                .iter()
                .map(|c| (c.row.clone(), serde_json::json!(tier_cell(matrix, c, tier))))
                .collect();
            (tier.name().to_string(), serde_json::Value::Object(cells))
        })
        .collect();
    let report = serde_json::json!({"rows": rows, "tiers": tiers, "groups": groups, "millis": matrix.millis, "scenarios": matrix.scenarios, "columns": matrix.columns});
    serde_json::to_string_pretty(&report)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot render: {e}\"}}"))
}
