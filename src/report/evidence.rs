//! What a run leaves for a reader beyond its verdict: the normalized wire transcript, the
//! client's steps with what each returned and when, and the client's log. Built from the
//! outcome while it is at hand, every text redacted as the transcript is; the HTML report
//! shows it, the JSON report does not carry it.

use crate::runner::{check::Failure, transcript, Outcome};
use crate::text::cut;
use crate::verdict::Verdict;

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
    /// The verdict's failures, every text redacted: an expectation may quote the very secret
    /// it looks for (`no trace of "…"`), which the JSON report keeps and a page does not.
    pub failures: Vec<Failure>,
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
    /// The evidence of `outcome` and the `verdict` judged from it, redacted.
    pub fn of(outcome: &Outcome, verdict: &Verdict) -> Evidence {
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
            failures: match verdict {
                Verdict::Fail { failures } => failures
                    .iter()
                    .map(|f| Failure {
                        what: outcome.redact(&f.what),
                        expected: outcome.redact(&f.expected),
                        actual: outcome.redact(&f.actual),
                    })
                    .collect(),
                _ => Vec::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{GivenSecret, Judged, StepRecord};

    #[test]
    fn a_secret_quoted_by_an_expectation_or_returned_by_a_step_is_redacted() {
        let secret = "hdr-secret-77aa88bb";
        let outcome = Outcome {
            profile: mcp_refclient::Profile::Strict,
            client: crate::cut::Described::default(),
            judged: Judged::Everything,
            steps: vec![StepRecord {
                number: 1,
                label: "call_tool echo".into(),
                result: Ok(serde_json::json!({ "text": secret })),
                elapsed: std::time::Duration::from_millis(3),
            }],
            wire: Vec::new(),
            logs: Vec::new(),
            logs_dropped: 0,
            processes: Vec::new(),
            harness_fault: None,
            client_fault: None,
            redactions: Vec::new(),
            secrets: vec![GivenSecret {
                source: "header x-api-key".into(),
                value: secret.into(),
            }],
            http_url: None,
        };
        let verdict = Verdict::Fail {
            failures: vec![Failure {
                what: "never_contains".into(),
                expected: format!("no trace of {secret:?}"),
                actual: "found in step 1".into(),
            }],
        };
        let evidence = Evidence::of(&outcome, &verdict);
        let shown = format!("{:?} {:?}", evidence.failures, evidence.steps);
        assert!(!shown.contains(secret), "{shown}");
        assert!(shown.contains(mcp_refclient::redact::REDACTED), "{shown}");
        assert_eq!(evidence.steps[0].millis, 3);
    }
}
