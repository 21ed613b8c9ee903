//! The Streamable HTTP transport: each message is a POST; the answer is plain JSON or an SSE
//! stream read until the frame carrying it.

mod post;
mod reply;

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Method, StatusCode};
use serde_json::Value;
use tokio::sync::watch;

use super::wire::{Ctx, Endpoint, Outgoing};
use super::{timed_out, HttpServer};
use crate::error::{Failed, Fate};
use crate::jsonrpc::{ErrorObject, Notification};
use crate::{Breakage, ClientConfig, McpError, Profile, TestHooks, SUPPORTED_PROTOCOL_VERSIONS};

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
/// The first revision whose requests carry `MCP-Protocol-Version`.
const VERSION_HEADER_FROM: &str = "2025-06-18";

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[derive(Default)]
struct State {
    session: Option<String>,
    /// The negotiated version, once it calls for the `MCP-Protocol-Version` header.
    version_header: Option<HeaderValue>,
    /// The `initialize` parameters, for re-initializing (strict).
    init_params: Option<Value>,
    /// A 404 ended the session: strict re-initializes before the next call.
    reinit: bool,
    /// 2026-07-28 is spoken: no session, `Mcp-Method`/`Mcp-Name` on every POST, a modern
    /// error's 4xx read as its JSON-RPC error, a broken response stream re-issued.
    stateless: bool,
    /// The test switch `LastEventIdReplayed`: the last SSE event id seen.
    last_event_id: Option<String>,
}

/// 2026-07-28's request headers, from the body: `Mcp-Method` always, `Mcp-Name` for a
/// call, a read or a prompt (`params.name` or `params.uri`, encoded when not header-safe).
fn request_headers(body: &[u8]) -> Vec<(HeaderName, HeaderValue)> {
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return Vec::new();
    };
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return Vec::new();
    };
    let mut headers = Vec::new();
    if let Ok(value) = HeaderValue::from_str(&crate::stateless::header_value(method)) {
        headers.push((HeaderName::from_static(METHOD_HEADER), value));
    }
    let name = match method {
        "tools/call" | "prompts/get" => message.pointer("/params/name"),
        "resources/read" => message.pointer("/params/uri"),
        _ => None,
    };
    if let Some(Ok(value)) = name
        .and_then(Value::as_str)
        .map(|n| HeaderValue::from_str(&crate::stateless::header_value(n)))
    {
        headers.push((HeaderName::from_static(NAME_HEADER), value));
    }
    headers
}

/// A Streamable HTTP connection to one MCP server.
/// How long a timed-out request waits for the server to take its `notifications/cancelled`
/// before the timeout error is returned.
const CANCEL_GRACE: Duration = Duration::from_millis(100);

pub(crate) struct StreamableTransport {
    ep: std::sync::Arc<Endpoint>,
    profile: Profile,
    hooks: TestHooks,
    state: Mutex<State>,
    calls: tokio::sync::Mutex<()>,
    next_id: AtomicI64,
    list_changed: std::sync::Arc<AtomicU64>,
    closed: watch::Sender<bool>,
    /// 2026-07-28: the `subscriptions/listen` stream's task, aborted on close.
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for StreamableTransport {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.listener).take() {
            task.abort();
        }
    }
}

impl StreamableTransport {
    /// Checks the URL and certificates; sends nothing.
    pub(crate) fn new(server: &HttpServer, config: &ClientConfig) -> Result<Self, McpError> {
        Ok(StreamableTransport {
            ep: std::sync::Arc::new(Endpoint::new(server, config)?),
            profile: config.profile,
            hooks: config.hooks.clone(),
            state: Mutex::new(State::default()),
            calls: tokio::sync::Mutex::new(()),
            next_id: AtomicI64::new(1),
            list_changed: std::sync::Arc::new(AtomicU64::new(0)),
            closed: watch::channel(false).0,
            listener: Mutex::new(None),
        })
    }

    /// The server's origin.
    pub(crate) fn origin(&self) -> &str {
        &self.ep.origin
    }

    /// The session id held, if any.
    pub(crate) fn session_id(&self) -> Option<String> {
        lock(&self.state).session.clone()
    }

    /// How many `notifications/tools/list_changed` were read.
    pub(crate) fn list_changes(&self) -> u64 {
        self.list_changed.load(Ordering::SeqCst)
    }

    fn broken(&self, rule: Breakage) -> bool {
        self.hooks.broken.contains(&rule)
    }

    /// The handshake negotiated `version`: strict sends it on every later request.
    pub(crate) fn negotiated(&self, version: &str) {
        if self.profile == Profile::Strict && version >= VERSION_HEADER_FROM {
            lock(&self.state).version_header = HeaderValue::from_str(version).ok();
        }
    }

    /// 2026-07-28 from now on (`Some(version)`: the version header, the request headers, no
    /// session), or back to a handshake revision (`None`, after a failed probe).
    pub(crate) fn stateless(&self, version: Option<&str>) {
        let mut state = lock(&self.state);
        state.stateless = version.is_some();
        state.version_header = version.and_then(|v| HeaderValue::from_str(v).ok());
    }

