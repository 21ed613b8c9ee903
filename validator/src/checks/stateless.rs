//! The server checks of the stateless revision, 2026-07-28: no `initialize`, every request
//! carries its protocol version and client capabilities in `params._meta`, `server/discover`
//! tells versions, capabilities and identity. What is asked, in which order, on which
//! session is the plan's ([`crate::checks::plan::stateless`]); the checks here ask through
//! [`Modern`] and [`Transport`], and judge the session's log.

use super::common::names::NO_SUCH_TOOL;
use super::session::modern::{with_meta, Modern};
use super::session::transport::{HeaderEdit, Transport, ACKNOWLEDGED, SUBSCRIPTION_KEY};
use super::session::Rpc;
use crate::http::{with, without};
use crate::log::SharedLog;
use crate::outcome::{excerpt, Failure, Finding};
use crate::schema::STATELESS;
use crate::stdio::Exchange;
use serde_json::{json, Value};

/// answers `server/discover` with supportedVersions (2026-07-28 among them) and capabilities.
pub const DISCOVER: &str = "server.discover";
/// identifies itself (`io.modelcontextprotocol/serverInfo`) in every result's `_meta`.
pub const SERVER_INFO: &str = "server.result.server-info";
/// a request without the required `_meta` fields gets -32602 (HTTP: 400).
pub const META_REQUIRED: &str = "server.meta.required";
/// a request with a protocol version it does not support gets -32022 (HTTP: 400).
pub const UNSUPPORTED_VERSION: &str = "server.meta.unsupported-version";
/// every result carries `resultType`.
pub const RESULT_TYPE: &str = "server.result.type";
/// the cacheable results carry `ttlMs` (>= 0) and `cacheScope`.
pub const CACHEABLE: &str = "server.result.cacheable";
/// no `notifications/message` for a request without `io.modelcontextprotocol/logLevel`.
pub const UNREQUESTED_LOG: &str = "server.logging.unrequested";
/// `subscriptions/listen` is acknowledged first, tagged with its subscription id.
pub const LISTEN_ACK: &str = "server.subscriptions.acknowledged";
/// reading a resource that does not exist gets -32602.
pub const RESOURCE_NOT_FOUND: &str = "server.resources.not-found";
/// headers that disagree with the body (or a missing `Mcp-Method`) get 400 and -32020.
pub const HEADER_MISMATCH: &str = "server.http.header-mismatch";

/// The results that must carry cache hints, by the method they answer.
pub const CACHEABLE_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// The protocol version no server supports.
pub const NO_SUCH_VERSION: &str = "1999-01-01";
/// The resource no server has.
pub const NO_SUCH_RESOURCE: &str = "mcp-conformance://no-such-resource";
/// The `_meta` key of the server's identity.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// Why the answer to `server/discover` is not a 2026-07-28 server's, if it is not: only an
/// answer can say so (a JSON-RPC error, a response without a result, over HTTP a whole
/// response without a JSON-RPC answer). `None` for a result (judged by [`judge_discover`])
/// and for no answer at all, which says nothing of the revision (the plan reports it as
/// unanswered).
pub fn not_modern(discover: &Exchange) -> Option<String> {
    let code = discover.error_code();
    match (&discover.reply, discover.result()) {
        (Err(why), _) if discover.heard() => Some(format!(
            "`server/discover` got no JSON-RPC answer of its own: {}",
            excerpt(&why.why)
        )),
        (Err(_), _) | (Ok(_), Some(_)) => None,
        (Ok(reply), None) if code == Some(-32022) => {
            let supported = reply
                .pointer("/error/data/supported")
                .map_or_else(|| "none named".into(), Value::to_string);
            Some(format!("`server/discover` at 2026-07-28 answered -32022 (unsupported protocol version; it supports {supported})"))
        }
        (Ok(reply), None) => Some(format!(
            "`server/discover` answered {}: a server of the `initialize` era",
            match code {
                Some(code) => format!(
                    "error {code} ({})",
                    excerpt(
                        reply
                            .pointer("/error/message")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                    )
                ),
                None => format!(
                    "with neither a result nor an error: {}",
                    excerpt(&reply.to_string())
                ),
            }
        )),
    }
}

