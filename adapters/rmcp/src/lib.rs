//! rmcp's client (the official Rust SDK, pinned) as a client under test, written against
//! rmcp's and mcp-conformance's public APIs only.
//!
//! What it declares is what rmcp's client can express here: stdio and Streamable HTTP
//! (reqwest), a per-call timeout (`PeerRequestOptions::timeout`), cancelling a call by
//! dropping its future (rmcp's `send_request_cancel_on_drop`), custom headers
//! (`StreamableHttpClientTransportConfig::custom_headers`), and the count of
//! `notifications/tools/list_changed` (its `ClientHandler::on_tool_list_changed`), the
//! server's initialize result as kept (`Peer::peer_info`), any request or notification the
//! caller names (`CustomRequest`, `CustomNotification`), a stdio server in a process group of
//! its own (the `process_wrap::tokio::ProcessGroup` wrapper its `TokioChildProcess` takes)
//! and that server's pid (`TokioChildProcess::id`), whether the server has gone
//! (`Peer::is_transport_closed`), caps on a response (`max_json_response_size`,
//! `max_sse_event_size`), the roots to trust and an idle read bound (the reqwest client its
//! transport takes), and the bounds of its requests (`PeerRequestOptions::timeout` on each
//! `tools/call` and `tools/list`; rmcp has none for the handshake). No timeout, retry or
//! redaction of the adapter's own.

use mcp_conformance::cut::{
    Capability, ClientUnderTest, Described, HttpTarget, Settings, StepError, StepResult, Target,
    TransportKind,
};
use mcp_conformance::scenario::TimeoutOverrides;
use rmcp::model::ProtocolVersion;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientNotification, ClientRequest, CustomNotification,
    CustomRequest, ListToolsRequest, PaginatedRequestParams, ServerResult,
};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The client's handler: rmcp's defaults (pings answered, other server requests declined),
/// plus a count of tool-list changes.
#[derive(Clone, Default)]
pub struct Handler {
    list_changed: Arc<AtomicU64>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }
}

/// rmcp's client under test.
#[derive(Default)]
pub struct Adapter {
    // Shared with the calls in flight: `RunningService::call_tool` is the helper that drives
    // 2026-07-28's `input_required` rounds.
    service: RefCell<Option<Rc<RunningService<RoleClient, Handler>>>>,
    handler: Handler,
    /// Spoken at 2026-07-28: the list changes of the `subscriptions/listen` stream, the only
    /// ones counted then (rmcp routes a subscription's notifications to it, not the handler).
    subscribed: RefCell<Option<Arc<AtomicU64>>>,
    /// The stdio server's pid, as `TokioChildProcess::id` gave it at the start.
    pid: RefCell<Option<u32>>,
    /// The connection's peer, kept after `close` for `exited`.
    peer: RefCell<Option<Peer<RoleClient>>>,
    /// How `close` ended the service (rmcp's `QuitReason`), once it did.
    closed: RefCell<Option<String>>,
    /// The scenario's bounds on `tools/call` and on other requests, in force.
    bounds: RefCell<Bounds>,
}

/// The request bounds the scenario set, each applied with rmcp's `PeerRequestOptions::timeout`.
#[derive(Clone, Copy, Default)]
struct Bounds {
    call: Option<Duration>,
    list: Option<Duration>,
}

impl Bounds {
    fn from(timeouts: &TimeoutOverrides) -> Self {
        let bound = |ms: Option<u64>| ms.filter(|&ms| ms > 0).map(Duration::from_millis);
        Bounds {
            call: bound(timeouts.call_ms),
            list: bound(timeouts.list_ms),
        }
    }
}

/// An error as rmcp wrote it, causes included.
fn text(error: &dyn std::error::Error) -> StepError {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    StepError::new(text)
}

impl Adapter {
    fn peer(&self) -> Result<Peer<RoleClient>, StepError> {
        self.service
            .borrow()
            .as_ref()
            .map(|s| s.peer().clone())
            .ok_or_else(|| StepError::new("not connected"))
    }