    /// 2026-07-28: opens the `subscriptions/listen` stream for list changes (`params` with
    /// their `_meta`); it lives until `close()`.
    pub(crate) fn listen(&self, params: Value) {
        let id = Value::from(self.next_id.fetch_add(1, Ordering::SeqCst));
        let version = lock(&self.state).version_header.clone();
        let counter =
            (!self.broken(Breakage::NoListChangedCount)).then(|| self.list_changed.clone());
        let task = super::listen::spawn(self.ep.clone(), id, params, version, counter);
        if let Some(old) = lock(&self.listener).replace(task) {
            old.abort();
        }
    }

    fn closed_error(&self, ctx: &Ctx) -> McpError {
        ctx.transport("the client was closed")
    }

    /// Sends a request and reads its answer, bounded by `bound` (none: the idle timeout
    /// only; under `strict` each call is a POST of its own, several in flight; otherwise
    /// calls queue in order), saying on failure whether the connection died and whether the
    /// request may have reached the server.
    pub(crate) async fn request_fated(
        &self,
        method: &str,
        params: Option<Value>,
        bound: Option<Duration>,
    ) -> Result<Result<Value, ErrorObject>, Failed> {
        let ctx = Ctx::call(&self.ep, method);
        let outcome = self.request_in(method, params, bound, &ctx).await;
        outcome.map_err(|error| {
            // A timeout says nothing about the connection, whatever failed before it.
            let fate = if error.kind() == crate::ErrorKind::Timeout {
                Fate::Alive
            } else {
                ctx.fate()
            };
            Failed::new(error, fate)
        })
    }

    async fn request_in(
        &self,
        method: &str,
        params: Option<Value>,
        bound: Option<Duration>,
        ctx: &Ctx,
    ) -> Result<Result<Value, ErrorObject>, McpError> {
        let mut closed = self.closed.subscribe();
        let work = async {
            let turn = self.calls.lock().await;
            if *self.closed.borrow() {
                return Err(self.closed_error(ctx));
            }
            if method == "initialize" {
                lock(&self.state).init_params = params.clone();
            } else if lock(&self.state).reinit {
                self.reinitialize().await?;
            }
            // Strict: the turn only orders the re-initialize; the call's own POST goes out at once.
            let queued = !self.profile.multiplexes() || self.broken(Breakage::CallsQueued);
            let _turn = queued.then_some(turn);
            let id = Value::from(self.next_id.fetch_add(1, Ordering::SeqCst));
            let call = self.call_reissuing(method, id.clone(), params, ctx);
            match bound {
                None => call.await,
                Some(bound) => match tokio::time::timeout(bound, call).await {
                    Ok(outcome) => outcome,
                    Err(_) => {
                        // At 2026-07-28 closing the response stream is the cancellation over
                        // HTTP ("no `notifications/cancelled` message is expected").
                        if self.profile.sends_cancelled() && !lock(&self.state).stateless {
                            let latest = self.next_id.load(Ordering::SeqCst) - 1;
                            let params = crate::stdio::cancelled_params(&id, latest, bound, |b| {
                                self.broken(b)
                            });
                            // Sent, not awaited past a grace: a server that never answers the
                            // notification must not hold the timeout error back.
                            let sent =
                                self.send_notification("notifications/cancelled", Some(params));
                            let grace = if self.broken(Breakage::CancelledAwaited) {
                                Duration::MAX
                            } else {
                                CANCEL_GRACE
                            };
                            match tokio::time::timeout(grace, sent).await {
                                Ok(Ok(())) => {}
                                Ok(Err(e)) => {
                                    tracing::debug!(target: "mcp_refclient", "sending notifications/cancelled failed: {e}")
                                }
                                Err(_) => {
                                    tracing::debug!(target: "mcp_refclient", "notifications/cancelled not answered within {CANCEL_GRACE:?}")
                                }
                            }
                        }
                        Err(timed_out(method, bound))
                    }
                },
            }
        };
        tokio::select! {
            outcome = work => outcome,
            _ = closed.wait_for(|c| *c) => Err(self.closed_error(ctx)),
        }
    }

    /// [`call`](Self::call); at 2026-07-28 a response stream that broke before its response
    /// (or a connection that died once the request went out) loses the request, so it is re-issued once as a new request with a new id; a
    /// `tools/call` is not (the tool may have run: the error says so).
    async fn call_reissuing(
        &self,
        method: &str,
        id: Value,
        params: Option<Value>,
        ctx: &Ctx,
    ) -> Result<Result<Value, ErrorObject>, McpError> {
        let mut broken = false;
        let outcome = self
            .call_marking(method, id.clone(), params.clone(), ctx, &mut broken)
            .await;
        let reissue_timeouts = self.broken(Breakage::ReissueTimedOut);
        // The connection dying after the request went out, before or during its response,
        // loses the request just the same.
        let lost = broken || ctx.fate() == Fate::DeadMaybeSent || reissue_timeouts;
        // A timed-out request was given up on, not lost: closing its stream cancelled it.
        let error = match outcome {
            Err(error)
                if lost
                    && (error.kind() != crate::ErrorKind::Timeout || reissue_timeouts)
                    && lock(&self.state).stateless =>
            {
                error
            }
            other => return other,
        };
        if method == "tools/call" && !self.broken(Breakage::ReissueCalls) {
            return Err(McpError::Transport(format!(
                "{}; the tool may have run, so the call was not re-issued",
                error.full_text()
            )));
        }
        let id = match self.broken(Breakage::ReissueSameId) {
            true => id,
            false => Value::from(self.next_id.fetch_add(1, Ordering::SeqCst)),
        };
        tracing::info!(target: "mcp_refclient", origin = %self.ep.origin, "the response stream of '{method}' broke ({}); re-issuing it as request {id}", error.full_text());
        self.call(method, id, params, ctx).await
    }

