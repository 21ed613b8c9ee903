//! `server.http.*`: the Streamable HTTP checks, and the plan that runs every check that
//! applies over HTTP ([`run_http`]): a probe session proves the server answers `initialize`
//! (else the target is unreachable), then each group of checks runs concurrently in its own
//! session (its own `initialize`, its own `Mcp-Session-Id`), so one check's misbehaviour
//! cannot disturb another's.

use super::{initialize, jsonrpc, schema, sort, stdio, Found, Plan, Unreachable, ALL};
use crate::rules::Level;
use crate::validate::http::{with, without, Handshake, HttpSession, Posted, Until, Wire};
use crate::validate::log::SharedLog;
use crate::validate::outcome::{Failure, Finding};
use crate::validate::target::Target;
use hyper::Method;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// a notification POST gets 202.
pub const NOTIFICATION_202: &str = "server.http.notification-202";
/// a POST without both Accept types gets 406.
pub const ACCEPT_REQUIRED: &str = "server.http.accept-required";
/// a session id is visible ASCII.
pub const SESSION_ID_ASCII: &str = "server.http.session-id-ascii";
/// a request with a session id the server never issued gets 404.
pub const UNKNOWN_SESSION_404: &str = "server.http.unknown-session-404";
/// a non-initialize request without a session id, when sessions are in use, gets 400.
pub const MISSING_SESSION_400: &str = "server.http.missing-session-400";
/// DELETE ends the session (then 404), or answers 405.
pub const DELETE: &str = "server.http.delete";
/// an unsupported `MCP-Protocol-Version` gets 400.
pub const PROTOCOL_VERSION_HEADER: &str = "server.http.protocol-version-header";
/// a request with a foreign `Origin` gets 403.
pub const ORIGIN: &str = "server.http.origin";
/// GET answers an SSE stream or 405.
pub const GET_STREAM: &str = "server.http.get-stream";
/// a JSON array is rejected from 2025-06-18 on.
pub const BATCH: &str = "server.http.batch";

/// The checks that each run in a session of their own.
const OWN_SESSION: &[&str] = &[
    NOTIFICATION_202,
    ACCEPT_REQUIRED,
    UNKNOWN_SESSION_404,
    MISSING_SESSION_400,
    DELETE,
    PROTOCOL_VERSION_HEADER,
    ORIGIN,
    GET_STREAM,
    BATCH,
];

/// The session id sent where the server never issued one.
pub const NEVER_ISSUED: &str = "mcp-conformance-never-issued-0f3c9a";
/// The `MCP-Protocol-Version` no server supports.
pub const UNSUPPORTED_VERSION: &str = "1999-01-01";
/// The foreign `Origin`.
pub const FOREIGN_ORIGIN: &str = "https://mcp-conformance.invalid";
/// The revision from which a foreign `Origin` must get 403.
pub const ORIGIN_MUST_SINCE: &str = "2025-11-25";
/// The revision from which JSON-RPC batches are not part of the protocol.
pub const NO_BATCH_SINCE: &str = "2025-06-18";

/// Opens sessions and keeps every session's log and issued session id.
pub struct HttpCtx {
    wire: Arc<Wire>,
    logs: Mutex<Vec<SharedLog>>,
    issued: Mutex<Vec<(String, String)>>,
}

impl HttpCtx {
    /// A new session (nothing sent yet), logged under `label`.
    pub fn open(&self, label: &str) -> HttpSession {
        let session = HttpSession::new(self.wire.clone(), label);
        self.logs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(session.log());
        session
    }

    /// Runs a handshake on `session`, keeping the session id the server issued.
    pub async fn handshake(
        &self,
        session: &mut HttpSession,
        label: &str,
        revision: &str,
    ) -> Handshake {
        let handshake = session.handshake(revision).await;
        if let Some(id) = &session.session_id {
            self.issued
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((label.to_string(), id.clone()));
        }
        handshake
    }

    /// A new, initialized session; a failure is the reason the caller's checks are skipped.
    pub async fn open_initialized(
        &self,
        label: &str,
        revision: &str,
    ) -> Result<(HttpSession, Handshake), String> {
        let mut session = self.open(label);
        let handshake = self.handshake(&mut session, label, revision).await;
        if session.revision.is_none() {
            return Err(format!(
                "the handshake failed (see {}): {}",
                initialize::RESULT,
                crate::validate::outcome::excerpt(&handshake.init.received())
            ));
        }
        Ok((session, handshake))
    }

