//! [`McpClient`]: the handshake and the MCP methods over a connected transport.

use std::time::Duration;

use serde_json::{json, Value};

use crate::http::legacy::LegacyTransport;
use crate::http::streamable::StreamableTransport;
use crate::jsonrpc::ErrorObject;
use crate::stdio::{fmt_duration, StdioTransport};
use crate::tool::{CallToolResult, Tool, ToolsPage};
use crate::{ClientConfig, HttpServer, McpError, Profile, StdioServer, SUPPORTED_PROTOCOL_VERSIONS};

/// More pages than this in one listing is taken for a server looping on its cursor.
const MAX_PAGES: usize = 10_000;

/// The connection an [`McpClient`] speaks over.
enum Transport {
    Stdio(StdioTransport),
    Http(Box<StreamableTransport>),
    LegacySse(LegacyTransport),
}

impl Transport {
    async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        bound: Option<Duration>,
    ) -> Result<Result<Value, ErrorObject>, McpError> {
        match self {
            Transport::Stdio(t) => t.request(method, params, bound).await,
            Transport::Http(t) => t.request(method, params, bound).await,
            Transport::LegacySse(t) => t.request(method, params, bound).await,
        }
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        match self {
            Transport::Stdio(t) => t.notify(method, params).await,
            Transport::Http(t) => t.notify(method, params).await,
            Transport::LegacySse(t) => t.notify(method, params).await,
        }
    }

    async fn close(&self) {
        match self {
            Transport::Stdio(t) => t.close().await,
            Transport::Http(t) => t.close().await,
            Transport::LegacySse(t) => t.close().await,
        }
    }

    /// The protocol version offered in `initialize`.
    fn offered_version(&self, profile: Profile) -> &'static str {
        match (self, profile) {
            (Transport::Stdio(_), _) => profile.stdio_protocol_version(),
            (Transport::Http(_), Profile::Strict) => crate::LATEST_PROTOCOL_VERSION,
            (Transport::Http(_), Profile::Kova) => "2025-06-18",
            (Transport::Http(_), Profile::Yoagent) | (Transport::LegacySse(_), _) => "2024-11-05",
        }
    }

    /// The handshake settled on `version`.
    fn negotiated(&self, version: &str) {
        if let Transport::Http(t) = self {
            t.negotiated(version);
        }
    }

    /// The bound of a tool call: over stdio the override or the client's call bound; over
    /// HTTP none in yoagent (the idle timeout only), the override in strict, the override
    /// or the call bound in kova.
    fn call_bound(&self, config: &ClientConfig, timeout: Option<Duration>) -> Option<Duration> {
        match (self, config.profile) {
            (Transport::Stdio(_), _) | (_, Profile::Kova) => timeout.or(config.timeouts().call),
            (_, Profile::Strict) => timeout,
            (_, Profile::Yoagent) => None,
        }
    }

    /// The bound of any other request: over HTTP only kova has one.
    fn list_bound(&self, config: &ClientConfig) -> Option<Duration> {
        match (self, config.profile) {
            (Transport::Stdio(_), _) | (_, Profile::Kova) => config.timeouts().list,
            _ => None,
        }
    }

    /// What names the server in handshake errors.
    fn name(&self) -> String {
        match self {
            Transport::Stdio(t) => format!("server '{}'", t.command()),
            Transport::Http(t) => t.origin().to_string(),
            Transport::LegacySse(t) => t.origin().to_string(),
        }
    }
}

