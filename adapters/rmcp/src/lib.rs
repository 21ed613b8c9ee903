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
//! `tools/call` and `tools/list`; rmcp has none for the handshake), and the MCP authorization
//! flow as a pre-registered client (its `auth` feature: `AuthClient`, `OAuthState`,
//! `AuthorizationManager`). No timeout or redaction of the adapter's own; the one retry is
//! what rmcp leaves to its caller: a request refused with a challenge rmcp returns
//! (`ServiceError::auth_challenge`) is sent once more after authorizing (see `Authorization`).

use mcp_conformance::cut::{
    Capability, ClientUnderTest, Described, HttpTarget, Settings, StepError, StepResult, Target,
    TransportKind,
};
use mcp_conformance::scenario::{OAuthClient, TimeoutOverrides};
use rmcp::model::ProtocolVersion;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientNotification, ClientRequest, CustomNotification,
    CustomRequest, ListToolsRequest, PaginatedRequestParams, ServerResult,
};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RunningService, ServiceError};
use rmcp::transport::auth::{
    AuthClient, AuthorizationCallback, AuthorizationManager, AuthorizationRequest, OAuthState,
    WWWAuthenticateParams,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
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
    /// The connection's authorization flow, when the target configures one.
    oauth: RefCell<Option<Rc<Authorization>>>,
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

/// Sends `request` through `peer`, bounded by `timeout` (rmcp's
/// `PeerRequestOptions::timeout`) or unbounded, as rmcp's `Peer::send_request` sends it.
async fn send_through(
    peer: Peer<RoleClient>,
    request: ClientRequest,
    timeout: Option<Duration>,
) -> Result<ServerResult, ServiceError> {
    match timeout {
        None => peer.send_request(request).await,
        Some(timeout) => {
            let mut options = PeerRequestOptions::no_options();
            options.timeout = Some(timeout);
            let handle = peer.send_request_with_option(request, options).await?;
            handle.await_response().await
        }
    }
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
        self.authorized(|| send_through(peer.clone(), request.clone(), timeout))
            .await
    }

    /// Runs `op`; when the server refused it with a challenge that rmcp hands its caller
    /// (`ServiceError::auth_challenge`), authorizes as that challenge asks and runs it once
    /// more. Without an authorization flow, an error as rmcp wrote it.
    async fn authorized<T, F, Fut>(&self, op: F) -> Result<T, StepError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let error = match op().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        let oauth = self.oauth.borrow().clone();
        match oauth {
            Some(oauth) if oauth.answer(&error).await? => op().await.map_err(|e| text(&e)),
            _ => Err(text(&error)),
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
                // Its `auth` feature (transport/auth.rs): `AuthClient` under the transport,
                // `OAuthState` with `AuthorizationRequest::with_preregistered_client` and
                // `with_challenge`, `AuthorizationManager::request_scope_upgrade` (see
                // `Authorization`).
                Capability::Authorization,
            ],
            profile: "strict".into(),
        }
    }

    async fn connect(&self, target: &Target, settings: &Settings) -> StepResult {
        let handler = self.handler.clone();
        *self.bounds.borrow_mut() = Bounds::from(&settings.timeouts);
        *self.closed.borrow_mut() = None;
        *self.oauth.borrow_mut() = None;
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
            Target::Http(http) => match &http.oauth {
                None => {
                    let transport = http_transport(http, &settings.timeouts)?;
                    handler
                        .serve_with_lifecycle(transport, lifecycle)
                        .await
                        .map_err(|e| text(&e))?
                }
                // rmcp's reactive flow: connect through an `AuthClient` holding no token; a
                // 401 ends the connect with the server's challenge
                // (`ClientInitializeError::auth_challenge`), which the caller authorizes with
                // and connects again.
                Some(client) => {
                    let oauth =
                        Rc::new(Authorization::new(http, client, &settings.timeouts).await?);
                    let first = handler
                        .clone()
                        .serve_with_lifecycle(oauth.transport(http)?, lifecycle.clone())
                        .await;
                    let service = match first {
                        Ok(service) => service,
                        Err(error) => {
                            let Some(challenge) = error.auth_challenge() else {
                                return Err(text(&error));
                            };
                            oauth.authorize(challenge).await?;
                            handler
                                .serve_with_lifecycle(oauth.transport(http)?, lifecycle)
                                .await
                                .map_err(|e| text(&e))?
                        }
                    };
                    *self.oauth.borrow_mut() = Some(oauth);
                    service
                }
            },
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
            let peer = self.peer()?;
            let tools = self
                .authorized(|| {
                    let peer = peer.clone();
                    async move { peer.list_all_tools().await }
                })
                .await?;
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
            None => {
                let service = self.service()?;
                self.authorized(|| service.call_tool(params.clone()))
                    .await?
            }
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
    let config = transport_config(http)?;
    if http.trusted_roots_pem.is_empty() && idle_bound(timeouts).is_none() {
        return Ok(StreamableHttpClientTransport::from_config(config));
    }
    Ok(StreamableHttpClientTransport::with_client(
        http_client(http, timeouts)?,
        config,
    ))
}

