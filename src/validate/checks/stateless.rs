//! The server checks of the stateless revision, 2026-07-28: no `initialize`, every request
//! carries its protocol version and client capabilities in `params._meta`, `server/discover`
//! tells versions, capabilities and identity.
//!
//! One session asks everything in turn (over stdio one server process, over HTTP one POST a
//! request): `server/discover` first — a server that does not answer it as a 2026-07-28
//! server [does not speak the revision](Spoken::No), and is reported so once, not failed
//! check by check — then the query checks the older revisions have too (over [`Modern`],
//! which adds the `_meta` to each request), then this revision's own, and last a
//! `subscriptions/listen` stream. The checks over every message (schema, `resultType`, cache
//! hints, log notifications, `serverInfo`) read the session's log afterwards.

use super::peer::Basics;
use super::{
    capabilities, jsonrpc, not_asked, query, schema, tools, Ctx, Found, Plan, Rpc, Unreachable,
};
use crate::validate::http::{with, without, HttpSession, Posted, Until, Wire};
use crate::validate::log::SharedLog;
use crate::validate::outcome::{excerpt, Failure, Finding};
use crate::validate::schema::STATELESS;
use crate::validate::spare::Giver;
use crate::validate::stdio::{is_response_to, Exchange, Session};
use crate::validate::target::Target;
use hyper::Method;
use serde_json::{json, Value};
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

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

/// The checks only this revision has, in report order.
pub const OWN: &[&str] = &[
    DISCOVER,
    META_REQUIRED,
    UNSUPPORTED_VERSION,
    RESULT_TYPE,
    CACHEABLE,
    SERVER_INFO,
    UNREQUESTED_LOG,
    LISTEN_ACK,
    RESOURCE_NOT_FOUND,
    HEADER_MISMATCH,
];

/// The older revisions' checks that read the same at this revision (asked with `_meta`).
pub const SHARED: &[&str] = &[
    schema::VALID,
    tools::LIST,
    tools::UNKNOWN,
    jsonrpc::UNKNOWN_METHOD,
    capabilities::HONEST,
];

/// The shared query checks, asked one after the other after `server/discover`.
const QUERIES: &[&str] = &[
    tools::LIST,
    tools::UNKNOWN,
    jsonrpc::UNKNOWN_METHOD,
    capabilities::HONEST,
];

/// The results that must carry cache hints, by the method they answer.
pub const CACHEABLE_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// The longest a `server/discover` waiting for its answer holds a start-up slot.
pub const START_SLOT_HOLD: std::time::Duration = std::time::Duration::from_secs(2);
/// By default, how long beyond twice the `initialize` probe's start-up `server/discover` may
/// stay unanswered (once the `initialize` checks are done) before the server is taken for one
/// of that era.
pub const ABANDON_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The protocol version no server supports.
pub const NO_SUCH_VERSION: &str = "1999-01-01";
/// The resource no server has.
pub const NO_SUCH_RESOURCE: &str = "mcp-conformance://no-such-resource";
/// The `_meta` key of the protocol version.
pub const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client capabilities.
pub const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of the client's identity.
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of the server's identity.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// The `_meta` key tagging a subscription's notifications.
pub const SUBSCRIPTION_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// The notification that acknowledges a `subscriptions/listen`.
pub const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// Whether the check is judged at 2026-07-28.
pub fn applies(id: &str) -> bool {
    OWN.contains(&id) || SHARED.contains(&id) || super::features_2026::applies(id)
}

/// Whether the server speaks 2026-07-28, and if so what the checks found.
#[derive(Debug)]
pub enum Spoken {
    /// It answered `server/discover` as a 2026-07-28 server: the findings.
    Yes(Vec<Found>),
    /// It did not: why, in a sentence (what it answered instead).
    No(String),
}

