//! The utilities of the spec on a server: completion, logging, pagination's bogus cursor,
//! progress, cancellation, and several requests in flight at once.

use super::common::calls::Call;
use super::common::expect::expect_invalid_params;
use super::session::peer::{request, since, Peer};
use crate::fixtures::ListKind;
use crate::outcome::{Failure, Finding};
use crate::stdio::Exchange;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::Duration;

/// completion/complete for a prompt argument or a template variable answers values (at most 100 strings).
pub const COMPLETE: &str = "server.completion.complete";
/// logging/setLevel answers an empty result.
pub const SET_LEVEL: &str = "server.logging.set-level";
/// after logging/setLevel, notifications/message come at that level or above.
pub const LEVEL_RESPECTED: &str = "server.logging.level-respected";
/// a list request with a cursor the server never issued gets -32602.
pub const BOGUS_CURSOR: &str = "server.pagination.bogus-cursor";
/// progress notifications name a token of a request in progress, with increasing progress.
pub const PROGRESS: &str = "server.progress";
/// after notifications/cancelled for a request in flight, the server keeps serving.
pub const CANCELLATION: &str = "server.cancellation";
/// several requests in flight at once are each answered, by id.
pub const CONCURRENT: &str = "server.concurrent";

/// The syslog levels, least severe first.
pub const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];
/// The level the validator asks for.
pub const ASKED_LEVEL: &str = "error";

/// The cursor sent by [`bogus_cursor`].
pub const BOGUS: &str = "mcp-conformance-bogus-cursor";

/// Asks for completions of the first prompt argument, else the first template variable.
pub async fn complete(
    peer: &mut impl Peer,
    capabilities: &Value,
    prompts: &[Value],
    templates: &[Value],
) -> Finding {
    if capabilities.get("completions").is_none() {
        return Finding::skip("the server does not declare `completions`");
    }
    let prompt = prompts.iter().find_map(|p| {
        let argument = p.get("arguments")?.as_array()?.first()?.get("name")?.as_str()?;
        Some(json!({"ref": {"type": "ref/prompt", "name": p.get("name")?}, "argument": {"name": argument, "value": ""}}))
    });
    let template = || {
        templates.iter().find_map(|t| {
            let uri = t.get("uriTemplate")?.as_str()?;
            let start = uri.find('{')?;
            let end = uri[start..].find('}')? + start;
            let variable = uri[start + 1..end].trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
            let variable = variable.split([',', ':', '*']).next()?;
            Some(json!({"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": variable, "value": ""}}))
        })
    };
    let Some(params) = prompt.or_else(template) else {
        return Finding::skip("no listed prompt has an argument and no template has a variable");
    };
    let exchange = peer.request("completion/complete", Some(params)).await;
    let fail = |why: String| {
        Finding::Fail(
            Failure::new("a CompleteResult: `completion.values` at most 100 strings, `total` an integer, `hasMore` a boolean", why)
                .sent(&exchange.sent)
                .reply(&exchange),
        )
    };
    let Some(completion) = exchange.result().and_then(|r| r.get("completion")) else {
        return fail("no `completion` in a result".into());
    };
    let Some(values) = completion.get("values").and_then(Value::as_array) else {
        return fail("no `values` array".into());
    };
    if values.len() > 100 || !values.iter().all(Value::is_string) {
        return fail(format!(
            "{} value(s), not all strings or over 100",
            values.len()
        ));
    }
    if !matches!(completion.get("total"), None | Some(Value::Null)) && !completion["total"].is_u64()
    {
        return fail(format!("total is {}", completion["total"]));
    }
    if !matches!(
        completion.get("hasMore"),
        None | Some(Value::Null | Value::Bool(_))
    ) {
        return fail(format!("hasMore is {}", completion["hasMore"]));
    }
    Finding::pass_with(format!("{} value(s)", values.len()))
}