/// A connected MCP client. `Send + Sync`: every method takes `&self`, so it can be shared in
/// an `Arc` across concurrent steps; calls queue in order.
pub struct McpClient {
    transport: Transport,
    config: ClientConfig,
    protocol_version: String,
    server_info: Value,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut f = f.debug_struct("McpClient");
        match &self.transport {
            Transport::Stdio(t) => f.field("command", &t.command()),
            Transport::Http(t) => f.field("origin", &t.origin()),
            Transport::LegacySse(t) => f.field("legacy_sse_origin", &t.origin()),
        };
        f
            .field("profile", &self.config.profile)
            .field("protocol_version", &self.protocol_version)
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// Spawns the server and runs the handshake (bounded by `timeouts().handshake`). On any
    /// failure the server is stopped before the error is returned.
    pub async fn connect_stdio(server: StdioServer, config: ClientConfig) -> Result<McpClient, McpError> {
        let transport = Transport::Stdio(StdioTransport::spawn(&server, &config)?);
        McpClient::start(transport, config).await
    }

    /// Connects to a Streamable HTTP server and runs the handshake (bounded by
    /// `timeouts().handshake`). Offers 2024-11-05 (yoagent), 2025-06-18 (kova) or 2025-11-25
    /// (strict). Nothing is sent before the URL and certificates are checked.
    pub async fn connect_http(server: HttpServer, config: ClientConfig) -> Result<McpClient, McpError> {
        let transport = Transport::Http(Box::new(StreamableTransport::new(&server, &config)?));
        McpClient::start(transport, config).await
    }

    /// Connects to a legacy HTTP+SSE server (2024-11-05): opens the event stream, takes its
    /// `endpoint` event, and (strict and yoagent) runs the 2024-11-05 handshake; the kova
    /// profile skips the handshake, as Kova's `HttpSse` does.
    pub async fn connect_legacy_sse(server: HttpServer, config: ClientConfig) -> Result<McpClient, McpError> {
        let transport = Transport::LegacySse(LegacyTransport::connect(&server, &config).await?);
        if config.profile == Profile::Kova {
            let protocol_version = "2024-11-05".to_string();
            return Ok(McpClient { transport, config, protocol_version, server_info: Value::Null });
        }
        McpClient::start(transport, config).await
    }

    /// Runs the bounded handshake; on failure closes the transport.
    async fn start(transport: Transport, config: ClientConfig) -> Result<McpClient, McpError> {
        let handshake = handshake(&transport, &config);
        let outcome = match config.timeouts().handshake {
            Some(bound) => match tokio::time::timeout(bound, handshake).await {
                Ok(outcome) => outcome,
                Err(_) => Err(McpError::Timeout(format!(
                    "MCP handshake with {} timed out after {}",
                    transport.name(),
                    fmt_duration(bound)
                ))),
            },
            None => handshake.await,
        };
        match outcome {
            Ok((protocol_version, server_info)) => Ok(McpClient { transport, config, protocol_version, server_info }),
            Err(error) => {
                transport.close().await;
                Err(error)
            }
        }
    }

    /// The protocol version the server answered.
    pub fn protocol_version(&self) -> &str {
        &self.protocol_version
    }

    /// The server's `initialize` result (serverInfo, capabilities…), as sent.
    pub fn server_info(&self) -> &Value {
        &self.server_info
    }

