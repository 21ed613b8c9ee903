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
    /// The evidence of `outcome` and the `verdict` judged from it, redacted: the secrets the
    /// run handed the client, and the strings the scenario says must never show
    /// (`never_contains`: a token inside a header value the run handed whole).
    pub fn of(outcome: &Outcome, verdict: &Verdict, never_shown: &[String]) -> Evidence {
        let redact = |text: &str| {
            let mut text = outcome.redact(text);
            for secret in never_shown.iter().filter(|s| !s.is_empty()) {
                text = text.replace(secret.as_str(), mcp_refclient::redact::REDACTED);
            }
            text
        };
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
                    label: redact(&step.label),
                    ok,
                    returned: cut(&redact(&returned), 2000),
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
                let line = format!("{} {}: {}", e.level, e.target, redact(&e.message));
                cut(&line, 400)
            })
            .collect();
        Evidence {
            transcript: redact(&transcript::render(outcome)),
            steps,
            log,
            log_left_out: outcome.logs.len().saturating_sub(LOG_LINES) + outcome.logs_dropped,
            failures: match verdict {
                Verdict::Fail { failures } => failures
                    .iter()
                    .map(|f| Failure {
                        what: redact(&f.what),
                        expected: redact(&f.expected),
                        actual: redact(&f.actual),
                        rules: f.rules.clone(),
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

    /// An outcome whose one step returned `secret`, the run having handed it to the client.
    fn outcome_handing(secret: &str) -> Outcome {
        Outcome {
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
            note: None,
            waited: std::time::Duration::ZERO,
        }
    }

    fn failing(expected: &str) -> Verdict {
        Verdict::Fail {
            failures: vec![Failure {
                what: "never_contains".into(),
                expected: expected.into(),
                actual: "found in step 1".into(),
                rules: Vec::new(),
            }],
        }
    }

    #[test]
    fn a_secret_quoted_by_an_expectation_or_returned_by_a_step_is_redacted() {
        let secret = "hdr-secret-77aa88bb";
        let verdict = failing(&format!("no trace of {secret:?}"));
        let evidence = Evidence::of(&outcome_handing(secret), &verdict, &[]);
        let shown = format!("{:?} {:?}", evidence.failures, evidence.steps);
        assert!(!shown.contains(secret), "{shown}");
        assert!(shown.contains(mcp_refclient::redact::REDACTED), "{shown}");
        assert_eq!(evidence.steps[0].millis, 3);
    }

    #[test]
    fn a_string_the_scenario_says_must_never_show_is_redacted_too() {
        // The run handed the whole header value; the scenario names the token inside it.
        let outcome = Outcome {
            secrets: Vec::new(),
            ..outcome_handing("Bearer legacy-secret-0011")
        };
        let verdict = failing("no trace of \"legacy-secret-0011\"");
        let evidence = Evidence::of(&outcome, &verdict, &["legacy-secret-0011".to_string()]);
        let shown = format!("{:?} {:?}", evidence.failures, evidence.steps);
        assert!(!shown.contains("legacy-secret-0011"), "{shown}");
    }
}