/// Sets the log level to [`ASKED_LEVEL`].
/// Returns the finding and where the answer is in the session's log (the messages after it
/// come after the level was set; the log may already hold some read ahead of the answer).
pub async fn set_level(peer: &mut impl Peer) -> (Finding, usize) {
    let exchange = peer
        .request("logging/setLevel", Some(json!({"level": ASKED_LEVEL})))
        .await;
    let id = serde_json::from_str::<Value>(&exchange.sent)
        .ok()
        .and_then(|m| m.get("id").cloned());
    let log = since(peer, 0);
    let after = log
        .iter()
        .position(|m| crate::stdio::is_response(m) && m.get("id") == id.as_ref())
        .map_or(log.len(), |at| at + 1);
    if exchange
        .result()
        .and_then(Value::as_object)
        .is_some_and(|r| r.keys().all(|k| k == "_meta"))
    {
        return (Finding::pass(), after);
    }
    let failure = Failure::new("an empty result", exchange.received())
        .sent(&exchange.sent)
        .reply(&exchange);
    (Finding::Fail(failure), after)
}

/// Judges the log messages that came after the level was set (`after`).
pub fn judge_levels(after: &[Value]) -> Finding {
    let floor = LEVELS.iter().position(|l| *l == ASKED_LEVEL).unwrap_or(0);
    let messages: Vec<&Value> = after
        .iter()
        .filter(|m| m.get("method").and_then(Value::as_str) == Some("notifications/message"))
        .collect();
    for message in &messages {
        let level = message
            .pointer("/params/level")
            .and_then(Value::as_str)
            .unwrap_or("(none)");
        match LEVELS.iter().position(|l| *l == level) {
            Some(index) if index >= floor => {}
            Some(_) => {
                return Finding::Fail(
                    Failure::new(format!("log messages at `{ASKED_LEVEL}` or above after logging/setLevel {ASKED_LEVEL}"), format!("a `{level}` message"))
                        .received(Some(message.to_string())),
                )
            }
            None => {
                return Finding::Fail(
                    Failure::new("a log level of RFC 5424 (debug … emergency)", format!("level `{level}`"))
                        .received(Some(message.to_string())),
                )
            }
        }
    }
    Finding::pass_with(format!("{} log message(s) after setLevel", messages.len()))
}

/// Asks the first declared list for a page with a cursor the server never issued.
pub async fn bogus_cursor(
    peer: &mut impl Peer,
    capabilities: &Value,
    kinds: &[ListKind],
) -> Finding {
    let Some(kind) = kinds
        .iter()
        .find(|k| capabilities.get(k.capability).is_some())
    else {
        return Finding::skip("the server declares no list (tools, prompts, resources)");
    };
    let exchange = peer
        .request(kind.method, Some(json!({"cursor": BOGUS})))
        .await;
    expect_invalid_params(
        &exchange,
        &format!("`{}` with the cursor `{BOGUS}`", kind.method),
    )
}

/// Judges every `notifications/progress` in the session's log against the calls that carried
/// progress tokens: a token of ours, sent before its response, progress increasing.
pub fn judge_progress(log: &[Value], calls: &[Call]) -> Finding {
    if calls.is_empty() {
        return Finding::skip("no request carried a progress token (no tool could be called)");
    }
    let ids: HashMap<String, Value> = calls
        .iter()
        .filter_map(|c| {
            serde_json::from_str::<Value>(&c.exchange.sent)
                .ok()
                .map(|m| (c.token.clone(), m["id"].clone()))
        })
        .collect();
    let mut last: HashMap<String, f64> = HashMap::new();
    let mut answered: Vec<Value> = Vec::new();
    let mut count = 0;
    for message in log {
        if crate::stdio::is_response(message) {
            answered.push(message["id"].clone());
            continue;
        }
        if message.get("method").and_then(Value::as_str) != Some("notifications/progress") {
            continue;
        }
        count += 1;
        let fail = |why: String| {
            Finding::Fail(
                Failure::new(
                    "progress for a token of a request in progress, its progress increasing",
                    why,
                )
                .received(Some(message.to_string())),
            )
        };
        let token = match message.pointer("/params/progressToken") {
            Some(Value::String(t)) => t.clone(),
            Some(other) => other.to_string(),
            None => return fail("no progressToken".into()),
        };
        let Some(id) = ids.get(&token) else {
            return fail(format!("the token {token} was never sent"));
        };
        if answered.contains(id) {
            return fail(format!(
                "progress for {token} after the response to its request"
            ));
        }
        let Some(progress) = message.pointer("/params/progress").and_then(Value::as_f64) else {
            return fail("no numeric progress".into());
        };
        if let Some(before) = last.insert(token.clone(), progress) {
            if progress <= before {
                return fail(format!("progress {progress} after {before} for {token}"));
            }
        }
    }
    Finding::pass_with(format!(
        "{count} progress notification(s) for {} token(s) of {} call(s)",
        last.len(),
        calls.len()
    ))
}