/// `params` with the per-request `_meta` of `version` merged in (a `_meta` already there
/// keeps its other keys).
pub fn with_meta(params: Option<Value>, version: &str) -> Value {
    let mut params = match params {
        Some(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(VERSION_KEY.into(), json!(version));
        meta.insert(CAPABILITIES_KEY.into(), json!({}));
        meta.insert(
            CLIENT_INFO_KEY.into(),
            json!({"name": "mcp-conformance-validate", "version": env!("CARGO_PKG_VERSION")}),
        );
    }
    Value::Object(params)
}

/// A session speaking 2026-07-28: each request gets the per-request `_meta`, and `ping`,
/// which this revision does not have, becomes `server/discover` (the request every server of
/// the revision must answer), so the checks that ask whether the server still serves read
/// the same at every revision.
pub struct Modern<'a, S>(pub &'a mut S);

/// The method sent at 2026-07-28 for `method`: `server/discover` for `ping`.
pub fn modern_method(method: &str) -> &str {
    if method == "ping" {
        "server/discover"
    } else {
        method
    }
}

impl<S: Rpc> Rpc for Modern<'_, S> {
    fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send {
        self.0
            .request(modern_method(method), Some(with_meta(params, STATELESS)))
    }

    fn stalled(&self) -> Option<String> {
        self.0.stalled()
    }
}

/// How a check changes the request headers a client sends (over HTTP).
type HeaderEdit = dyn Fn(Vec<(String, String)>) -> Vec<(String, String)> + Send + Sync;

