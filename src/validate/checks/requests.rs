//! The declared side of server-initiated requests: a session declares the client
//! capabilities `roots`, `sampling` and (from 2025-06-18) `elicitation` (form mode only),
//! answers the server's requests for them with canned answers, and judges what came: each
//! request valid against the revision's schema, none beyond what was declared. Over stdio
//! that session is a server of its own (a request left unanswered when the probe closes
//! could keep a server from exiting, and the probe judges the exit); over HTTP it is the
//! probe session. The withheld side (a session declaring none) is
//! [`super::lifecycle::DECLARED_REQUESTS`].

use super::peer::{since, Peer};
use super::Ctx;
use crate::validate::outcome::{excerpt, Failure, Finding};
use crate::validate::stdio::{Exchange, Session};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// each sampling, elicitation and roots request to a client that declared them is valid for
/// the revision, and the session keeps serving after the validator's answers.
pub const VALID: &str = "server.requests.valid";
/// the server's requests to a declaring client stay within what it declared.
pub const WITHIN_DECLARED: &str = "server.requests.within-declared";

/// The checks judged on the declaring session, in report order.
pub const CHECKS: &[&str] = &[VALID, WITHIN_DECLARED];

/// The server requests for client capabilities: method, capability, schema definition.
pub const CLIENT_REQUESTS: [(&str, &str, &str); 3] = [
    ("sampling/createMessage", "sampling", "CreateMessageRequest"),
    ("elicitation/create", "elicitation", "ElicitRequest"),
    ("roots/list", "roots", "ListRootsRequest"),
];

/// The revision that brought `elicitation`.
const ELICITATION_SINCE: &str = "2025-06-18";

/// The client capabilities a declaring session declares when offering `revision`: roots,
/// sampling (without `context` or `tools`) and, where the revision has it, elicitation with
/// no mode named (form mode only, as 2025-11-25 reads an empty object). The negotiation
/// sessions declare them too: the one at the probe's revision serves the parse-error check
/// and then these checks.
pub fn declared_at(revision: &str) -> Value {
    let mut declared = json!({"roots": {}, "sampling": {}});
    // A revision no schema has (the negotiation's unknown offer) is answered with the
    // latest: it declares what the latest has.
    let known = crate::validate::schema::has_revision(revision);
    if revision >= ELICITATION_SINCE || !known {
        declared["elicitation"] = json!({});
    }
    declared
}

/// Why a request goes beyond what `declared` says, if it does.
fn beyond_declared(method: &str, params: Option<&Value>, declared: &Value) -> Option<String> {
    let (_, capability, _) = CLIENT_REQUESTS.iter().find(|(m, _, _)| *m == method)?;
    let Some(declared_capability) = declared.get(capability) else {
        return Some(format!(
            "`{method}` sent, though the client declared no `{capability}`"
        ));
    };
    let param = |key: &str| params.and_then(|p| p.get(key));
    match method {
        "sampling/createMessage" if declared_capability.get("tools").is_none() => [
            "tools",
            "toolChoice",
        ]
        .iter()
        .find(|key| param(key).is_some())
        .map(|key| {
            format!("`{method}` with `{key}`, though the client did not declare `sampling.tools`")
        }),
        "elicitation/create"
            if param("mode").and_then(Value::as_str) == Some("url")
                && declared_capability.get("url").is_none() =>
        {
            Some(format!(
                "`{method}` in URL mode, though the client declared `elicitation` without `url`"
            ))
        }
        _ => None,
    }
}

/// The validator's answer to a server request `message`, given the client capabilities it
/// `declared`: `ping` `{}`; a declared request a sane canned result (no roots, a short
/// assistant text, a declined elicitation); one beyond what was declared -32602 (the schema:
/// "The client MUST return an error if this field is provided but
/// ClientCapabilities.sampling.tools is not declared"); any other -32601.
pub fn answer(message: &Value, declared: &Value) -> Value {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let known = CLIENT_REQUESTS.iter().any(|(m, _, _)| *m == method);
    let error = |code: i64, text: String| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}});
    if method == "ping" {
        return json!({"jsonrpc": "2.0", "id": id, "result": {}});
    }
    if !known {
        return error(-32601, "Method not found".into());
    }
    if let Some(why) = beyond_declared(method, message.get("params"), declared) {
        let code = if why.contains("declared no") {
            -32601
        } else {
            -32602
        };
        return error(code, why);
    }
    let result = match method {
        "roots/list" => json!({"roots": []}),
        "sampling/createMessage" => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "mcp-conformance: a canned answer (no model is sampled)"},
            "model": "mcp-conformance-validate",
            "stopReason": "endTurn",
        }),
        _ => json!({"action": "decline"}),
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// Whether `message` is a server request for a client capability.
fn is_client_request(message: &Value) -> bool {
    let method = message.get("method").and_then(Value::as_str);
    message.get("id").is_some()
        && CLIENT_REQUESTS
            .iter()
            .any(|(known, _, _)| Some(*known) == method)
}