/// Cancels requests in flight: the calls that were not answered in time (`cancelled`), or
/// else a fresh request cancelled at once; the server must answer a `ping` afterwards.
pub async fn cancellation(
    peer: &mut impl Peer,
    cancelled: &[Exchange],
    fresh: Option<Value>,
    patience: Duration,
) -> Finding {
    let mut what = Vec::new();
    let mut ids = Vec::new();
    for exchange in cancelled {
        if let Ok(sent) = serde_json::from_str::<Value>(&exchange.sent) {
            ids.push(sent["id"].clone());
        }
    }
    if ids.is_empty() {
        let Some(message) = fresh else {
            return Finding::skip(
                "nothing to cancel: no tool may be called and no list is declared",
            );
        };
        let id = message["id"].clone();
        // Sent and cancelled at once; the answer, if it comes, is not awaited.
        let pending = peer.all_at_once(vec![message], Duration::from_millis(1));
        let _ = pending.await;
        ids.push(id);
        what.push("a request cancelled as soon as sent".to_string());
    } else {
        what.push(format!(
            "{} call(s) still running after {patience:?}",
            ids.len()
        ));
    }
    for id in &ids {
        peer.tell(
            "notifications/cancelled",
            Some(json!({"requestId": id, "reason": "mcp-conformance: cancellation check"})),
        )
        .await;
    }
    let mark = super::session::peer::mark(peer);
    let id = peer.fresh_id();
    let exchanges = peer
        .all_at_once(vec![request(id, "ping", None)], peer_timeout(patience))
        .await;
    let ping = &exchanges[0];
    if ping.result().is_none() {
        return Finding::Fail(
            Failure::new(
                "the server keeps serving after notifications/cancelled: `ping` answered",
                ping.received(),
            )
            .sent(&ping.sent)
            .timed(ping.ran_out()),
        );
    }
    let late = since(peer, mark)
        .iter()
        .filter(|m| ids.contains(&m["id"]) && m.get("method").is_none())
        .count();
    let note = if late > 0 {
        format!("; {late} response(s) to a cancelled request came (allowed when it had completed)")
    } else {
        String::new()
    };
    Finding::pass_with(format!(
        "{} cancelled, ping answered{note}",
        what.join(", ")
    ))
}

/// A bound for a request the server should answer at once, however slow its tools.
fn peer_timeout(patience: Duration) -> Duration {
    patience.max(Duration::from_secs(2))
}

/// Sends several requests at once (pings and the declared lists) and checks each is
/// answered by its id.
pub async fn concurrent(
    peer: &mut impl Peer,
    capabilities: &Value,
    kinds: &[ListKind],
    bound: Duration,
) -> Finding {
    let mut methods = vec!["ping"];
    methods.extend(
        kinds
            .iter()
            .filter(|k| capabilities.get(k.capability).is_some())
            .map(|k| k.method),
    );
    methods.extend(["ping", "ping"]);
    let messages: Vec<Value> = methods
        .iter()
        .map(|m| request(peer.fresh_id(), m, None))
        .collect();
    let exchanges = peer.all_at_once(messages, bound).await;
    for exchange in &exchanges {
        if exchange.reply.is_err() {
            return Finding::Fail(
                Failure::new(
                    format!(
                        "each of {} requests in flight answered by its id",
                        exchanges.len()
                    ),
                    exchange.received(),
                )
                .sent(&exchange.sent)
                .timed(exchange.ran_out()),
            );
        }
        if exchange.error_code().is_some() {
            return Finding::Fail(
                Failure::new(
                    "results for requests in flight together",
                    exchange.received(),
                )
                .sent(&exchange.sent)
                .timed(exchange.ran_out()),
            );
        }
    }
    Finding::pass_with(format!(
        "{} requests in flight, each answered",
        exchanges.len()
    ))
}