    fn logs(&self) -> Vec<SharedLog> {
        self.logs.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

type Results = Vec<(&'static str, String, Finding, u128, Option<Level>)>;

/// Runs the selected checks against a Streamable HTTP target.
pub async fn run_http(target: &Target, plan: &Plan) -> Result<Vec<Found>, Unreachable> {
    let Target::Http { url, headers } = target else {
        return Err(Unreachable("not an HTTP target".into()));
    };
    let wire =
        Wire::new(url, headers, plan.ca_cert.as_deref(), plan.timeout).map_err(Unreachable)?;
    let ctx = Arc::new(HttpCtx {
        wire: Arc::new(wire),
        logs: Mutex::new(Vec::new()),
        issued: Mutex::new(Vec::new()),
    });
    let first = plan
        .revisions
        .first()
        .cloned()
        .unwrap_or_else(|| crate::validate::LATEST.to_string());

    let started = Instant::now();
    let mut probe = ctx.open("probe");
    // The probe declares the client capabilities (server.requests.valid judges it).
    probe.declared = super::requests::declared_at(&first);
    let init = ctx.handshake(&mut probe, "probe", &first).await;
    if let Err(e) = &init.init_posted.reply {
        if e.is_unreachable() {
            return Err(Unreachable(match e {
                crate::validate::http::WireError::Connect { .. } => e.to_string(),
                _ => format!("no answer to `initialize`: {e}"),
            }));
        }
    }
    let probe_millis = started.elapsed().as_millis();
    if let Some(probed) = &plan.probed {
        probed.notify_one();
    }

    let mut tasks = tokio::task::JoinSet::<Results>::new();
    if plan.wants(initialize::NEGOTIATES) {
        let ctx = ctx.clone();
        let probe_answer = (first.clone(), init.init.clone());
        tasks.spawn(async move {
            let started = Instant::now();
            let finding = negotiates(&ctx, probe_answer).await;
            vec![(
                initialize::NEGOTIATES,
                "all".to_string(),
                finding,
                started.elapsed().as_millis(),
                None,
            )]
        });
    }
    let mut found = Vec::new();
    for (index, revision) in plan.revisions.iter().enumerate() {
        let queries: Vec<&'static str> = super::QUERIES
            .iter()
            .copied()
            .filter(|id| plan.wants(id))
            .collect();
        let feature_ids = super::features::selected(plan);
        if !queries.is_empty() || !feature_ids.is_empty() {
            let (ctx, revision, settings) = (
                ctx.clone(),
                revision.clone(),
                super::features::Settings::of(plan),
            );
            tasks.spawn(async move {
                run_queries(&ctx, &revision, &queries, &feature_ids, &settings).await
            });
        }
        if plan.wants(super::lifecycle::BEFORE_INITIALIZE) {
            let reason =
                "a stdio check: over HTTP a request without a session is the transport's matter";
            found.push(Found::new(
                super::lifecycle::BEFORE_INITIALIZE,
                revision.clone(),
                Finding::skip(reason),
                0,
            ));
        }
        let own: Vec<&'static str> = [jsonrpc::PARSE_ERROR]
            .iter()
            .chain(OWN_SESSION)
            .copied()
            .filter(|id| plan.wants(id))
            .collect();
        for id in own {
            let (ctx, revision) = (ctx.clone(), revision.clone());
            tasks.spawn(async move {
                let started = Instant::now();
                let (finding, level) = run_one(&ctx, id, &revision).await;
                vec![(id, revision, finding, started.elapsed().as_millis(), level)]
            });
        }
        if plan.wants(initialize::RESULT) {
            let finding = if index == 0 {
                initialize::judge_result(&init.init)
            } else {
                let mut session = ctx.open(&format!("initialize {revision}"));
                let handshake = ctx.handshake(&mut session, "initialize", revision).await;
                session.close().await;
                initialize::judge_result(&handshake.init)
            };
            found.push(Found::new(
                initialize::RESULT,
                revision.clone(),
                finding,
                probe_millis,
            ));
        }
    }
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(results) => found.extend(results.into_iter().map(
                |(id, revision, finding, millis, level)| Found {
                    level,
                    ..Found::new(id, revision, finding, millis)
                },
            )),
            Err(e) => found.push(Found::new(
                "harness",
                first.clone(),
                Finding::HarnessFault {
                    reason: format!("a check task failed: {e}"),
                },
                0,
            )),
        }
    }
    let declared_ids: Vec<&'static str> = super::requests::CHECKS
        .iter()
        .copied()
        .filter(|id| plan.wants(id))
        .collect();
    let declared = probe.declared.clone();
    for (id, revision, finding, millis) in
        super::requests::run(&mut probe, &first, &declared, &declared_ids).await
    {
        found.push(Found::new(id, revision, finding, millis));
    }
    probe.close().await;
    found.retain(|f| f.id == "harness" || plan.wants(f.id));
    if plan.wants(schema::VALID) {
        let started = Instant::now();
        let finding = schema::judge(&ctx.logs());
        found.push(Found::new(
            schema::VALID,
            first.clone(),
            finding,
            started.elapsed().as_millis(),
        ));
    }
    if plan.wants(SESSION_ID_ASCII) {
        let issued = ctx.issued.lock().unwrap_or_else(|e| e.into_inner()).clone();
        found.push(Found::new(
            SESSION_ID_ASCII,
            first.clone(),
            judge_session_ids(&issued),
            0,
        ));
    }
    for id in [stdio::CLEAN_STDOUT, stdio::EXITS_ON_CLOSE] {
        if plan.wants(id) {
            found.push(Found::new(
                id,
                first.clone(),
                Finding::skip("a stdio check; the target is an HTTP URL"),
                0,
            ));
        }
    }
    debug_assert!(found
        .iter()
        .all(|f| f.id == "harness" || ALL.contains(&f.id)));
    sort(&mut found);
    Ok(found)
}

/// Offers each other revision in a fresh session, concurrently; the probe counts for its own.
async fn negotiates(
    ctx: &Arc<HttpCtx>,
    probe: (String, crate::validate::stdio::Exchange),
) -> Finding {
    let mut tasks = tokio::task::JoinSet::new();
    for revision in initialize::offered().into_iter().filter(|r| *r != probe.0) {
        let ctx = ctx.clone();
        tasks.spawn(async move {
            let label = format!("negotiates {revision}");
            let mut session = ctx.open(&label);
            let handshake = ctx.handshake(&mut session, &label, revision).await;
            session.close().await;
            (revision.to_string(), handshake.init)
        });
    }
    let mut answers = vec![probe];
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(answer) => answers.push(answer),
            Err(e) => {
                return Finding::HarnessFault {
                    reason: format!("a negotiation session failed: {e}"),
                }
            }
        }
    }
    initialize::judge_negotiation(answers)
}

