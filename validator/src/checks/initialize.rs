//! `server.initialize.*`: the handshake's result and version negotiation.

use crate::outcome::{Failure, Finding};
use crate::schema::REVISIONS;
use crate::stdio::Exchange;
use serde_json::Value;

/// answers `initialize` with protocolVersion, capabilities, serverInfo{name, version}.
pub const RESULT: &str = "server.initialize.result";
/// answers the requested revision when supported, otherwise another it supports.
pub const NEGOTIATES: &str = "server.initialize.negotiates";

/// A revision no server supports, offered to see the server fall back.
pub const UNKNOWN_REVISION: &str = "1999-01-01";

/// Judges an `initialize` exchange.
pub fn judge_result(exchange: &Exchange) -> Finding {
    let expected =
        "a result with protocolVersion (string), capabilities (object), serverInfo {name, version} (strings)";
    let fail = |actual: String| {
        Finding::Fail(
            Failure::new(expected, actual)
                .sent(&exchange.sent)
                .reply(&exchange),
        )
    };
    let Some(result) = exchange.result() else {
        return fail(match exchange.error_code() {
            Some(code) => format!("an error response ({code})"),
            None => "no result".to_string(),
        });
    };
    let mut missing = Vec::new();
    if !result.get("protocolVersion").is_some_and(Value::is_string) {
        missing.push("protocolVersion");
    }
    if !result.get("capabilities").is_some_and(Value::is_object) {
        missing.push("capabilities");
    }
    let info = result.get("serverInfo");
    if !info.is_some_and(Value::is_object) {
        missing.push("serverInfo");
    } else {
        if !info
            .and_then(|i| i.get("name"))
            .is_some_and(Value::is_string)
        {
            missing.push("serverInfo.name");
        }
        if !info
            .and_then(|i| i.get("version"))
            .is_some_and(Value::is_string)
        {
            missing.push("serverInfo.version");
        }
    }
    if missing.is_empty() {
        Finding::pass()
    } else {
        fail(format!("missing or mistyped: {}", missing.join(", ")))
    }
}

/// The label of the session the negotiation check opens to offer `revision`.
pub fn session_label(revision: &str) -> String {
    format!("negotiates {revision}")
}

/// The revisions the negotiation check offers: each published one, then an unknown one.
pub fn offered() -> Vec<&'static str> {
    REVISIONS
        .iter()
        .copied()
        .chain([UNKNOWN_REVISION])
        .collect()
}

/// Judges the answers to `initialize` offering each revision of [`offered`]: each a published
/// revision, and consistent — a revision the server answered with anywhere (to an unknown
/// offer, say) is one it supports, so offered directly it must be answered as is.
pub fn judge_negotiation(mut answers: Vec<(String, Exchange)>) -> Finding {
    let wanted = offered();
    answers.sort_by_key(|(r, _)| wanted.iter().position(|w| w == r));
    let mut notes = Vec::new();
    for (offered, exchange) in &answers {
        let answered = exchange
            .result()
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str);
        let expected = if offered == UNKNOWN_REVISION {
            format!("offered {offered} (unknown): a revision the server supports, never an error")
        } else {
            format!("offered {offered}: {offered}, or another revision the server supports, never an error")
        };
        let failure = || {
            Failure::new(expected.clone(), String::new())
                .sent(&exchange.sent)
                .reply(&exchange)
        };
        match answered {
            None => {
                return Finding::Fail(Failure {
                    actual: "no protocolVersion in a result".into(),
                    ..failure()
                })
            }
            Some(version) if !REVISIONS.contains(&version) => {
                return Finding::Fail(Failure {
                    actual: format!("answered `{version}`, not a published revision"),
                    ..failure()
                })
            }
            Some(version) => notes.push(format!("{offered}→{version}")),
        }
    }
    let answered = |exchange: &Exchange| {
        exchange
            .result()
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    for (offered, exchange) in &answers {
        let Some(version) = answered(exchange).filter(|v| v != offered) else {
            continue;
        };
        let shown_elsewhere: Vec<&str> = answers
            .iter()
            .filter(|(other, x)| {
                other != offered && answered(x).as_deref() == Some(offered.as_str())
            })
            .map(|(other, _)| other.as_str())
            .collect();
        if !shown_elsewhere.is_empty() {
            let expected = format!(
                "offered {offered}: {offered}, a revision the server supports (it answered {offered} when offered {})",
                shown_elsewhere.join(", ")
            );
            return Finding::Fail(
                Failure::new(expected, format!("answered `{version}`: inconsistent"))
                    .sent(&exchange.sent)
                    .reply(&exchange),
            );
        }
    }
    Finding::pass_with(notes.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::session::ctx::HANDSHAKE_CHECK;

    /// A session opener names this check when a failed handshake skips other checks.
    #[test]
    fn the_session_openers_name_this_check_for_a_failed_handshake() {
        assert_eq!(HANDSHAKE_CHECK, RESULT);
    }
}
