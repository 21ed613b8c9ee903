//! `server.schema.valid`: every message the server sent, in every session, against the
//! schema of the revision that session negotiated.

use crate::log::SharedLog;
use crate::outcome::{Failure, Finding};
use crate::schema::{has_revision, validate_message};
use serde_json::Value;

/// every message it sends validates against the negotiated revision's schema.
pub const VALID: &str = "server.schema.valid";

/// Compiles ahead the validators the messages received so far need (their verdicts are not
/// kept): run while servers are still starting, it takes the compile off the end of a run,
/// where [`judge`] then finds them cached. The messages are copied out first, so no
/// session's log is held while compiling.
pub fn prepare(logs: &[SharedLog]) {
    let mut seen: Vec<(String, Value, Option<String>)> = Vec::new();
    for log in logs {
        let log = log.lock().unwrap_or_else(|e| e.into_inner());
        let Some(revision) = log.revision.clone().filter(|r| has_revision(r)) else {
            continue;
        };
        for message in &log.seen {
            let answered = message
                .get("id")
                .and_then(|id| log.methods.get(&id.to_string()))
                .cloned();
            let answered = if message.get("method").is_some() {
                None
            } else {
                answered
            };
            seen.push((revision.clone(), message.clone(), answered));
        }
    }
    for (revision, message, answered) in &seen {
        let _ = validate_message(revision, message, answered.as_deref());
    }
}

/// Validates every message of every session.
pub fn judge(logs: &[SharedLog]) -> Finding {
    let mut checked = 0;
    let mut dropped = 0;
    let mut unjudged = Vec::new();
    for log in logs {
        let log = log.lock().unwrap_or_else(|e| e.into_inner());
        dropped += log.dropped;
        let Some(revision) = log.revision.clone() else {
            continue;
        };
        if !has_revision(&revision) {
            unjudged.push(revision);
            continue;
        }
        for message in &log.seen {
            let answered = message
                .get("id")
                .and_then(|id| log.methods.get(&id.to_string()))
                .map(String::as_str);
            let answered = if message.get("method").is_some() {
                None
            } else {
                answered
            };
            match validate_message(&revision, message, answered) {
                Ok(None) => checked += 1,
                Ok(Some(problem)) => {
                    let what =
                        answered.map_or(String::new(), |m| format!(" (the answer to `{m}`)"));
                    return Finding::Fail(
                        Failure::new(
                            format!("a message valid against the {revision} schema{what}"),
                            problem,
                        )
                        .received(Some(Value::to_string(message))),
                    );
                }
                Err(reason) => return Finding::HarnessFault { reason },
            }
        }
    }
    if checked == 0 {
        return if unjudged.is_empty() {
            Finding::skip("no message was received in a session with a negotiated revision")
        } else {
            Finding::skip(format!(
                "no embedded schema for the negotiated revision {}",
                unjudged[0]
            ))
        };
    }
    if dropped > 0 {
        return Finding::pass_with(format!(
            "{checked} message(s) valid; {dropped} more were not kept (over {} a session) and not judged",
            crate::log::KEPT_MESSAGES
        ));
    }
    Finding::pass_with(format!("{checked} message(s) valid"))
}
