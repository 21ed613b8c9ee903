//! [`McpClient`]: the handshake and the MCP methods over a connected transport.

use std::time::Duration;

use serde_json::{json, Value};

use crate::jsonrpc::ErrorObject;
use crate::stdio::{fmt_duration, StdioTransport};
use crate::tool::{CallToolResult, Tool, ToolsPage};
use crate::{ClientConfig, McpError, StdioServer, SUPPORTED_PROTOCOL_VERSIONS};

/// More pages than this in one listing is taken for a server looping on its cursor.
const MAX_PAGES: usize = 10_000;

/// A connected MCP client. `Send + Sync`: every method takes `&self`, so it can be shared in
/// an `Arc` across concurrent steps; calls queue in order.
pub struct McpClient {
    transport: StdioTransport,
    config: ClientConfig,
    protocol_version: String,
    server_info: Value,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("command", &self.transport.command())
            .field("profile", &self.config.profile)
            .field("protocol_version", &self.protocol_version)
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// Spawns the server and runs the handshake (bounded by `timeouts().handshake`). On any
    /// failure the server is stopped before the error is returned.
    pub async fn connect_stdio(server: StdioServer, config: ClientConfig) -> Result<McpClient, McpError> {
        let transport = StdioTransport::spawn(&server, &config)?;
        let handshake = handshake(&transport, &config);
        let outcome = match config.timeouts().handshake {
            Some(bound) => match tokio::time::timeout(bound, handshake).await {
                Ok(outcome) => outcome,
                Err(_) => Err(McpError::Timeout(format!(
                    "MCP handshake with server '{}' timed out after {}",
                    server.command,
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
    /// for unbounded); `Some(d)` overrides it for this call only. A result with `isError` is
    /// data, not an error.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> Result<CallToolResult, McpError> {
        let bound = timeout.or(self.config.timeouts().call);
        let params = json!({ "name": name, "arguments": arguments });
        let result = rpc(self.transport.request("tools/call", Some(params), bound).await?)?;
        serde_json::from_value(result).map_err(|e| McpError::Protocol(format!("invalid tools/call result: {e}")))
    }

    /// Any request, bounded like `tools/list`; the result as sent.
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, McpError> {
        rpc(self.transport.request(method, params, self.config.timeouts().list).await?)
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
    /// stderr). Never blocks, never waits behind a call.
    pub fn exited(&self) -> Option<String> {
        self.transport.exited()
    }

    /// How many `notifications/tools/list_changed` were read.
    pub fn tools_list_changes(&self) -> u64 {
        self.transport.list_changes()
    }

    /// The server's process id (for tests).
    pub fn server_pid(&self) -> Option<u32> {
        self.transport.pid()
    }
}

/// Turns a JSON-RPC error response into [`McpError::JsonRpc`], code and message kept.
fn rpc(outcome: Result<Value, ErrorObject>) -> Result<Value, McpError> {
    outcome.map_err(|e| McpError::JsonRpc { code: e.code, message: e.message, data: e.data })
}

/// `initialize`, the version check, then `notifications/initialized`.
async fn handshake(transport: &StdioTransport, config: &ClientConfig) -> Result<(String, Value), McpError> {
    let params = json!({
        "protocolVersion": config.profile.stdio_protocol_version(),
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
