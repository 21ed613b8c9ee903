//! The declared side of server-initiated requests: a session declares the client
//! capabilities `roots`, `sampling` and (from 2025-06-18) `elicitation` (form mode only),
//! answers the server's requests for them with canned answers, and judges what came: each
//! request valid against the revision's schema, none beyond what was declared. Over stdio
//! that session is a server of its own (a request left unanswered when the probe closes
//! could keep a server from exiting, and the probe judges the exit); over HTTP it is the
//! probe session. The withheld side (a session declaring none) is
//! `server.requests.declared` (see [`super::lifecycle`]).

use super::session::peer::{mark, since, Peer};
use crate::declared::{answer, beyond_declared, CLIENT_REQUESTS};
use crate::outcome::{excerpt, Failure, Finding};
use crate::stdio::Exchange;
use serde_json::Value;
use std::time::Instant;

/// each sampling, elicitation and roots request to a client that declared them is valid for
/// the revision, and the session keeps serving after the validator's answers.
pub const VALID: &str = "server.requests.valid";
/// the server's requests to a declaring client stay within what it declared.
pub const WITHIN_DECLARED: &str = "server.requests.within-declared";

/// The checks judged on the declaring session, in report order.
pub const CHECKS: &[&str] = &[VALID, WITHIN_DECLARED];

/// Whether `message` is a server request for a client capability.
pub fn is_client_request(message: &Value) -> bool {
    let method = message.get("method").and_then(Value::as_str);
    message.get("id").is_some()
        && CLIENT_REQUESTS
            .iter()
            .any(|(known, _, _)| Some(*known) == method)
}

/// The server's requests for client capabilities in `log`.
pub fn client_requests(log: &[Value]) -> Vec<&Value> {
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
        match crate::schema::validate_as(revision, definition, request) {
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
                .sent(&fence.sent)
                .timed(fence.ran_out()),
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

/// A `ping` sent once every request the server sent so far has its answer: one the server
/// sent while the ping was on its way (read, and so answered, only after the ping went out)
/// reached the server after the ping, so the ping is sent again. The answer to the last one
/// is what shows the session still serves.
async fn fence(peer: &mut impl Peer) -> Exchange {
    const ROUNDS: usize = 3;
    let mut round = 0;
    loop {
        if let Some(why) = peer.stalled() {
            return Exchange {
                sent: String::new(),
                reply: Err(why),
                unanswered_status: None,
            };
        }
        let before = mark(peer);
        let exchange = peer.request("ping", None).await;
        round += 1;
        let raced = since(peer, before).iter().any(is_client_request);
        if !raced || exchange.result().is_none() || round == ROUNDS {
            return exchange;
        }
    }
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
    let fence = fence(peer).await;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::declared::declared_at;
    use serde_json::json;

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
