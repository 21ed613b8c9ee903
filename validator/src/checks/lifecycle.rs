//! `server.lifecycle.*` and what the server may send unasked: a request before
//! `initialize`, a second `initialize`, `serverInfo` and `instructions`, requests for client
//! capabilities the validator did not declare, `list_changed` only where declared.

use super::session::peer::{request, Peer};
use crate::outcome::{Failure, Finding};
use crate::stdio::{Exchange, Session};
use serde_json::{json, Value};
use std::time::Duration;

/// a request other than ping before initialize gets a response, and initialize still succeeds.
pub const BEFORE_INITIALIZE: &str = "server.lifecycle.before-initialize";
/// a second initialize gets a response and the session keeps serving.
pub const SECOND_INITIALIZE: &str = "server.lifecycle.second-initialize";
/// serverInfo has a non-empty name and a version; title and instructions are strings.
pub const SERVER_INFO: &str = "server.lifecycle.server-info";
/// no sampling, elicitation or roots request to a client that declared none of them.
pub const DECLARED_REQUESTS: &str = "server.requests.declared";
/// list_changed notifications only for a list whose capability declares listChanged.
pub const LIST_CHANGED: &str = "server.notifications.list-changed";

/// The client capabilities behind each server request the validator never declares.
const CLIENT_REQUESTS: [(&str, &str); 3] = [
    ("sampling/createMessage", "sampling"),
    ("elicitation/create", "elicitation"),
    ("roots/list", "roots"),
];

/// Judges `serverInfo`, `instructions` of an `initialize` result.
pub fn judge_server_info(result: &Value) -> Finding {
    let info = result.get("serverInfo").cloned().unwrap_or(Value::Null);
    let mut wrong = Vec::new();
    if info
        .get("name")
        .and_then(Value::as_str)
        .is_none_or(|n| n.trim().is_empty())
    {
        wrong.push(format!(
            "serverInfo.name is {}",
            info.get("name").unwrap_or(&Value::Null)
        ));
    }
    if !info.get("version").is_some_and(Value::is_string) {
        wrong.push(format!(
            "serverInfo.version is {}",
            info.get("version").unwrap_or(&Value::Null)
        ));
    }
    for (path, value) in [
        ("serverInfo.title", info.get("title")),
        ("instructions", result.get("instructions")),
    ] {
        if let Some(value) = value.filter(|v| !v.is_string()) {
            wrong.push(format!("{path} is {value}"));
        }
    }
    if wrong.is_empty() {
        return Finding::pass();
    }
    Finding::Fail(Failure::new(
        "serverInfo with a non-empty string name and a string version; title and instructions strings when present",
        wrong.join("; "),
    ))
}

/// On a fresh server: `tools/list` before `initialize`, then the handshake; the finding and
/// the handshake's exchange (the session then serves the feature checks).
pub async fn early_request(session: &mut Session, revision: &str) -> (Finding, Exchange) {
    let early = session.request("tools/list", None).await;
    let init = session.handshake(revision).await;
    (judge_early(&early, &init), init)
}

/// Judges the answer to a request sent before `initialize` (`early`) and the handshake after it.
pub fn judge_early(early: &Exchange, init: &Exchange) -> Finding {
    let initialized = init
        .result()
        .and_then(|r| r.get("protocolVersion"))
        .is_some();
    if early.reply.is_err() {
        Finding::Fail(
            Failure::new(
                "a response (an error or a result) to a request sent before initialize",
                early.received(),
            )
            .sent(&early.sent)
            .timed(early.ran_out()),
        )
    } else if initialized {
        let how = if early.error_code().is_some() {
            "an error"
        } else {
            // The lifecycle asks clients not to send it and is silent on how a server answers.
            "a result (not failed: the specification asks the client not to send requests \
             other than pings before initialize, and says nothing of how a server answers one)"
        };
        Finding::pass_with(format!(
            "answered the early tools/list with {how}; initialize succeeded after it"
        ))
    } else {
        Finding::Fail(
            Failure::new(
                "initialize succeeding after an early request was answered",
                init.received(),
            )
            .sent(&init.sent)
            .timed(init.ran_out()),
        )
    }
}

/// A second `initialize` on an initialized session, then a `ping`.
pub async fn second_initialize(peer: &mut impl Peer, revision: &str, bound: Duration) -> Finding {
    let params = json!({
        "protocolVersion": revision,
        "capabilities": {},
        "clientInfo": {"name": "mcp-conformance-validate", "version": env!("CARGO_PKG_VERSION")},
    });
    let again = peer.request("initialize", Some(params)).await;
    // Over HTTP a refusal may come as an HTTP status with a JSON-RPC error of id null (the
    // TypeScript SDK answers 400 "Server already initialized"): a response all the same.
    if again.reply.is_err() && peer.is_stdio() {
        return Finding::Fail(
            Failure::new(
                "a response (an error or a result) to a second initialize",
                again.received(),
            )
            .sent(&again.sent)
            .timed(again.ran_out()),
        );
    }
    let id = peer.fresh_id();
    let ping = peer
        .all_at_once(vec![request(id, "ping", None)], bound)
        .await
        .remove(0);
    if ping.result().is_none() {
        return Finding::Fail(
            Failure::new("the session keeps serving: ping answered", ping.received())
                .sent(&ping.sent)
                .timed(ping.ran_out()),
        );
    }
    let how = match (&again.reply, again.error_code()) {
        (Err(why), _) => format!(
            "refused at the HTTP level ({})",
            crate::outcome::excerpt(&why.why)
        ),
        (Ok(_), Some(code)) => format!("an error ({code})"),
        (Ok(_), None) => "a result".to_string(),
    };
    Finding::pass_with(format!(
        "the second initialize got {how}; ping answered after it"
    ))
}

/// Judges the server's own requests in `log`: none for a client capability not declared
/// (the validator declares none).
pub fn judge_requests(log: &[Value]) -> Finding {
    for message in log {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            continue;
        };
        if message.get("id").is_none() {
            continue;
        }
        if let Some((_, capability)) = CLIENT_REQUESTS.iter().find(|(m, _)| *m == method) {
            return Finding::Fail(
                Failure::new(
                    "no request for a client capability the client did not declare (it declared none)",
                    format!("`{method}` sent, though the client declared no `{capability}`"),
                )
                .received(Some(message.to_string())),
            );
        }
    }
    Finding::pass()
}

/// Judges the `list_changed` notifications in `log` against the declared capabilities.
pub fn judge_list_changed(log: &[Value], capabilities: &Value) -> Finding {
    let mut seen = 0;
    for message in log {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            continue;
        };
        let Some(list) = method
            .strip_prefix("notifications/")
            .and_then(|m| m.strip_suffix("/list_changed"))
        else {
            continue;
        };
        seen += 1;
        if capabilities.get(list).and_then(|c| c.get("listChanged")) != Some(&json!(true)) {
            return Finding::Fail(
                Failure::new(
                    format!("`{method}` only from a server declaring `{list}.listChanged: true`"),
                    format!(
                        "sent; the server declared {list}: {}",
                        capabilities.get(list).unwrap_or(&Value::Null)
                    ),
                )
                .received(Some(message.to_string())),
            );
        }
    }
    Finding::pass_with(format!("{seen} list_changed notification(s)"))
}
