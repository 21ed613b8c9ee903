//! What a run leaves for a reader beyond its verdict: the normalized wire transcript, the
//! client's steps with what each returned and when, and the client's log. Built from the
//! outcome while it is at hand, every text redacted as the transcript is; the HTML report
//! shows it, the JSON report does not carry it.

use crate::runner::{transcript, Outcome};
use crate::text::cut;

/// How many log lines a run keeps for the report: the log of a stalled client can be long,
/// and the whole matrix's report stays small.
const LOG_LINES: usize = 120;

/// A run's evidence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evidence {
    /// The normalized transcript (what a snapshot pins): wire, client, logs, processes.
    pub transcript: String,
    /// The client's steps, in order.
    pub steps: Vec<StepLine>,
    /// The client's log lines (`LEVEL target: message`), the first [`LOG_LINES`].
    pub log: Vec<String>,
    /// Log lines left out past [`LOG_LINES`].
    pub log_left_out: usize,
}

/// One client step and what it returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepLine {
    /// The step's number, from 1.
    pub number: usize,
    /// Its label (`call_tool echo`).
    pub label: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// What it returned, or its error (`[kind] text`).
    pub returned: String,
    /// How long it took, in milliseconds.
    pub millis: u128,
}

impl Evidence {
    /// The evidence of `outcome`, redacted.
    pub fn of(outcome: &Outcome) -> Evidence {
        let steps = outcome
            .steps
            .iter()
            .map(|step| {
                let (ok, returned) = match &step.result {
                    Ok(value) => (true, value.to_string()),
                    Err(e) => (false, format!("[{}] {}", e.kind, e.text)),
                };
                StepLine {
                    number: step.number,
                    label: outcome.redact(&step.label),
                    ok,
                    returned: cut(&outcome.redact(&returned), 2000),
                    millis: step.elapsed.as_millis(),
                }
            })
            .collect();
        let log = outcome
            .logs
            .iter()
            .take(LOG_LINES)
            .map(|e| {
                // Redacted before it is cut: a cut through a secret would leave half of it.
                let line = format!("{} {}: {}", e.level, e.target, outcome.redact(&e.message));
                cut(&line, 400)
            })
            .collect();
        Evidence {
            transcript: transcript::render(outcome),
            steps,
            log,
            log_left_out: outcome.logs.len().saturating_sub(LOG_LINES) + outcome.logs_dropped,
        }
    }
}