/// The finding of a run at 2026-07-28 against a server that does not speak it.
pub fn does_not_speak(why: &str) -> Finding {
    Finding::skip(format!(
        "not applicable: the server does not speak 2026-07-28 ({why})"
    ))
}

/// `supportedVersions` (strings, 2026-07-28 among them) and `capabilities` (an object).
pub fn judge_discover(exchange: &Exchange) -> Finding {
    let Some(result) = exchange.result() else {
        return Finding::Fail(
            Failure::new("a DiscoverResult", "no result")
                .sent(&exchange.sent)
                .reply(&exchange),
        );
    };
    let mut wrong = Vec::new();
    let versions = result.get("supportedVersions").and_then(Value::as_array);
    match versions {
        None => wrong.push("supportedVersions is not an array".to_string()),
        Some(list) if !list.iter().all(Value::is_string) => {
            wrong.push("supportedVersions holds a non-string".into())
        }
        Some(list) if !list.contains(&json!(STATELESS)) => wrong.push(format!(
            "supportedVersions {} lacks 2026-07-28, the version it just answered at",
            Value::Array(list.clone())
        )),
        Some(_) => {}
    }
    if !result.get("capabilities").is_some_and(Value::is_object) {
        wrong.push("capabilities is not an object".into());
    }
    if wrong.is_empty() {
        let versions = versions
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        return Finding::pass_with(format!("supports {versions}"));
    }
    Finding::Fail(
        Failure::new("a result with supportedVersions (strings, 2026-07-28 among them) and capabilities (an object)", wrong.join("; "))
            .sent(&exchange.sent)
            .reply(&exchange),
    )
}

/// An era-unambiguous request to break: `tools/list` when tools are declared, else
/// `server/discover` (which every 2026-07-28 server implements).
fn probe_method(capabilities: &Value) -> &'static str {
    if capabilities.get("tools").is_some() {
        "tools/list"
    } else {
        "server/discover"
    }
}

/// Judges an error answer: the code, and over HTTP the status.
fn judge_error(
    exchange: &Exchange,
    status: Option<u16>,
    code: i64,
    http_status: Option<u16>,
    expected: &str,
) -> Option<Finding> {
    let code_ok = exchange.error_code() == Some(code);
    let status_ok = http_status.is_none() || status == http_status;
    if code_ok && status_ok {
        return None;
    }
    let mut actual = match (exchange.error_code(), exchange.result()) {
        (Some(other), _) => format!("error code {other}"),
        (None, Some(_)) => "a result (the request was served)".to_string(),
        _ => format!("no JSON-RPC answer ({})", excerpt(&exchange.received())),
    };
    if let (Some(wanted), Some(got)) = (http_status, status) {
        if got != wanted {
            actual.push_str(&format!(", HTTP status {got}"));
        }
    }
    Some(Finding::Fail(
        Failure::new(expected, actual)
            .sent(&exchange.sent)
            .reply(&exchange),
    ))
}

/// A request whose `params` carry no `_meta` at all.
pub async fn meta_required<S: Transport>(
    session: &mut S,
    capabilities: &Value,
    http: bool,
) -> Finding {
    let method = probe_method(capabilities);
    let message =
        json!({"jsonrpc": "2.0", "id": session.fresh_id(), "method": method, "params": {}});
    let (exchange, status) = session.raw(message, &|h| h).await;
    let expected = if http {
        "400 Bad Request and error -32602 (Invalid params) for a request without the required _meta fields"
    } else {
        "error -32602 (Invalid params) for a request without the required _meta fields"
    };
    judge_error(&exchange, status, -32602, http.then_some(400), expected)
        .unwrap_or_else(|| Finding::pass_with(format!("`{method}` without _meta: -32602")))
}