    /// The configuration the client runs with.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// `tools/list`, bounded by `timeouts().list`; the strict profile follows `nextCursor`
    /// until the list ends, the others read one page.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let result = self.request("tools/list", params).await?;
            let page: ToolsPage = serde_json::from_value(result)
                .map_err(|e| McpError::Protocol(format!("invalid tools/list result: {e}")))?;
            tools.extend(page.tools);
            match page.next_cursor {
                Some(next) if self.config.profile.paginates() => {
                    if cursor.as_deref() == Some(next.as_str()) {
                        return Err(McpError::Protocol(format!("tools/list returned its own cursor '{next}' again")));
                    }
                    cursor = Some(next);
                }
                _ => return Ok(tools),
            }
        }
        Err(McpError::Protocol(format!("tools/list did not end within {MAX_PAGES} pages")))
    }

    /// `tools/call`. `timeout`: `None` = the client's bound (`timeouts().call`, itself `None`
    /// for unbounded); `Some(d)` overrides it for this call only. Over HTTP, yoagent has no
    /// whole-call bound (the idle timeout only), strict only the override, kova both. A
    /// result with `isError` is data, not an error.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> Result<CallToolResult, McpError> {
        let bound = self.transport.call_bound(&self.config, timeout);
        let params = json!({ "name": name, "arguments": arguments });
        let result = rpc(self.transport.request("tools/call", Some(params), bound).await?)?;
        serde_json::from_value(result).map_err(|e| McpError::Protocol(format!("invalid tools/call result: {e}")))
    }

    /// Any request, bounded like `tools/list`; the result as sent.
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, McpError> {
        rpc(self.transport.request(method, params, self.transport.list_bound(&self.config)).await?)
    }

    /// Any notification (no id, not awaited).
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        self.transport.notify(method, params).await
    }

    /// Stops the server (its whole group with `own_process_group`) and reaps it; afterwards
    /// `exited()` reads "was closed". Idempotent; a call in flight fails as closed.
    pub async fn close(&self) -> Result<(), McpError> {
        self.transport.close().await;
        Ok(())
    }

    /// `None` while the server runs; once it has gone, why (exit status and the last of its
    /// stderr). Never blocks, never waits behind a call. Always `None` over HTTP.
    pub fn exited(&self) -> Option<String> {
        match &self.transport {
            Transport::Stdio(t) => t.exited(),
            Transport::Http(_) | Transport::LegacySse(_) => None,
        }
    }

    /// How many `notifications/tools/list_changed` were read.
    pub fn tools_list_changes(&self) -> u64 {
        match &self.transport {
            Transport::Stdio(t) => t.list_changes(),
            Transport::Http(t) => t.list_changes(),
            Transport::LegacySse(t) => t.list_changes(),
        }
    }

    /// The server's process id (for tests); `None` over HTTP.
    pub fn server_pid(&self) -> Option<u32> {
        match &self.transport {
            Transport::Stdio(t) => t.pid(),
            Transport::Http(_) | Transport::LegacySse(_) => None,
        }
    }

    /// The Streamable HTTP session id held (for tests); `None` over other transports.
    pub fn session_id(&self) -> Option<String> {
        match &self.transport {
            Transport::Http(t) => t.session_id(),
            _ => None,
        }
    }
}

/// Turns a JSON-RPC error response into [`McpError::JsonRpc`], code and message kept.
fn rpc(outcome: Result<Value, ErrorObject>) -> Result<Value, McpError> {
    outcome.map_err(|e| McpError::JsonRpc { code: e.code, message: e.message, data: e.data })
}

/// `initialize`, the version check, then `notifications/initialized`.
async fn handshake(transport: &Transport, config: &ClientConfig) -> Result<(String, Value), McpError> {
    let params = json!({
        "protocolVersion": transport.offered_version(config.profile),
        "capabilities": {},
        "clientInfo": {
            "name": config.client_name.as_deref().unwrap_or(env!("CARGO_PKG_NAME")),
            "version": env!("CARGO_PKG_VERSION"),
        },
    });
    let result = rpc(transport.request("initialize", Some(params), None).await?)?;
    let version = match result.get("protocolVersion") {
        Some(Value::String(version)) => version.clone(),
        Some(other) => {
            return Err(McpError::Protocol(format!(
                "initialize result has a protocolVersion that is not a string: {other}"
            )))
        }
        None => return Err(McpError::Protocol("initialize result has no protocolVersion".into())),
    };
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&version.as_str()) {
        return Err(McpError::Protocol(format!(
            "server answered protocol version '{version}', which this client does not support ({}); disconnected",
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        )));
    }
    transport.negotiated(&version);
    transport.notify("notifications/initialized", None).await?;
    Ok((version, result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_can_be_shared_across_tasks() {
        fn shareable<T: Send + Sync + 'static>() {}
        shareable::<McpClient>();
    }
}