/// A check judged over every session's log.
type Aggregate = (&'static str, fn(&[SharedLog]) -> Finding);

/// What a transport does beyond [`Rpc`] for this revision's own checks.
trait Transport: Rpc + Basics {
    /// Sends `message` as given (no `_meta` added) and waits for its answer; over HTTP with
    /// the request headers as a client sends them, changed by `headers`, and the HTTP status.
    fn raw(
        &mut self,
        message: Value,
        headers: &HeaderEdit,
    ) -> impl Future<Output = (Exchange, Option<u16>)> + Send;

    /// Opens `subscriptions/listen` (the request given) and returns the first message tagged
    /// with its id (or a response to it, or an acknowledgement), or why none came.
    fn listen(
        &mut self,
        message: Value,
    ) -> impl Future<Output = (String, Result<Value, String>)> + Send;
}

impl Transport for Session {
    async fn raw(&mut self, message: Value, _headers: &HeaderEdit) -> (Exchange, Option<u16>) {
        (self.request_raw(message).await, None)
    }

    async fn listen(&mut self, message: Value) -> (String, Result<Value, String>) {
        let sent = message.to_string();
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        self.log()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .methods
            .insert(id.to_string(), "subscriptions/listen".into());
        if let Err(why) = self.send_line(&sent).await {
            return (sent, Err(why));
        }
        let first = self.wait_for(|m| belongs_to(m, &id)).await;
        // Ends the subscription (stdio has no stream of its own to close).
        let cancel = json!({"requestId": id, "reason": "mcp-conformance: the acknowledgement was all it wanted"});
        let _ = self.notify("notifications/cancelled", Some(cancel)).await;
        (sent, first)
    }
}

impl Transport for HttpSession {
    async fn raw(&mut self, message: Value, headers: &HeaderEdit) -> (Exchange, Option<u16>) {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        if let Some(method) = message.get("method").and_then(Value::as_str) {
            self.log()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .methods
                .insert(id.to_string(), method.to_string());
        }
        let mut standard = self.headers();
        standard.extend(crate::validate::http::standard_headers(&message));
        let sent = message.to_string();
        let posted = self
            .send(
                Method::POST,
                headers(standard),
                Some(sent.clone().into_bytes()),
                Until::Response(id.clone()),
            )
            .await;
        let reply = answer(&posted, &id);
        (
            Exchange {
                sent: posted.sent.clone(),
                reply,
            },
            posted.status(),
        )
    }

    async fn listen(&mut self, message: Value) -> (String, Result<Value, String>) {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        self.log()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .methods
            .insert(id.to_string(), "subscriptions/listen".into());
        let mut headers = self.headers();
        headers.extend(crate::validate::http::standard_headers(&message));
        let body = message.to_string().into_bytes();
        // The stream is closed once the acknowledgement is read: that ends the subscription.
        let posted = self
            .send(
                Method::POST,
                headers,
                Some(body),
                Until::Notification(ACKNOWLEDGED.into()),
            )
            .await;
        let first = match &posted.reply {
            Ok(reply) => reply
                .messages
                .iter()
                .find(|m| belongs_to(m, &id))
                .cloned()
                .ok_or_else(|| format!("nothing for the subscription: {}", reply.describe())),
            Err(e) => Err(format!("no response: {e}")),
        };
        (posted.sent, first)
    }
}

/// The JSON-RPC response with `id` in a POST's answer, or why there is none.
fn answer(posted: &Posted, id: &Value) -> Result<Value, String> {
    match &posted.reply {
        Ok(reply) => reply
            .response_to(id)
            .cloned()
            .ok_or_else(|| format!("no JSON-RPC response with id {id}: {}", reply.describe())),
        Err(e) => Err(format!("no response: {e}")),
    }
}

/// Whether a message belongs to the subscription opened with `id`: tagged with it, its
/// acknowledgement (whatever it is tagged with), or the response to the request.
fn belongs_to(message: &Value, id: &Value) -> bool {
    message
        .pointer("/params/_meta")
        .and_then(|m| m.get(SUBSCRIPTION_KEY))
        == Some(id)
        || message.get("method").and_then(Value::as_str) == Some(ACKNOWLEDGED)
        || is_response_to(message, id)
}

/// Runs the 2026-07-28 checks selected against a stdio target.
///
/// `abandon`, called when `server/discover` is sent, gives the future that ends the wait for
/// its answer early (the default run gives up on it once the `initialize` checks are done
/// and it has waited long enough: a server of that era may stay silent).
///
/// `giver`, when given, hands the server to the `initialize` plan once it answered
/// `server/discover` as a server of that era (see [`crate::validate::spare`]).
pub async fn run_stdio<A: Future<Output = ()> + Send>(
    target: &Target,
    plan: &Plan,
    abandon: impl FnOnce() -> A + Send,
    mut giver: Option<Giver>,
) -> Result<Spoken, Unreachable> {
    let ctx = Ctx::new(target.clone(), plan.timeout);
    // A start-up slot shared with the other revisions' launches, held until `server/discover`
    // is answered (the start-up is over then).
    let slot = ctx
        .starts
        .acquire()
        .await
        .map_err(|e| Unreachable(e.to_string()))?;
    let mut session = ctx.open("2026-07-28").map_err(Unreachable)?;
    session
        .log()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .revision = Some(STATELESS.into());
    let spoken = run_session(&mut session, plan, false, Some(slot), abandon, &mut giver).await;
    match giver {
        Some(giver) if giver.ready() && session.stalled.is_none() => giver.give(session).await,
        giver => {
            if let Some(giver) = giver {
                giver.none();
            }
            session.kill().await;
        }
    }
    Ok(finish(spoken, &ctx.logs(), plan))
}

/// Runs the 2026-07-28 checks selected against a Streamable HTTP target.
///
/// `abandon` as for [`run_stdio`].
pub async fn run_http<A: Future<Output = ()> + Send>(
    target: &Target,
    plan: &Plan,
    abandon: impl FnOnce() -> A + Send,
) -> Result<Spoken, Unreachable> {
    let Target::Http { url, headers } = target else {
        return Err(Unreachable("not an HTTP target".into()));
    };
    let wire =
        Wire::new(url, headers, plan.ca_cert.as_deref(), plan.timeout).map_err(Unreachable)?;
    let mut session = HttpSession::new(Arc::new(wire), "2026-07-28");
    session.revision = Some(STATELESS.into());
    session
        .log()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .revision = Some(STATELESS.into());
    let logs = vec![session.log()];
    let spoken = run_session(&mut session, plan, true, None, abandon, &mut None).await;
    if let Spoken::No(why) = &spoken {
        // A server that cannot be connected to is unreachable, not of another era.
        if why.contains("cannot connect to") {
            return Err(Unreachable(why.clone()));
        }
    }
    Ok(finish(spoken, &logs, plan))
}

/// The aggregate checks over the session's log, added to what the session found.
fn finish(spoken: Spoken, logs: &[SharedLog], plan: &Plan) -> Spoken {
    let Spoken::Yes(mut found) = spoken else {
        return spoken;
    };
    let aggregates: [Aggregate; 5] = [
        (schema::VALID, schema::judge),
        (SERVER_INFO, judge_server_info),
        (RESULT_TYPE, judge_result_type),
        (CACHEABLE, judge_cacheable),
        (UNREQUESTED_LOG, judge_no_log),
    ];
    for (id, judge) in aggregates {
        if plan.wants(id) {
            let started = Instant::now();
            found.push(Found::new(
                id,
                STATELESS,
                judge(logs),
                started.elapsed().as_millis(),
            ));
        }
    }
    Spoken::Yes(found)
}

/// `server/discover`, then every selected check in turn.
async fn run_session<S: Transport + super::peer::Peer, A: Future<Output = ()> + Send>(
    session: &mut S,
    plan: &Plan,
    http: bool,
    start_slot: Option<tokio::sync::SemaphorePermit<'static>>,
    abandon: impl FnOnce() -> A + Send,
    giver: &mut Option<Giver>,
) -> Spoken {
    let started = Instant::now();
    // The start-up slot goes back when the answer comes, or after START_SLOT_HOLD at most (a
    // server that never answers must not hold up the other revisions' launches).
    let (answered, answer_seen) = tokio::sync::oneshot::channel::<()>();
    if let Some(slot) = start_slot {
        tokio::spawn(async move {
            let _ = tokio::time::timeout(START_SLOT_HOLD, answer_seen).await;
            drop(slot);
        });
    }
    let mut modern = Modern(&mut *session);
    let discover = tokio::select! {
        exchange = modern.request("server/discover", None) => exchange,
        () = abandon() => {
            return Spoken::No(format!(
                "no answer to `server/discover` within {} ms, by when the `initialize` checks were done",
                started.elapsed().as_millis()
            ));
        }
    };
    drop(answered);
    if let Some(why) = not_modern(&discover) {
        // Answered as a server of the `initialize` era: the server may be handed over.
        if discover.reply.is_ok() {
            let id = serde_json::from_str::<Value>(&discover.sent)
                .ok()
                .and_then(|m| m.get("id").cloned());
            if let (Some(giver), Some(id)) = (giver.as_mut(), id) {
                giver.answered(id);
            }
        }
        return Spoken::No(why);
    }
    if let Some(giver) = giver.take() {
        giver.none();
    }
    let mut found = Vec::new();
    if plan.wants(DISCOVER) {
        found.push(Found::new(
            DISCOVER,
            STATELESS,
            judge_discover(&discover),
            started.elapsed().as_millis(),
        ));
    }
    let capabilities = discover
        .result()
        .and_then(|r| r.get("capabilities"))
        .cloned()
        .unwrap_or_default();
    let own: &[&'static str] = &[
        META_REQUIRED,
        UNSUPPORTED_VERSION,
        RESOURCE_NOT_FOUND,
        HEADER_MISMATCH,
        LISTEN_ACK,
    ];
    for id in QUERIES
        .iter()
        .chain(own)
        .copied()
        .filter(|id| plan.wants(id))
    {
        let started = Instant::now();
        let finding = match id {
            HEADER_MISMATCH if !http => {
                Finding::skip("an HTTP check; the target is a stdio command")
            }
            _ if session.stalled().is_some() => not_asked(&session.stalled().unwrap_or_default()),
            META_REQUIRED => meta_required(session, &capabilities, http).await,
            UNSUPPORTED_VERSION => unsupported_version(session, &capabilities, http).await,
            RESOURCE_NOT_FOUND => resource_not_found(session, &capabilities).await,
            HEADER_MISMATCH => header_mismatch(session, &capabilities).await,
            LISTEN_ACK => listen_ack(session, &capabilities).await,
            other => query(other, &mut Modern(&mut *session), &capabilities).await,
        };
        found.push(Found::new(
            id,
            STATELESS,
            finding,
            started.elapsed().as_millis(),
        ));
    }
    // The feature checks that still apply, last: their tool calls and cancellations come
    // after this revision's own checks.
    found.extend(super::features_2026::run(session, plan, &discover).await);
    Spoken::Yes(found)
}

/// Why the answer to `server/discover` is not a 2026-07-28 server's, if it is not.
fn not_modern(discover: &Exchange) -> Option<String> {
    let code = discover.error_code();
    match (&discover.reply, discover.result()) {
        (Err(why), _) => Some(format!(
            "`server/discover` got no JSON-RPC answer of its own: {}",
            excerpt(why)
        )),
        (Ok(_), Some(_)) => None,
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
                .received(Some(exchange.received())),
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
            .received(Some(exchange.received())),
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
            .received(Some(exchange.received())),
    ))
}