/// A request at a protocol version no server supports (header and body agreeing over HTTP).
pub async fn unsupported_version<S: Transport>(
    session: &mut S,
    capabilities: &Value,
    http: bool,
) -> Finding {
    let method = probe_method(capabilities);
    let params = with_meta(None, NO_SUCH_VERSION);
    let message =
        json!({"jsonrpc": "2.0", "id": session.fresh_id(), "method": method, "params": params});
    let (exchange, status) = session
        .raw(message, &|h| {
            with(h, "MCP-Protocol-Version", NO_SUCH_VERSION)
        })
        .await;
    let expected = format!(
        "{}error -32022 (UnsupportedProtocolVersion) with data.supported listing its versions, for `{method}` at {NO_SUCH_VERSION}",
        if http { "400 Bad Request and " } else { "" }
    );
    if let Some(failed) = judge_error(&exchange, status, -32022, http.then_some(400), &expected) {
        return failed;
    }
    let supported = exchange
        .reply
        .as_ref()
        .ok()
        .and_then(|r| r.pointer("/error/data/supported"));
    match supported.and_then(Value::as_array) {
        Some(list) if !list.is_empty() && list.iter().all(Value::is_string) => {
            Finding::pass_with(format!("-32022, supported {}", Value::Array(list.clone())))
        }
        _ => Finding::Fail(
            Failure::new(expected, "-32022 without a data.supported list of versions")
                .sent(&exchange.sent)
                .reply(&exchange),
        ),
    }
}

/// `resources/read` of a resource that does not exist.
pub async fn resource_not_found<S: Transport>(session: &mut S, capabilities: &Value) -> Finding {
    if capabilities.get("resources").is_none() {
        return Finding::skip("the server declares no `resources` capability");
    }
    let exchange = Modern(&mut *session)
        .request("resources/read", Some(json!({"uri": NO_SUCH_RESOURCE})))
        .await;
    if exchange.error_code() == Some(-32602) {
        return Finding::pass();
    }
    let actual = match (exchange.error_code(), exchange.result()) {
        (Some(-32002), _) => "error -32002, the code of 2025-11-25 and earlier".to_string(),
        (Some(code), _) => format!("error code {code}"),
        (None, Some(result)) => format!("a result: {}", excerpt(&result.to_string())),
        _ => "no response".into(),
    };
    Finding::Fail(
        Failure::new(
            "error -32602 (Invalid params) for a resource that does not exist",
            actual,
        )
        .sent(&exchange.sent)
        .reply(&exchange),
    )
}

/// Three requests whose headers disagree with the body: `Mcp-Method` naming another method,
/// `Mcp-Method` missing, and (tools declared) `Mcp-Name` naming another tool.
pub async fn header_mismatch<S: Transport>(session: &mut S, capabilities: &Value) -> Finding {
    let discover = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "server/discover", "params": with_meta(None, STATELESS)});
    let mut cases: Vec<(String, Value, Box<HeaderEdit>)> = vec![
        (
            "`Mcp-Method: tools/list` on a `server/discover` body".into(),
            discover(session.fresh_id()),
            Box::new(|h| with(h, "Mcp-Method", "tools/list")),
        ),
        (
            "no `Mcp-Method` header".into(),
            discover(session.fresh_id()),
            Box::new(|h| without(h, "Mcp-Method")),
        ),
    ];
    if capabilities.get("tools").is_some() {
        let params = with_meta(
            Some(json!({"name": NO_SUCH_TOOL, "arguments": {}})),
            STATELESS,
        );
        let call = json!({"jsonrpc": "2.0", "id": session.fresh_id(), "method": "tools/call", "params": params});
        cases.push((
            "`Mcp-Name: mcp-conformance-other-tool` on a `tools/call` of another name".into(),
            call,
            Box::new(|h| with(h, "Mcp-Name", "mcp-conformance-other-tool")),
        ));
    }
    let count = cases.len();
    for (what, message, headers) in cases {
        let (exchange, status) = session.raw(message, &*headers).await;
        let expected = format!("400 Bad Request and error -32020 (HeaderMismatch) for {what}");
        if let Some(failed) = judge_error(&exchange, status, -32020, Some(400), &expected) {
            return failed;
        }
    }
    Finding::pass_with(format!("{count} mismatches refused with 400 and -32020"))
}