/// The query checks, one after the other in one session.
async fn run_queries(
    ctx: &HttpCtx,
    revision: &str,
    queries: &[&'static str],
    feature_ids: &[&'static str],
    settings: &super::features::Settings,
) -> Results {
    let (mut session, init) = match ctx.open_initialized("queries", revision).await {
        Ok(opened) => opened,
        Err(reason) => {
            return queries
                .iter()
                .chain(feature_ids)
                .map(|id| {
                    (
                        *id,
                        revision.to_string(),
                        Finding::skip(reason.clone()),
                        0,
                        None,
                    )
                })
                .collect();
        }
    };
    let capabilities = init
        .init
        .result()
        .and_then(|r| r.get("capabilities"))
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for id in queries {
        let started = Instant::now();
        let finding = match *id {
            _ if session.stalled.is_some() => {
                super::not_asked(session.stalled.as_deref().unwrap_or_default())
            }
            jsonrpc::NOTIFICATION_SILENT => jsonrpc::notification_silent_http(&mut session).await,
            other => super::query(other, &mut session, &capabilities).await,
        };
        out.push((
            *id,
            revision.to_string(),
            finding,
            started.elapsed().as_millis(),
            None,
        ));
    }
    let init_result = init.init.result().cloned().unwrap_or_default();
    let features =
        super::features::run(&mut session, revision, &init_result, feature_ids, settings).await;
    out.extend(
        features
            .into_iter()
            .map(|(id, revision, finding, millis)| (id, revision, finding, millis, None)),
    );
    session.close().await;
    out
}

/// Runs one check in a session of its own.
async fn run_one(ctx: &HttpCtx, id: &'static str, revision: &str) -> (Finding, Option<Level>) {
    if id == jsonrpc::PARSE_ERROR {
        return (jsonrpc::parse_error_http(ctx, revision).await, None);
    }
    let (mut session, handshake) = match ctx.open_initialized(id, revision).await {
        Ok(opened) => opened,
        Err(reason) => return (Finding::skip(reason), None),
    };
    let negotiated = session.revision.clone().unwrap_or_default();
    let mut level = None;
    let finding = match id {
        NOTIFICATION_202 => notification_202(&handshake),
        ACCEPT_REQUIRED => accept_required(&mut session).await,
        UNKNOWN_SESSION_404 => unknown_session(&mut session).await,
        MISSING_SESSION_400 => missing_session(&mut session).await,
        DELETE => delete(&mut session).await,
        PROTOCOL_VERSION_HEADER => protocol_version_header(&mut session, &negotiated).await,
        ORIGIN => {
            if negotiated.as_str() >= ORIGIN_MUST_SINCE {
                level = Some(Level::Must);
            }
            origin(&mut session).await
        }
        GET_STREAM => get_stream(&mut session).await,
        BATCH => batch(&mut session, &negotiated).await,
        _ => Finding::HarnessFault {
            reason: format!("{id} is not an HTTP check"),
        },
    };
    session.close().await;
    (finding, level)
}

/// A failure showing one HTTP exchange.
fn failed(expected: impl Into<String>, posted: &Posted) -> Finding {
    let actual = match &posted.reply {
        Ok(reply) => format!("status {}", reply.status),
        Err(e) => format!("no response: {e}"),
    };
    Finding::Fail(
        Failure::new(expected, actual)
            .sent(&posted.sent)
            .received(Some(posted.received())),
    )
}

/// A `ping` request body with the session's next id.
fn ping_body(session: &mut HttpSession) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": session.next_id(), "method": "ping"})
        .to_string()
        .into_bytes()
}

/// POSTs a `ping` with `headers`, reading the whole answer.
async fn post_ping(session: &mut HttpSession, headers: Vec<(String, String)>) -> Posted {
    let body = ping_body(session);
    session
        .send(Method::POST, headers, Some(body), Until::End)
        .await
}

fn no_sessions() -> Finding {
    Finding::skip("the server issued no Mcp-Session-Id: it does not use sessions")
}

/// The handshake's `notifications/initialized` POST got 202.
fn notification_202(handshake: &Handshake) -> Finding {
    let Some(posted) = &handshake.initialized else {
        return Finding::HarnessFault {
            reason: "the handshake sent no notifications/initialized".into(),
        };
    };
    match posted.status() {
        Some(202) => Finding::pass(),
        _ => failed(
            "202 Accepted for the `notifications/initialized` POST",
            posted,
        ),
    }
}

/// A POST accepting only JSON, then one accepting only SSE: each gets 406.
async fn accept_required(session: &mut HttpSession) -> Finding {
    for accept in ["application/json", "text/event-stream"] {
        let posted = post_ping(session, with(session.headers(), "Accept", accept)).await;
        if posted.status() != Some(406) {
            return failed(
                format!("406 Not Acceptable for a POST with `Accept: {accept}` alone"),
                &posted,
            );
        }
    }
    Finding::pass_with("406 for application/json alone and for text/event-stream alone")
}

/// Every session id issued is visible ASCII (0x21–0x7E).
fn judge_session_ids(issued: &[(String, String)]) -> Finding {
    if issued.is_empty() {
        return no_sessions();
    }
    if let Some((label, id)) = issued
        .iter()
        .find(|(_, id)| id.is_empty() || !id.bytes().all(|b| (0x21..=0x7e).contains(&b)))
    {
        return Finding::Fail(
            Failure::new(
                "an Mcp-Session-Id of visible ASCII characters only (0x21 to 0x7E)",
                format!("session `{label}` was issued {id:?}"),
            )
            .received(Some(format!("Mcp-Session-Id: {id}"))),
        );
    }
    Finding::pass_with(format!("{} session id(s)", issued.len()))
}

/// A request with a session id the server never issued gets 404.
async fn unknown_session(session: &mut HttpSession) -> Finding {
    if session.session_id.is_none() {
        return no_sessions();
    }
    let posted = post_ping(
        session,
        with(session.headers(), "Mcp-Session-Id", NEVER_ISSUED),
    )
    .await;
    match posted.status() {
        Some(404) => Finding::pass(),
        _ => failed(
            "404 Not Found for a session id the server never issued",
            &posted,
        ),
    }
}

/// A request without the session id gets 400.
async fn missing_session(session: &mut HttpSession) -> Finding {
    if session.session_id.is_none() {
        return no_sessions();
    }
    let posted = post_ping(session, without(session.headers(), "Mcp-Session-Id")).await;
    match posted.status() {
        Some(400) => Finding::pass(),
        _ => failed(
            "400 Bad Request for a request without the Mcp-Session-Id the server issued",
            &posted,
        ),
    }
}

/// DELETE ends the session (then a request with its id gets 404), or answers 405.
async fn delete(session: &mut HttpSession) -> Finding {
    if session.session_id.is_none() {
        return no_sessions();
    }
    let headers = without(session.headers(), "Content-Type");
    let deleted = session
        .send(Method::DELETE, headers, None, Until::End)
        .await;
    let expected = "DELETE answered 2xx, then 404 for a request with the ended session's id; or DELETE answered 405";
    match deleted.status() {
        Some(405) => return Finding::pass_with("DELETE answered 405: clients cannot end sessions"),
        Some(200..=299) => session.mark_ended(),
        _ => return failed(expected, &deleted),
    }
    let after = post_ping(session, session.headers()).await;
    if after.status() == Some(404) {
        return Finding::pass();
    }
    let actual = match after.status() {
        Some(status) => {
            format!(
                "DELETE answered {}, then the ended session's id got {status}",
                deleted.status().unwrap_or(0)
            )
        }
        None => format!(
            "DELETE answered {}, then no response",
            deleted.status().unwrap_or(0)
        ),
    };
    Finding::Fail(
        Failure::new(expected, actual)
            .sent(format!("{}\n{}", deleted.sent, after.sent))
            .received(Some(format!(
                "{}\n{}",
                deleted.received(),
                after.received()
            ))),
    )
}

/// An unsupported `MCP-Protocol-Version` gets 400 (the header exists from 2025-06-18 on).
async fn protocol_version_header(session: &mut HttpSession, negotiated: &str) -> Finding {
    if negotiated < crate::validate::http::PROTOCOL_VERSION_HEADER_SINCE {
        return Finding::skip(format!(
            "the session negotiated {negotiated}; MCP-Protocol-Version exists from {} on",
            crate::validate::http::PROTOCOL_VERSION_HEADER_SINCE
        ));
    }
    let posted = post_ping(
        session,
        with(
            session.headers(),
            "MCP-Protocol-Version",
            UNSUPPORTED_VERSION,
        ),
    )
    .await;
    match posted.status() {
        Some(400) => Finding::pass(),
        _ => failed(
            format!("400 Bad Request for `MCP-Protocol-Version: {UNSUPPORTED_VERSION}`"),
            &posted,
        ),
    }
}

/// A request with a foreign `Origin` gets 403.
async fn origin(session: &mut HttpSession) -> Finding {
    let posted = post_ping(session, with(session.headers(), "Origin", FOREIGN_ORIGIN)).await;
    match posted.status() {
        Some(403) => Finding::pass(),
        _ => failed(
            format!("403 Forbidden for `Origin: {FOREIGN_ORIGIN}`"),
            &posted,
        ),
    }
}

/// GET answers an SSE stream or 405 (only the head is read; the stream is then closed).
async fn get_stream(session: &mut HttpSession) -> Finding {
    let headers = with(
        without(session.headers(), "Content-Type"),
        "Accept",
        "text/event-stream",
    );
    let posted = session.send(Method::GET, headers, None, Until::Head).await;
    match &posted.reply {
        Ok(reply) if reply.status == 405 => Finding::pass_with("405: no GET stream"),
        Ok(reply) if reply.status == 200 && reply.media_type() == "text/event-stream" => {
            Finding::pass_with("200 text/event-stream")
        }
        _ => failed(
            "200 with Content-Type text/event-stream, or 405 Method Not Allowed",
            &posted,
        ),
    }
}

/// A JSON array is rejected (a 4xx status, or only error responses) once batches are gone.
async fn batch(session: &mut HttpSession, negotiated: &str) -> Finding {
    if negotiated < NO_BATCH_SINCE {
        return Finding::skip(format!(
            "the session negotiated {negotiated}; batches are allowed before {NO_BATCH_SINCE}"
        ));
    }
    let id = session.next_id();
    let body = json!([{"jsonrpc": "2.0", "id": id, "method": "ping"}])
        .to_string()
        .into_bytes();
    let posted = session
        .send(Method::POST, session.headers(), Some(body), Until::End)
        .await;
    let rejected = match &posted.reply {
        Ok(reply) if (400..500).contains(&reply.status) => true,
        Ok(reply) if reply.is_success() => {
            reply.messages.iter().any(|m| m.get("error").is_some())
                && !reply.messages.iter().any(|m| m.get("result").is_some())
        }
        _ => false,
    };
    if rejected {
        return Finding::pass();
    }
    let actual = match &posted.reply {
        Ok(reply) if reply.messages.iter().any(|m| m.get("result").is_some()) => {
            format!("status {}, the batched ping answered", reply.status)
        }
        Ok(reply) => format!("status {}", reply.status),
        Err(e) => format!("no response: {e}"),
    };
    Finding::Fail(
        Failure::new(
            format!("a JSON-RPC batch (a JSON array) rejected with a 4xx status or an error response (negotiated {negotiated})"),
            actual,
        )
        .sent(&posted.sent)
        .received(Some(posted.received())),
    )
}