/// The server's requests for client capabilities in `log`.
fn client_requests(log: &[Value]) -> Vec<&Value> {
    log.iter().filter(|m| is_client_request(m)).collect()
}

/// The skip when the server sent none.
fn none_sent() -> Finding {
    Finding::skip(
        "the server sent no sampling, elicitation or roots request to the session that declared them \
         (servers commonly send them only from a tool call; none is called in that session)",
    )
}

/// Judges the requests in `log` against the `revision`'s schema, then the `fence` (a ping
/// sent after the server's requests were answered).
pub fn judge_valid(log: &[Value], revision: &str, declared: &Value, fence: &Exchange) -> Finding {
    let requests = client_requests(log);
    if requests.is_empty() {
        return none_sent();
    }
    for request in &requests {
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let definition = CLIENT_REQUESTS
            .iter()
            .find(|(m, _, _)| *m == method)
            .map_or("", |(_, _, d)| *d);
        match crate::validate::schema::validate_as(revision, definition, request) {
            Ok(None) => {}
            Ok(Some(problem)) => {
                return Finding::Fail(
                    Failure::new(
                        format!("a `{method}` request valid against the {revision} schema"),
                        problem,
                    )
                    .received(Some(request.to_string())),
                )
            }
            Err(reason) => return Finding::HarnessFault { reason },
        }
    }
    if fence.result().is_none() {
        return Finding::Fail(
            Failure::new("the session keeps serving after the validator answered its requests: ping answered", fence.received())
                .sent(&fence.sent),
        );
    }
    let answered: Vec<String> = requests
        .iter()
        .map(|r| {
            let reply = answer(r, declared);
            let how = reply.get("result").map_or_else(
                || format!("error {}", reply["error"]["code"]),
                |r| excerpt(&r.to_string()),
            );
            format!(
                "`{}` answered {how}",
                r["method"].as_str().unwrap_or_default()
            )
        })
        .collect();
    Finding::pass_with(format!(
        "{} request(s) valid: {}; ping answered after",
        requests.len(),
        answered.join(", ")
    ))
}

/// Judges the requests in `log` against what the session `declared`.
pub fn judge_within(log: &[Value], declared: &Value) -> Finding {
    let requests = client_requests(log);
    if requests.is_empty() {
        return none_sent();
    }
    for request in &requests {
        let method = request
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(why) = beyond_declared(method, request.get("params"), declared) {
            return Finding::Fail(
                Failure::new(
                    format!("requests only for the client capabilities declared ({declared})"),
                    why,
                )
                .received(Some(request.to_string())),
            );
        }
    }
    Finding::pass_with(format!(
        "{} request(s), each for a capability declared ({declared})",
        requests.len()
    ))
}