    /// Sends `request` bounded by `timeout` (rmcp's `PeerRequestOptions::timeout`), or
    /// unbounded, as rmcp's `Peer::send_request` sends it.
    async fn send(
        &self,
        request: ClientRequest,
        timeout: Option<Duration>,
    ) -> Result<ServerResult, StepError> {
        let peer = self.peer()?;
        match timeout {
            None => peer.send_request(request).await.map_err(|e| text(&e)),
            Some(timeout) => {
                let mut options = PeerRequestOptions::no_options();
                options.timeout = Some(timeout);
                let handle = peer
                    .send_request_with_option(request, options)
                    .await
                    .map_err(|e| text(&e))?;
                handle.await_response().await.map_err(|e| text(&e))
            }
        }
    }

    fn service(&self) -> Result<Rc<RunningService<RoleClient, Handler>>, StepError> {
        self.service
            .borrow()
            .clone()
            .ok_or_else(|| StepError::new("not connected"))
    }
}

impl ClientUnderTest for Adapter {
    fn describe(&self) -> Described {
        Described {
            name: "rmcp".into(),
            version: "3.11.0".into(),
            transports: vec![TransportKind::Stdio, TransportKind::Http],
            capabilities: vec![
                Capability::CallTimeout,
                Capability::Cancel,
                Capability::CustomHeaders,
                Capability::ListChangedCount,
                Capability::Stateless,
                Capability::Drop,
                // `Peer::peer_info`: the server's initialize (or discover) result as kept.
                Capability::ServerInfo,
                // `ClientRequest::CustomRequest` and `ClientNotification::CustomNotification`
                // (model.rs): any method and params, sent through `Peer::send_request` and
                // `Peer::send_notification`.
                Capability::RawMessages,
                // `TokioChildProcess::new(impl Into<CommandWrap>)` (transport/child_process.rs)
                // with process-wrap's `ProcessGroup::leader()`: its shutdown signals the group.
                Capability::ProcessGroup,
                // `TokioChildProcess::id`: the child's pid.
                Capability::ServerPid,
                // `Peer::is_transport_closed` (service.rs): the service loop ended, the
                // server's output closed. rmcp keeps no exit status and no stderr.
                Capability::Exited,
                // `StreamableHttpClientTransportConfig::max_json_response_size` and
                // `max_sse_event_size` (transport/streamable_http_client.rs).
                Capability::BodyCap,
                // The reqwest client `StreamableHttpClientTransport::with_client` takes, built
                // with `tls_certs_only`.
                Capability::TrustedRoots,
                // `PeerRequestOptions::timeout` on each `tools/call` and `tools/list`, and the
                // reqwest client's `read_timeout` as the HTTP idle bound. rmcp has no bound on
                // the handshake (`serve_with_lifecycle` takes none) and no exit settle.
                Capability::ConfigurableTimeouts,
            ],
            profile: "strict".into(),
        }
    }

