//! The report's model, neutral about where it came from: columns (clients, or revisions ×
//! transports), rows (scenarios, or checks) grouped in areas, and a cell per row and column
//! with its verdict and what its detail page shows. `run` and `matrix` fill it (see
//! [`super::fill`]); anything else that judges rows × columns can.

pub use crate::report::evidence::StepLine;

/// The whole report.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The page title (`mcp-conformance matrix`).
    pub title: String,
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The areas, in order, each with its rows.
    pub areas: Vec<Area>,
}

/// One column: a client under test (a matrix row), a profile, a revision.
#[derive(Clone, Debug, Default)]
pub struct Column {
    /// Its short name, the grid's header (`reference-strict`).
    pub name: String,
    /// What it is, in full (`mcp-refclient 0.1.0, profile strict`).
    pub about: String,
}

/// Rows that belong together (a rule group: `stdio`, `http`, …).
#[derive(Clone, Debug, Default)]
pub struct Area {
    /// The area's name.
    pub name: String,
    /// Its rows, in order.
    pub rows: Vec<Row>,
}

/// One row: a scenario, or a check.
#[derive(Clone, Debug, Default)]
pub struct Row {
    /// Its name (`stdio/banner-before-initialize`).
    pub name: String,
    /// The rule ids it checks, with their levels (`must`, `should`, `may`).
    pub rules: Vec<(String, String)>,
    /// A cell per column, in the columns' order; `None` where the column did not run it.
    pub cells: Vec<Option<Cell>>,
}

/// How one row fared in one column.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The verdict.
    pub verdict: Tone,
    /// What its page shows.
    pub detail: Detail,
}

/// A cell's verdict, as the grid colours it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Every expectation held.
    Pass,
    /// An expectation did not hold (and no baseline lists it).
    Fail,
    /// A should-rule did not hold outside `--strict` (validate): reported, not failing.
    Warn,
    /// It failed, as a baseline says.
    Known,
    /// Listed in a baseline, but it passes or no longer applies.
    Stale,
    /// The column cannot express what the row needs.
    NotApplicable,
    /// The harness failed; says nothing about the column.
    HarnessFault,
}

impl Tone {
    /// Every tone, in the legend's order.
    pub const ALL: [Tone; 7] = [
        Tone::Pass,
        Tone::Fail,
        Tone::Warn,
        Tone::Known,
        Tone::Stale,
        Tone::NotApplicable,
        Tone::HarnessFault,
    ];

    /// The CSS class and filter value (`pass`, `fail`, `warn`, `known`, `stale`, `na`,
    /// `harness`).
    pub fn class(self) -> &'static str {
        match self {
            Tone::Pass => "pass",
            Tone::Fail => "fail",
            Tone::Warn => "warn",
            Tone::Known => "known",
            Tone::Stale => "stale",
            Tone::NotApplicable => "na",
            Tone::HarnessFault => "harness",
        }
    }

    /// The word in the cell.
    pub fn word(self) -> &'static str {
        match self {
            Tone::Pass => "pass",
            Tone::Fail => "FAIL",
            Tone::Warn => "warn",
            Tone::Known => "known",
            Tone::Stale => "STALE",
            Tone::NotApplicable => "n/a",
            Tone::HarnessFault => "HARNESS",
        }
    }
}

/// What a cell's page shows.
#[derive(Clone, Debug, Default)]
pub struct Detail {
    /// The requirement the row quotes.
    pub requirement: String,
    /// The rules, each with its quoted text and sources.
    pub rules: Vec<RuleQuote>,
    /// The server's script in short: a line per step (`handshake`, `expect tools/call`).
    pub script: Vec<String>,
    /// Each expectation that did not hold: what, expected, observed.
    pub mismatches: Vec<Mismatch>,
    /// Why the cell is not applicable, or what the harness hit.
    pub reason: Option<String>,
    /// For a baselined or stale cell: the baseline entry's rule, reason and evidence.
    pub known: Option<String>,
    /// The client's steps with what each returned.
    pub steps: Vec<StepLine>,
    /// The normalized wire transcript, when the row ran.
    pub transcript: Option<String>,
    /// The client's log lines.
    pub log: Vec<String>,
    /// Log lines left out.
    pub log_left_out: usize,
    /// Wall time, in milliseconds.
    pub millis: u128,
}

/// A rule as the registry quotes it.
#[derive(Clone, Debug, Default)]
pub struct RuleQuote {
    /// Its id (`stdio.ping.answered`).
    pub id: String,
    /// `must`, `should` or `may`.
    pub level: String,
    /// The quoted requirement.
    pub text: String,
    /// Where it is written (specification sections, URLs).
    pub sources: Vec<String>,
}

/// An expectation that did not hold.
#[derive(Clone, Debug, Default)]
pub struct Mismatch {
    /// What was checked.
    pub what: String,
    /// What was expected.
    pub expected: String,
    /// What was observed.
    pub observed: String,
}