/// `subscriptions/listen` for the list changes the server declares: the first message of
/// the subscription is its acknowledgement, tagged with the request's id.
pub async fn listen_ack<S: Transport>(session: &mut S, capabilities: &Value) -> Finding {
    let mut filter = serde_json::Map::new();
    for (capability, field) in [
        ("tools", "toolsListChanged"),
        ("prompts", "promptsListChanged"),
        ("resources", "resourcesListChanged"),
    ] {
        if capabilities.pointer(&format!("/{capability}/listChanged")) == Some(&json!(true)) {
            filter.insert(field.into(), json!(true));
        }
    }
    // A subscription carries list changes and resource updates: a server that declares
    // neither has nothing to send on one (and may not serve `subscriptions/listen` at all).
    let subscribes = capabilities.pointer("/resources/subscribe") == Some(&json!(true));
    if filter.is_empty() && !subscribes {
        return Finding::skip("the server declares no list changes and no resource subscriptions: nothing to listen for");
    }
    let id = json!(session.fresh_id());
    let params = with_meta(Some(json!({"notifications": filter})), STATELESS);
    let message =
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params});
    let (sent, first) = session.listen(message).await;
    let expected = format!("`{ACKNOWLEDGED}` first, with _meta `{SUBSCRIPTION_KEY}`: {id}");
    let fail = |actual: String, received: String| {
        Finding::Fail(
            Failure::new(expected.clone(), actual)
                .sent(&sent)
                .received(Some(received)),
        )
    };
    let first = match first {
        Ok(first) => first,
        Err(why) => {
            return Finding::Fail(
                Failure::new(expected, "no acknowledgement")
                    .sent(&sent)
                    .received(Some(&why.why))
                    .timed(why.ran_out),
            )
        }
    };
    let tag = first
        .pointer("/params/_meta")
        .and_then(|m| m.get(SUBSCRIPTION_KEY));
    match first.get("method").and_then(Value::as_str) {
        Some(ACKNOWLEDGED) if tag == Some(&id) => {
            let agreed = first
                .pointer("/params/notifications")
                .map_or_else(|| "nothing".into(), Value::to_string);
            Finding::pass_with(format!("acknowledged, agreeing to {agreed}"))
        }
        Some(ACKNOWLEDGED) => fail(
            format!(
                "the acknowledgement carries subscriptionId {}",
                tag.map_or_else(|| "(none)".into(), Value::to_string)
            ),
            first.to_string(),
        ),
        Some(other) => fail(
            format!("`{other}` on the subscription before its acknowledgement"),
            first.to_string(),
        ),
        None => {
            let what = if first.get("error").is_some() {
                "an error response"
            } else {
                "a response"
            };
            fail(
                format!("{what} to `subscriptions/listen` and no acknowledgement"),
                first.to_string(),
            )
        }
    }
}

/// Every (kept) message of every session, with the method of the request it answers.
fn messages(
    logs: &[SharedLog],
    mut each: impl FnMut(&Value, Option<&str>) -> Option<Finding>,
) -> Result<usize, Finding> {
    let mut count = 0;
    for log in logs {
        let log = log.lock().unwrap_or_else(|e| e.into_inner());
        for message in &log.seen {
            let answered = if message.get("method").is_some() {
                None
            } else {
                message
                    .get("id")
                    .and_then(|id| log.methods.get(&id.to_string()))
                    .map(String::as_str)
            };
            if let Some(failed) = each(message, answered) {
                return Err(failed);
            }
            count += 1;
        }
    }
    Ok(count)
}

fn failed_on(expected: &str, actual: String, message: &Value) -> Option<Finding> {
    Some(Finding::Fail(
        Failure::new(expected, actual).received(Some(message.to_string())),
    ))
}

/// Every result carries a string `resultType`, `complete` or `input_required`.
pub fn judge_result_type(logs: &[SharedLog]) -> Finding {
    let mut results = 0;
    let judged = messages(logs, |message, answered| {
        let result = message.get("result")?;
        results += 1;
        let kind = result.get("resultType");
        if matches!(
            kind.and_then(Value::as_str),
            Some("complete" | "input_required")
        ) {
            return None;
        }
        let what = answered.map_or(String::new(), |m| format!(" (the answer to `{m}`)"));
        let actual = match kind {
            None => format!("a result without resultType{what}"),
            Some(other) => format!("resultType {other}{what}"),
        };
        failed_on(
            "every result with resultType `complete` or `input_required`",
            actual,
            message,
        )
    });
    match judged {
        Err(failed) => failed,
        Ok(_) if results == 0 => Finding::skip("no result came back"),
        Ok(_) => Finding::pass_with(format!("{results} result(s)")),
    }
}