    async fn connect(&self, target: &Target, settings: &Settings) -> StepResult {
        let handler = self.handler.clone();
        *self.bounds.borrow_mut() = Bounds::from(&settings.timeouts);
        *self.closed.borrow_mut() = None;
        // A scenario of 2026-07-28 asks for rmcp's own dual-era mode (probe `server/discover`,
        // fall back to `initialize`); otherwise rmcp's default `serve` (the handshake).
        let lifecycle = match settings.revision.as_deref() {
            Some("2026-07-28") => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            _ => ClientLifecycleMode::Initialize,
        };
        let service = match target {
            Target::Stdio(stdio) => {
                let mut command = tokio::process::Command::new(&stdio.command);
                command.args(&stdio.args).envs(&stdio.env);
                let mut command = process_wrap::tokio::CommandWrap::from(command);
                if stdio.own_process_group {
                    command.wrap(process_wrap::tokio::ProcessGroup::leader());
                }
                let transport = TokioChildProcess::new(command).map_err(|e| text(&e))?;
                *self.pid.borrow_mut() = transport.id();
                handler
                    .serve_with_lifecycle(transport, lifecycle)
                    .await
                    .map_err(|e| text(&e))?
            }
            Target::Http(http) => {
                let transport = http_transport(http, &settings.timeouts)?;
                handler
                    .serve_with_lifecycle(transport, lifecycle)
                    .await
                    .map_err(|e| text(&e))?
            }
        };
        let version = service
            .peer_info()
            .map(|info| json!(info.protocol_version))
            .unwrap_or(Value::Null);
        // Spoken at 2026-07-28, list changes come on a `subscriptions/listen` stream, which an
        // application opens with rmcp's `Peer::listen` when the server declares them.
        let listen = service.peer_info().is_some_and(|info| {
            info.protocol_version == ProtocolVersion::V_2026_07_28
                && info
                    .capabilities
                    .tools
                    .as_ref()
                    .and_then(|t| t.list_changed)
                    == Some(true)
        });
        if listen {
            let peer = service.peer().clone();
            let count = Arc::new(AtomicU64::new(0));
            *self.subscribed.borrow_mut() = Some(count.clone());
            tokio::spawn(async move {
                let filter = rmcp::model::SubscriptionFilter::builder()
                    .tools_list_changed()
                    .build();
                match peer.listen(filter).await {
                    Ok(mut subscription) => {
                        while let Ok(Some(notification)) = subscription.next().await {
                            if matches!(
                                notification,
                                rmcp::model::ServerNotification::ToolListChangedNotification(_)
                            ) {
                                count.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    }
                    Err(error) => {
                        eprintln!("rmcp: subscriptions/listen failed: {}", text(&error).text)
                    }
                }
            });
        }
        *self.peer.borrow_mut() = Some(service.peer().clone());
        *self.service.borrow_mut() = Some(Rc::new(service));
        Ok(json!({ "protocolVersion": version }))
    }

    async fn list_tools(&self) -> StepResult {
        let Some(bound) = self.bounds.borrow().list else {
            let tools = self.peer()?.list_all_tools().await.map_err(|e| text(&e))?;
            return serde_json::to_value(tools).map_err(|e| text(&e));
        };
        // Bounded: each page through `send_request_with_option`, as `list_all_tools` pages.
        let mut tools = Vec::new();
        let mut cursor = None;
        loop {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
            match self.send(request, Some(bound)).await? {
                ServerResult::ListToolsResult(page) => {
                    tools.extend(page.tools);
                    cursor = page.next_cursor;
                    if cursor.is_none() {
                        break;
                    }
                }
                other => return Err(StepError::new(format!("unexpected response: {other:?}"))),
            }
        }
        serde_json::to_value(tools).map_err(|e| text(&e))
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> StepResult {
        let mut params = CallToolRequestParams::new(name.to_string());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let timeout = timeout.or(self.bounds.borrow().call);
        let result = match timeout {
            // rmcp's high-level helper, as an application calls a tool: it answers a
            // 2026-07-28 `input_required` result by retrying with the echoed `requestState`.
            None => self
                .service()?
                .call_tool(params)
                .await
                .map_err(|e| text(&e))?,
            Some(timeout) => {
                let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
                match self.send(request, Some(timeout)).await? {
                    ServerResult::CallToolResult(result) => result,
                    other => return Err(StepError::new(format!("unexpected response: {other:?}"))),
                }
            }
        };
        serde_json::to_value(result).map_err(|e| text(&e))
    }

    async fn close(&self) -> StepResult {
        let service = self
            .service
            .borrow_mut()
            .take()
            .ok_or_else(|| StepError::new("not connected"))?;
        match Rc::try_unwrap(service) {
            Ok(service) => {
                let reason = service.cancel().await.map_err(|e| text(&e))?;
                let reason = format!("{reason:?}");
                *self.closed.borrow_mut() = Some(reason.clone());
                Ok(json!(reason))
            }
            // A call still in flight holds it: end the service through its token.
            Err(shared) => {
                shared.cancellation_token().cancel();
                *self.closed.borrow_mut() = Some("Cancelled".into());
                Ok(json!("cancelled"))
            }
        }
    }

    async fn server_info(&self) -> StepResult {
        let service = self.service.borrow();
        let service = service
            .as_ref()
            .ok_or_else(|| StepError::new("not connected"))?;
        let info = service
            .peer_info()
            .ok_or_else(|| StepError::new("rmcp keeps no server info"))?;
        serde_json::to_value(info).map_err(|e| text(&e))
    }

    async fn request(&self, method: &str, params: Option<Value>) -> StepResult {
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, params));
        let bound = self.bounds.borrow().list;
        let result = self.send(request, bound).await?;
        serde_json::to_value(result).map_err(|e| text(&e))
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> StepResult {
        let notification =
            ClientNotification::CustomNotification(CustomNotification::new(method, params));
        self.peer()?
            .send_notification(notification)
            .await
            .map_err(|e| text(&e))?;
        Ok(json!("sent"))
    }

    async fn server_pid(&self) -> Result<Option<u32>, StepError> {
        Ok(*self.pid.borrow())
    }

    async fn drop_connection(&self) -> StepResult {
        self.peer.borrow_mut().take();
        Ok(json!(self.service.borrow_mut().take().is_some()))
    }

    async fn exited(&self) -> Result<Option<String>, StepError> {
        if let Some(reason) = self.closed.borrow().clone() {
            return Ok(Some(format!("was closed ({reason})")));
        }
        let peer = self.peer.borrow();
        let peer = peer
            .as_ref()
            .ok_or_else(|| StepError::new("not connected"))?;
        // All rmcp says of a server that went: its transport closed.
        Ok(peer
            .is_transport_closed()
            .then(|| "the transport closed".to_string()))
    }

    async fn list_changed_count(&self) -> Result<u64, StepError> {
        let count = self
            .subscribed
            .borrow()
            .clone()
            .unwrap_or_else(|| self.handler.list_changed.clone());
        Ok(count.load(Ordering::SeqCst))
    }
}

/// rmcp's Streamable HTTP transport for `http`: rmcp's own default client
/// (`StreamableHttpClientTransport::from_config`) unless the scenario gives roots to trust or
/// an idle read bound, which only a reqwest client of the caller's carries.
fn http_transport(
    http: &HttpTarget,
    timeouts: &TimeoutOverrides,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, StepError> {
    let mut headers = HashMap::new();
    for [name, value] in &http.headers {
        // rmcp takes typed headers (`custom_headers`), so a value `http` refuses is refused
        // here, by its caller: the error names the header, never the value, as an rmcp user's
        // code would.
        let refused = |e: &dyn std::error::Error| StepError::new(format!("header `{name}`: {}", e));
        let value = http::HeaderValue::try_from(value.as_str()).map_err(|e| refused(&e))?;
        let name = http::HeaderName::try_from(name.as_str()).map_err(|e| refused(&e))?;
        headers.insert(name, value);
    }
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(http.url.as_str()).custom_headers(headers);
    if let Some(cap) = http.max_body_bytes {
        // rmcp counts each field line of an event with its line end
        // (`SseEventSizeLimiter::finish_line`, transport/common/client_side_sse.rs:81), the cap
        // a field line without it.
        config = config
            .max_json_response_size(cap)
            .max_sse_event_size(cap.saturating_add(1));
    }
    let idle = timeouts
        .idle_read_ms
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis);
    if http.trusted_roots_pem.is_empty() && idle.is_none() {
        return Ok(StreamableHttpClientTransport::from_config(config));
    }
    // rmcp's default client as `default_http_client` builds it (no idle pooling, its
    // same-origin redirect policy), plus the roots and the idle bound.
    let mut builder = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(same_origin_redirects());
    if !http.trusted_roots_pem.is_empty() {
        let mut roots = Vec::new();
        for pem in &http.trusted_roots_pem {
            roots.push(reqwest::Certificate::from_pem(pem.as_bytes()).map_err(|e| text(&e))?);
        }
        builder = builder.tls_certs_only(roots);
    }
    if let Some(idle) = idle {
        builder = builder.read_timeout(idle);
    }
    let client = builder.build().map_err(|e| text(&e))?;
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// rmcp's redirect policy for its default client (`same_origin_redirect_policy`,
/// transport/common/reqwest/streamable_http_client.rs:603, not exported), written again as an
/// rmcp user who builds the client must: same-origin 307 and 308 only, at most 10 hops.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|original| original.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("exceeded 10 redirects")
        } else {
            attempt.follow()
        }
    })
}