/// The transport's configuration for `http`: its URL, headers and caps.
fn transport_config(http: &HttpTarget) -> Result<StreamableHttpClientTransportConfig, StepError> {
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
    Ok(config)
}

/// The scenario's idle read bound, when it sets one.
fn idle_bound(timeouts: &TimeoutOverrides) -> Option<Duration> {
    timeouts
        .idle_read_ms
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis)
}

/// rmcp's default client as `default_http_client` builds it (no idle pooling, its
/// same-origin redirect policy), plus the roots to trust and the idle bound `http` and
/// `timeouts` give.
fn http_client(
    http: &HttpTarget,
    timeouts: &TimeoutOverrides,
) -> Result<reqwest::Client, StepError> {
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
    if let Some(idle) = idle_bound(timeouts) {
        builder = builder.read_timeout(idle);
    }
    builder.build().map_err(|e| text(&e))
}

/// A connection's authorization flow (capability `authorization`), all rmcp's
/// (`transport::auth`): its `AuthClient` asks its `AuthorizationManager` for the token of
/// each request and refreshes a rejected one once; a 401 or 403 it does not get past reaches
/// the caller with the server's challenge. What is left to an rmcp application is done here
/// as one does it: authorize with the challenge (`OAuthState`, a pre-registered client), and
/// for `403 insufficient_scope` step up (`AuthorizationManager::request_scope_upgrade`), then
/// send the refused request once more.
struct Authorization {
    /// The pre-registered client and its redirect URI.
    client: OAuthClient,
    /// The MCP server's URL, where rmcp's discovery starts.
    url: String,
    /// The HTTP client of the transport; the manager inside is replaced by each authorization.
    auth: AuthClient<reqwest::Client>,
}

impl Authorization {
    async fn new(
        http: &HttpTarget,
        client: &OAuthClient,
        timeouts: &TimeoutOverrides,
    ) -> Result<Self, StepError> {
        let manager = AuthorizationManager::new(http.url.as_str())
            .await
            .map_err(|e| text(&e))?;
        Ok(Authorization {
            client: client.clone(),
            url: http.url.clone(),
            auth: AuthClient::new(http_client(http, timeouts)?, manager),
        })
    }

    /// A transport through the `AuthClient`.
    fn transport(
        &self,
        http: &HttpTarget,
    ) -> Result<StreamableHttpClientTransport<AuthClient<reqwest::Client>>, StepError> {
        Ok(StreamableHttpClientTransport::with_client(
            self.auth.clone(),
            transport_config(http)?,
        ))
    }