    /// Strict, after a 404 ended the session: `initialize` again, then `initialized`.
    async fn reinitialize(&self) -> Result<(), McpError> {
        let params = lock(&self.state).init_params.clone();
        let ctx = Ctx::call(&self.ep, "initialize");
        tracing::info!(target: "mcp_refclient", origin = %self.ep.origin, "the session expired: initializing again");
        let id = Value::from(self.next_id.fetch_add(1, Ordering::SeqCst));
        let result = self
            .call("initialize", id, params, &ctx)
            .await?
            .map_err(|e| McpError::JsonRpc {
                code: e.code,
                message: e.message,
                data: e.data,
            })?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&version) {
            return Err(ctx.protocol(format!("re-initializing, the server answered protocol version '{version}', which this client does not support")));
        }
        self.negotiated(version);
        self.send_notification("notifications/initialized", None)
            .await?;
        lock(&self.state).reinit = false;
        Ok(())
    }

    /// Sends a notification: 202 or 204 is the acknowledgement; an empty 200 is an error.
    pub(crate) async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        self.notify_fated(method, params).await.map_err(|f| f.error)
    }

    /// [`notify`](Self::notify), saying on failure whether the connection died.
    pub(crate) async fn notify_fated(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), Failed> {
        let ctx = Ctx::notification(&self.ep, method);
        if *self.closed.borrow() {
            return Err(Failed::alive(self.closed_error(&ctx)));
        }
        let outcome = self.notification_in(method, params, &ctx).await;
        outcome.map_err(|error| {
            let fate = if error.kind() == crate::ErrorKind::Timeout {
                Fate::Alive
            } else {
                ctx.fate()
            };
            Failed::new(error, fate)
        })
    }

    async fn send_notification(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        let ctx = Ctx::notification(&self.ep, method);
        self.notification_in(method, params, &ctx).await
    }

    /// Test switch `OnlyAcceptedAcknowledges`: a 204 is not taken as a notification's
    /// acknowledgement (only 202 is).
    fn broken_refuses_no_content(&self, status: StatusCode) -> bool {
        self.broken(Breakage::OnlyAcceptedAcknowledges) && status == StatusCode::NO_CONTENT
    }

    async fn notification_in(
        &self,
        method: &str,
        params: Option<Value>,
        ctx: &Ctx,
    ) -> Result<(), McpError> {
        let mut reply = self.post(&Notification::new(method, params), ctx).await?;
        if matches!(reply.status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT)
            && !self.broken_refuses_no_content(reply.status)
        {
            return Ok(());
        }
        // Any other 2xx must carry something: an empty one came from something else.
        let empty = reply
            .headers
            .get(header::CONTENT_LENGTH)
            .is_some_and(|v| v.as_bytes() == b"0")
            || self.ep.next_chunk(&mut reply, ctx).await?.is_none();
        if empty && !self.broken(Breakage::EmptyNotificationReplyAccepted) {
            return Err(self.proxy_answered(reply.status, ctx));
        }
        Ok(())
    }

    /// Ends the session with a `DELETE` (any answer tolerated) and fails later calls;
    /// idempotent.
    pub(crate) async fn close(&self) {
        if self.closed.send_replace(true) {
            return;
        }
        if let Some(task) = lock(&self.listener).take() {
            task.abort();
        }
        let (session, version) = {
            let mut state = lock(&self.state);
            (state.session.take(), state.version_header.clone())
        };
        let Some(session) = session.filter(|_| !self.broken(Breakage::NoSessionDelete)) else {
            return;
        };
        let ctx = Ctx::notification(&self.ep, "DELETE");
        let mut extra = Vec::new();
        if let Ok(value) = HeaderValue::from_str(&session) {
            extra.push((HeaderName::from_static(SESSION_HEADER), value));
        }
        if let Some(version) =
            version.filter(|_| !self.broken(Breakage::DeleteWithoutVersionHeader))
        {
            extra.push((HeaderName::from_static(VERSION_HEADER), version));
        }
        let out = Outgoing {
            method: Method::DELETE,
            url: &self.ep.url,
            body: None,
            extra,
        };
        match self.ep.send(&out, &ctx).await {
            Ok(reply) => {
                tracing::debug!(target: "mcp_refclient", "session DELETE answered {}", reply.status)
            }
            Err(e) => {
                tracing::debug!(target: "mcp_refclient", "session DELETE failed (tolerated): {e}")
            }
        }
    }
}