/// The complete results of the cacheable operations carry `ttlMs` (an integer >= 0) and
/// `cacheScope` (`public` or `private`).
pub fn judge_cacheable(logs: &[SharedLog]) -> Finding {
    let mut judged_methods = Vec::new();
    let outcome = messages(logs, |message, answered| {
        let method = answered.filter(|m| CACHEABLE_METHODS.contains(m))?;
        let result = message.get("result")?;
        if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
            return None;
        }
        if !judged_methods.contains(&method.to_string()) {
            judged_methods.push(method.to_string());
        }
        let ttl_ok = result
            .get("ttlMs")
            .and_then(Value::as_i64)
            .is_some_and(|t| t >= 0)
            || result.get("ttlMs").and_then(Value::as_u64).is_some();
        let scope_ok = matches!(
            result.get("cacheScope").and_then(Value::as_str),
            Some("public" | "private")
        );
        if ttl_ok && scope_ok {
            return None;
        }
        let shown = |key: &str| {
            result
                .get(key)
                .map_or_else(|| "absent".to_string(), Value::to_string)
        };
        failed_on(
            "ttlMs (an integer >= 0) and cacheScope (`public` or `private`) on every complete result of server/discover, tools/list, prompts/list, resources/list, resources/templates/list and resources/read",
            format!("the answer to `{method}` has ttlMs {} and cacheScope {}", shown("ttlMs"), shown("cacheScope")),
            message,
        )
    });
    match outcome {
        Err(failed) => failed,
        Ok(_) if judged_methods.is_empty() => Finding::skip("no cacheable result came back"),
        Ok(_) => Finding::pass_with(format!("cache hints on {}", judged_methods.join(", "))),
    }
}

/// No `notifications/message`: no request of the run asked for a log level.
pub fn judge_no_log(logs: &[SharedLog]) -> Finding {
    let outcome = messages(logs, |message, _| {
        (message.get("method").and_then(Value::as_str) == Some("notifications/message")).then(
            || {
                Finding::Fail(
                Failure::new(
                    "no notifications/message: no request carried io.modelcontextprotocol/logLevel",
                    "a notifications/message",
                )
                .received(Some(message.to_string())),
            )
            },
        )
    });
    match outcome {
        Err(failed) => failed,
        Ok(count) => Finding::pass_with(format!("{count} message(s), none a log notification")),
    }
}

/// Every result's `_meta` names the server (`serverInfo` with string name and version).
pub fn judge_server_info(logs: &[SharedLog]) -> Finding {
    let mut results = 0;
    let outcome = messages(logs, |message, answered| {
        let result = message.get("result")?;
        results += 1;
        let info = result
            .pointer("/_meta")
            .and_then(|m| m.get(SERVER_INFO_KEY));
        let ok = info.is_some_and(|i| {
            i.get("name").is_some_and(Value::is_string)
                && i.get("version").is_some_and(Value::is_string)
        });
        if ok {
            return None;
        }
        let what = answered.map_or(String::new(), |m| format!(" (the answer to `{m}`)"));
        failed_on(
            "_meta.io.modelcontextprotocol/serverInfo {name, version} in every result",
            format!(
                "{}{what}",
                info.map_or_else(
                    || "no serverInfo".to_string(),
                    |i| format!("serverInfo {i}")
                )
            ),
            message,
        )
    });
    match outcome {
        Err(failed) => failed,
        Ok(_) if results == 0 => Finding::skip("no result came back"),
        Ok(_) => Finding::pass_with(format!("{results} result(s)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_discover_answer_tells_the_era() {
        let exchange = |reply: Value| Exchange {
            sent: String::new(),
            reply: Ok(reply),
            unanswered_status: None,
        };
        let legacy = exchange(
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}),
        );
        assert!(not_modern(&legacy).unwrap().contains("error -32601"));
        let other_version = exchange(
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x", "data": {"supported": ["2027-01-01"]}}}),
        );
        assert!(not_modern(&other_version).unwrap().contains("2027-01-01"));
        let modern = exchange(
            json!({"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": ["2026-07-28"], "capabilities": {}}}),
        );
        assert_eq!(not_modern(&modern), None);
        assert!(matches!(judge_discover(&modern), Finding::Pass { .. }));
    }
}