    /// rmcp's authorization for `challenge` (a 401's `WWW-Authenticate`): discovery seeded by
    /// the challenge, the pre-registered client, the scopes of rmcp's initial-login selection
    /// (the challenge's, else the resource's), PKCE and `resource`; the user agent's step;
    /// the code exchanged, `state` and `iss` checked by rmcp. The tokens go to the transport's
    /// `AuthClient`. Without `with_initial_scope_selection`, rmcp's default (`select_scopes`)
    /// asks for the challenge's scopes and the resource's `scopes_supported` together
    /// (transport/auth.rs:2300 and 2305), which `auth/scope-from-www-authenticate` fails.
    async fn authorize(&self, challenge: &str) -> Result<(), StepError> {
        let mut state = OAuthState::new(self.url.as_str(), None)
            .await
            .map_err(|e| text(&e))?;
        let mut request = AuthorizationRequest::new(self.client.redirect_uri.as_str())
            .with_preregistered_client(self.client.client_id.as_str())
            .with_initial_scope_selection()
            .with_challenge(challenge);
        if let Some(secret) = &self.client.client_secret {
            request = request.with_client_secret(secret.as_str());
        }
        state
            .start_authorization(request)
            .await
            .map_err(|e| text(&e))?;
        let authorization_url = state.get_authorization_url().await.map_err(|e| text(&e))?;
        let redirect = user_agent(&authorization_url, &self.client.redirect_uri).await?;
        state
            .handle_callback_url(&redirect)
            .await
            .map_err(|e| text(&e))?;
        let manager = state
            .into_authorization_manager()
            .ok_or_else(|| StepError::new("rmcp's OAuthState ended unauthorized"))?;
        *self.auth.auth_manager.lock().await = manager;
        Ok(())
    }

    /// rmcp's step-up for `scope`: a new authorization URL for the granted scopes and `scope`
    /// (`request_scope_upgrade`, which counts the attempts), the user agent's step, the code
    /// exchanged by the same manager.
    async fn step_up(&self, scope: &str) -> Result<(), StepError> {
        let manager = self.auth.auth_manager.lock().await;
        let authorization_url = manager
            .request_scope_upgrade(scope)
            .await
            .map_err(|e| text(&e))?;
        let redirect = user_agent(&authorization_url, &self.client.redirect_uri).await?;
        let callback = AuthorizationCallback::from_redirect_url(&redirect).map_err(|e| text(&e))?;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| text(&e))?;
        Ok(())
    }

    /// Answers a request's `error`: authorizes again after a 401
    /// (`ServiceError::is_authorization_required`), steps up after `403 insufficient_scope`
    /// naming a scope. True when the request is worth sending again.
    async fn answer(&self, error: &ServiceError) -> Result<bool, StepError> {
        let Some(challenge) = error.auth_challenge() else {
            return Ok(false);
        };
        if error.is_authorization_required() {
            self.authorize(challenge).await?;
            return Ok(true);
        }
        let base = reqwest::Url::parse(&self.url).map_err(|e| text(&e))?;
        let params = WWWAuthenticateParams::parse(challenge, &base);
        match params.scope {
            Some(scope) if params.is_insufficient_scope() => {
                self.step_up(&scope).await?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

/// The most redirects the user agent follows from the authorization URL.
const MAX_AUTHORIZATION_HOPS: usize = 10;

/// The user agent's step, as the runner plays it: open `authorization_url` and follow the
/// authorization server's redirects (a reqwest client that follows none itself) until one
/// leads to `redirect_uri`, which is returned without being requested.
async fn user_agent(authorization_url: &str, redirect_uri: &str) -> Result<String, StepError> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| text(&e))?;
    let mut url = reqwest::Url::parse(authorization_url)
        .map_err(|e| StepError::new(format!("invalid authorization URL: {e}")))?;
    for _ in 0..=MAX_AUTHORIZATION_HOPS {
        if url.as_str().starts_with(redirect_uri) {
            return Ok(url.into());
        }
        let origin = url.origin().ascii_serialization();
        let fail = |what: String| StepError::new(format!("authorization at {origin}: {what}"));
        let response = client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| fail(text(&e.without_url()).text))?;
        if !response.status().is_redirection() {
            return Err(fail(format!(
                "answered {} instead of a redirect",
                response.status().as_u16()
            )));
        }
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .ok_or_else(|| fail("a redirect without a Location".into()))?;
        url = url
            .join(location)
            .map_err(|_| fail("a redirect to an invalid URL".into()))?;
    }
    Err(StepError::new(
        "the authorization server never redirected to the redirect URI",
    ))
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