/// A request whose `params` carry no `_meta` at all.
async fn meta_required<S: Transport>(session: &mut S, capabilities: &Value, http: bool) -> Finding {
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
async fn unsupported_version<S: Transport>(
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
                .received(Some(exchange.received())),
        ),
    }
}

/// `resources/read` of a resource that does not exist.
async fn resource_not_found<S: Transport>(session: &mut S, capabilities: &Value) -> Finding {
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
        .received(Some(exchange.received())),
    )
}

/// Three requests whose headers disagree with the body: `Mcp-Method` naming another method,
/// `Mcp-Method` missing, and (tools declared) `Mcp-Name` naming another tool.
async fn header_mismatch<S: Transport>(session: &mut S, capabilities: &Value) -> Finding {
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
            Some(json!({"name": tools::NO_SUCH_TOOL, "arguments": {}})),
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
async fn listen_ack<S: Transport>(session: &mut S, capabilities: &Value) -> Finding {
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
        Err(why) => return fail("no acknowledgement".into(), why),
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
fn judge_result_type(logs: &[SharedLog]) -> Finding {
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
fn judge_cacheable(logs: &[SharedLog]) -> Finding {
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
fn judge_no_log(logs: &[SharedLog]) -> Finding {
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
fn judge_server_info(logs: &[SharedLog]) -> Finding {
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
    use crate::rules;

    #[test]
    fn every_check_judged_at_2026_07_28_has_a_rule_that_applies_there() {
        let not_applicable = |id: &str| {
            super::super::features_2026::NOT_APPLICABLE
                .iter()
                .any(|(na, _)| *na == id)
        };
        for id in super::super::ALL
            .iter()
            .filter(|id| applies(id) && !not_applicable(id))
        {
            let rule = rules::find(id).unwrap_or_else(|| panic!("{id} has no rule"));
            assert!(
                rule.applies_at(STATELESS),
                "{id} is judged at 2026-07-28 but its rule does not apply there"
            );
        }
        for id in OWN {
            assert!(
                !rules::find(id).unwrap().applies_at("2025-11-25"),
                "{id} is a 2026-07-28 check"
            );
        }
        // The handshake's checks are not run at 2026-07-28, and their rules say so.
        for id in [super::super::initialize::RESULT, super::super::ping::PING] {
            assert!(
                !applies(id) && !rules::find(id).unwrap().applies_at(STATELESS),
                "{id}"
            );
        }
    }

    #[test]
    fn the_meta_is_merged_into_the_params() {
        let params = with_meta(
            Some(json!({"name": "x", "_meta": {"progressToken": 1}})),
            STATELESS,
        );
        assert_eq!(params["name"], "x");
        assert_eq!(params["_meta"]["progressToken"], 1);
        assert_eq!(params["_meta"][VERSION_KEY], STATELESS);
        assert_eq!(params["_meta"][CAPABILITIES_KEY], json!({}));
    }

    #[test]
    fn a_discover_answer_tells_the_era() {
        let exchange = |reply: Value| Exchange {
            sent: String::new(),
            reply: Ok(reply),
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