/// On the declaring session, after its other checks: a ping as a fence (what the server
/// sent before answering it is in the log, and it shows the session still serves), then the
/// `wanted` checks over the whole session. `declared` is what the session declared.
pub async fn run(
    peer: &mut impl Peer,
    offered: &str,
    declared: &Value,
    wanted: &[&'static str],
) -> Vec<(&'static str, String, Finding, u128)> {
    let started = Instant::now();
    let mut out = Vec::new();
    if wanted.is_empty() {
        return out;
    }
    let fence = match peer.stalled() {
        Some(why) => Exchange {
            sent: String::new(),
            reply: Err(why),
        },
        None => peer.request("ping", None).await,
    };
    let log = since(peer, 0);
    let revision = peer
        .shared_log()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .revision
        .clone();
    let revision = revision.unwrap_or_else(|| offered.to_string());
    for id in wanted {
        let finding = match *id {
            VALID => judge_valid(&log, &revision, declared, &fence),
            _ => judge_within(&log, declared),
        };
        out.push((
            *id,
            offered.to_string(),
            finding,
            started.elapsed().as_millis(),
        ));
    }
    out
}

/// Over stdio, the first revision's parse-error check and the declared side together: on
/// `reused` (a negotiation session at the probe's revision, which declared
/// [`declared_at`] what it offered) or else a server of its own declaring [`declared_at`]
/// `revision` — a server the run kills afterwards, so a request left pending cannot keep it
/// from exiting where the exit is judged. The parse-error check (when `parse_error`) runs
/// first (a capability declared changes nothing it judges); then the first request for a
/// client capability is waited for up to `patience` unless one came already (a server may
/// ask a while after `initialized`: server-everything asks for roots 350 ms after it) and
/// answered, then [`run`].
pub async fn run_stdio(
    ctx: &Ctx,
    reused: Option<Session>,
    revision: &str,
    wanted: &[&'static str],
    patience: Duration,
    parse_error: bool,
) -> Vec<(&'static str, String, Finding, u128)> {
    let started = Instant::now();
    let all: Vec<&'static str> = parse_error
        .then_some(super::jsonrpc::PARSE_ERROR)
        .into_iter()
        .chain(wanted.iter().copied())
        .collect();
    let opened = match reused {
        Some(session) => Ok(session),
        None => open_declaring(ctx, revision, parse_error).await,
    };
    let mut session = match opened {
        Ok(session) => session,
        Err(why) => {
            let millis = started.elapsed().as_millis();
            return all
                .iter()
                .map(|id| {
                    (
                        *id,
                        revision.to_string(),
                        Finding::skip(why.clone()),
                        millis,
                    )
                })
                .collect();
        }
    };
    let declared = session.declared.clone();
    let mut out = Vec::new();
    if parse_error {
        let started = Instant::now();
        let finding = super::jsonrpc::judge_parse_error(&mut session).await;
        out.push((
            super::jsonrpc::PARSE_ERROR,
            revision.to_string(),
            finding,
            started.elapsed().as_millis(),
        ));
    }
    match session.stalled.clone() {
        // The line that is not JSON stopped it: what it asked is not judged.
        Some(why) => {
            out.extend(
                wanted
                    .iter()
                    .map(|id| (*id, revision.to_string(), super::not_asked(&why), 0)),
            );
        }
        None => {
            // Unless one came (and was answered) already, the first request is waited for.
            if client_requests(&since(&session, 0)).is_empty() {
                if let Ok(request) = session.wait_within(patience, is_client_request).await {
                    let _ = session
                        .send_line(&answer(&request, &declared).to_string())
                        .await;
                }
            }
            out.extend(run(&mut session, revision, &declared, wanted).await);
        }
    }
    session.kill().await;
    out
}

/// A fresh server whose handshake declares [`declared_at`] `revision`.
async fn open_declaring(ctx: &Ctx, revision: &str, parse_error: bool) -> Result<Session, String> {
    let label = if parse_error {
        "parse-error"
    } else {
        "server.requests (declaring)"
    };
    let (mut session, init) = ctx.open_declaring(label, revision).await?;
    if init
        .result()
        .and_then(|r| r.get("protocolVersion"))
        .is_none()
    {
        session.kill().await;
        return Err(format!(
            "the handshake failed (see server.initialize.result): {}",
            excerpt(&init.received())
        ));
    }
    Ok(session)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::schema::REVISIONS;

    /// Every canned answer is a valid result of its revision.
    #[test]
    fn the_canned_answers_are_valid_results_at_each_revision() {
        for revision in REVISIONS {
            let declared = declared_at(revision);
            for (method, capability, _) in CLIENT_REQUESTS {
                if declared.get(capability).is_none() {
                    continue;
                }
                let params = match method {
                    "sampling/createMessage" => json!({"messages": [], "maxTokens": 10}),
                    "elicitation/create" => {
                        json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}})
                    }
                    _ => json!({}),
                };
                let reply = answer(
                    &json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}),
                    &declared,
                );
                let definition = match method {
                    "sampling/createMessage" => "CreateMessageResult",
                    "elicitation/create" => "ElicitResult",
                    _ => "ListRootsResult",
                };
                assert_eq!(
                    crate::validate::schema::validate_as(revision, definition, &reply["result"])
                        .unwrap(),
                    None,
                    "{method} at {revision}: {reply}"
                );
            }
        }
    }

    #[test]
    fn a_request_beyond_what_was_declared_gets_an_error_and_fails() {
        let declared = declared_at("2025-11-25");
        let tools = json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 5, "tools": []}});
        assert_eq!(answer(&tools, &declared)["error"]["code"], -32602);
        let url = json!({"jsonrpc": "2.0", "id": 2, "method": "elicitation/create",
            "params": {"mode": "url", "message": "m", "url": "https://example.invalid", "elicitationId": "e"}});
        assert_eq!(answer(&url, &declared)["error"]["code"], -32602);
        assert!(matches!(judge_within(&[url], &declared), Finding::Fail(_)));
        let old = declared_at("2025-03-26");
        let elicit =
            json!({"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": {}});
        assert_eq!(answer(&elicit, &old)["error"]["code"], -32601);
        let roots = json!({"jsonrpc": "2.0", "id": 4, "method": "roots/list"});
        assert!(matches!(judge_within(&[roots], &old), Finding::Pass { .. }));
    }
}
