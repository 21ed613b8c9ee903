//! What one check found: the raw finding of the check, and the reported status once the
//! level, `--strict` and the baseline have been applied.

use serde::Serialize;

/// The longest excerpt of a message or body kept in a report.
pub const EXCERPT_CHARS: usize = 300;

/// How much of a text is scrubbed before an excerpt is cut from it: far more than any
/// secret, far less than a body (scrubbing megabytes on every quote would stall the run).
const SCRUBBED_HEAD: usize = 16 << 10;

/// Cuts `text` to a readable length, on a character boundary, marking the cut; the run's
/// secrets are scrubbed first (so no part of one survives the cut).
pub fn excerpt(text: &str) -> String {
    let whole = text.trim_end();
    let head = super::text::prefix(whole, SCRUBBED_HEAD);
    let scrubbed = super::redact::scrub(head);
    let shown = scrubbed.trim_end();
    if head.len() == whole.len() && shown.chars().count() <= EXCERPT_CHARS {
        return shown.to_string();
    }
    let cut: String = shown.chars().take(EXCERPT_CHARS).collect();
    format!("{cut}… ({} bytes in all)", whole.len())
}

/// Expected against seen, with the exchange that showed it.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Failure {
    /// What the rule asks for.
    pub expected: String,
    /// What the server did.
    pub actual: String,
    /// The message sent, cut to a readable length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent: Option<String>,
    /// What came back (a message, or a status and body), cut to a readable length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received: Option<String>,
    /// The figure (`nothing within 10s`), when all that came back is a wait that only ran
    /// out of time: set from the exchange quoted ([`Failure::reply`]), never from its words.
    #[serde(skip)]
    pub ran_out: Option<String>,
}

impl Failure {
    /// A failure with no exchange attached.
    pub fn new(expected: impl Into<String>, actual: impl Into<String>) -> Failure {
        Failure {
            expected: expected.into(),
            actual: actual.into(),
            sent: None,
            received: None,
            ran_out: None,
        }
    }

    /// Attaches the message sent.
    pub fn sent(mut self, sent: impl AsRef<str>) -> Failure {
        self.sent = Some(excerpt(sent.as_ref()));
        self
    }

    /// Attaches what came back.
    pub fn received(mut self, received: Option<impl AsRef<str>>) -> Failure {
        self.received = received.map(|r| excerpt(r.as_ref()));
        self
    }

    /// Attaches what came back for a request, and whether it only ran out of time.
    pub fn reply(self, heard: &impl crate::exchange::Heard) -> Failure {
        self.received(Some(heard.received())).timed(heard.ran_out())
    }

    /// Marks this failure as showing only that time ran out (`figure`), or not (`None`).
    pub fn timed(mut self, figure: Option<String>) -> Failure {
        self.ran_out = figure;
        self
    }
}

impl Failure {
    /// The figure, when all this failure shows is that time ran out (what came back is only
    /// a wait that ended, nothing else came): such a check is inconclusive, not failed.
    pub fn ran_out_of_time(&self) -> Option<String> {
        self.ran_out.clone()
    }
}

/// What a check found, before levels and the baseline are applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The rule held; `note` says anything worth knowing (e.g. how much was checked).
    Pass {
        /// A remark shown beside the pass.
        note: Option<String>,
    },
    /// The rule did not hold.
    Fail(Failure),
    /// The check could not run.
    Skip {
        /// Why.
        reason: String,
    },
    /// The harness failed; says nothing about the server.
    HarnessFault {
        /// What went wrong.
        reason: String,
    },
}

impl Finding {
    /// A pass without a note.
    pub fn pass() -> Finding {
        Finding::Pass { note: None }
    }

    /// A pass with a note.
    pub fn pass_with(note: impl Into<String>) -> Finding {
        Finding::Pass {
            note: Some(note.into()),
        }
    }

    /// A skip.
    pub fn skip(reason: impl Into<String>) -> Finding {
        Finding::Skip {
            reason: reason.into(),
        }
    }
}

/// The reported status of a check.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The rule held.
    Pass,
    /// A should-rule failed outside `--strict`: reported, does not fail the run.
    Warn,
    /// A failure the baseline expects: reported with the baseline's reason.
    ExpectedFailure,
    /// The check could not run.
    Skip,
    /// The check only ran out of time: neither a pass nor a failure (the note gives the
    /// figure, e.g. `nothing within 10s`).
    Inconclusive,
    /// A must-rule failed (or any rule under `--strict`).
    Fail,
    /// A baseline entry whose check now passes: fails the run until it is removed.
    Stale,
    /// The harness failed.
    HarnessFault,
}

impl Status {
    /// How the table spells it.
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::ExpectedFailure => "xfail",
            Status::Skip => "skip",
            Status::Inconclusive => "timeout",
            Status::Fail => "FAIL",
            Status::Stale => "STALE",
            Status::HarnessFault => "HARNESS",
        }
    }

    /// Whether this status fails the run.
    pub fn fails_run(self) -> bool {
        matches!(self, Status::Fail | Status::Stale)
    }
}

/// One check's line in a report.
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    /// The check id, e.g. `server.ping`.
    pub id: String,
    /// The level the run judged it at (`must` under `--strict`).
    pub level: &'static str,
    /// The protocol revision offered in the check's sessions.
    pub revision: String,
    /// The rule's text (the requirement it enforces).
    pub requirement: String,
    /// The reported status.
    pub status: Status,
    /// Why it was skipped, what the harness hit, a pass's note, or the baseline's reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Expected against seen, for a failure (also kept for warn and xfail).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
    /// Wall time of the check in milliseconds.
    pub millis: u128,
}

impl CheckResult {
    /// The area a check belongs to: `tools` for `server.tools.list`.
    pub fn area(&self) -> &str {
        self.id.split('.').nth(1).unwrap_or(&self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_keeps_short_text_and_cuts_long_text_on_a_char_boundary() {
        assert_eq!(excerpt("short\n"), "short");
        let long = "é".repeat(400);
        let cut = excerpt(&long);
        assert!(cut.starts_with(&"é".repeat(EXCERPT_CHARS)));
        assert!(cut.ends_with("(800 bytes in all)"), "{cut}");
    }
}
