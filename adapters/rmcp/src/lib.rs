//! rmcp's client (the official Rust SDK, pinned) as a client under test, written against
//! rmcp's and mcp-conformance's public APIs only.
//!
//! What it declares is what rmcp's client can express here: stdio and Streamable HTTP
//! (reqwest, no TLS stack built), a per-call timeout (`PeerRequestOptions::timeout`),
//! cancelling a call by dropping its future (rmcp's `send_request_cancel_on_drop`), custom
//! headers (`StreamableHttpClientTransportConfig::custom_headers`), and the count of
//! `notifications/tools/list_changed` (its `ClientHandler::on_tool_list_changed`), the
//! server's initialize result as kept (`Peer::peer_info`), any request or notification the
//! caller names (`CustomRequest`, `CustomNotification`), a stdio server in a process group of
//! its own (the `process_wrap::tokio::ProcessGroup` wrapper its `TokioChildProcess` takes)
//! and that server's pid (`TokioChildProcess::id`). No timeout, retry or redaction of the
//! adapter's own.

use mcp_conformance::cut::{
    Capability, ClientUnderTest, Described, Settings, StepError, StepResult, Target, TransportKind,
};
use rmcp::model::ProtocolVersion;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientNotification, ClientRequest, CustomNotification,
    CustomRequest, ServerResult,
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
            ],
            profile: "strict".into(),
        }
    }

    async fn connect(&self, target: &Target, settings: &Settings) -> StepResult {
        let handler = self.handler.clone();
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
                let mut headers = HashMap::new();
                for [name, value] in &http.headers {
                    // rmcp takes typed headers (`custom_headers`), so a value `http` refuses
                    // is refused here, by its caller: the error names the header, never the
                    // value, as an rmcp user's code would.
                    let refused = |e: &dyn std::error::Error| {
                        StepError::new(format!("header `{name}`: {}", e))
                    };
                    let value =
                        http::HeaderValue::try_from(value.as_str()).map_err(|e| refused(&e))?;
                    let name =
                        http::HeaderName::try_from(name.as_str()).map_err(|e| refused(&e))?;
                    headers.insert(name, value);
                }
                let config = StreamableHttpClientTransportConfig::with_uri(http.url.as_str())
                    .custom_headers(headers);
                let transport = StreamableHttpClientTransport::from_config(config);
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
        *self.service.borrow_mut() = Some(Rc::new(service));
        Ok(json!({ "protocolVersion": version }))
    }

    async fn list_tools(&self) -> StepResult {
        let tools = self.peer()?.list_all_tools().await.map_err(|e| text(&e))?;
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
                let mut options = PeerRequestOptions::no_options();
                options.timeout = Some(timeout);
                let handle = self
                    .peer()?
                    .send_request_with_option(request, options)
                    .await
                    .map_err(|e| text(&e))?;
                match handle.await_response().await.map_err(|e| text(&e))? {
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
                Ok(json!(format!("{reason:?}")))
            }
            // A call still in flight holds it: end the service through its token.
            Err(shared) => {
                shared.cancellation_token().cancel();
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
        let result = self
            .peer()?
            .send_request(request)
            .await
            .map_err(|e| text(&e))?;
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
        Ok(json!(self.service.borrow_mut().take().is_some()))
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
