//! [`ToolServer`]: what the tool layer needs from a connected client.

use std::future::Future;

use serde_json::Value;

use crate::{CallToolResult, McpClient, McpError, TestHooks, Tool};

/// A connected MCP server as the tool layer uses it. [`McpClient`] implements it; a wrapper
/// can implement it to change one answer (e.g. a transport that cannot report
/// notifications).
pub trait ToolServer: Send + Sync + 'static {
    /// `tools/list`, bounded as the client bounds it.
    fn list_tools(&self) -> impl Future<Output = Result<Vec<Tool>, McpError>> + Send;

    /// `tools/call` with the client's own call bound; a result with `isError` is data.
    fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> impl Future<Output = Result<CallToolResult, McpError>> + Send;

    /// `None` while the server runs; once it has gone, why. Never blocks.
    fn exited(&self) -> Option<String>;

    /// How many `notifications/tools/list_changed` were read so far.
    fn tools_list_changes(&self) -> u64;

    /// Whether the transport reports server notifications (so that
    /// [`tools_list_changes`](ToolServer::tools_list_changes) means something). True for
    /// stdio and HTTP.
    fn reports_notifications(&self) -> bool {
        true
    }

    /// Test-only rule switches (see [`TestHooks`]); none for a real server.
    #[doc(hidden)]
    fn test_hooks(&self) -> TestHooks {
        TestHooks::default()
    }
}

impl ToolServer for McpClient {
    fn list_tools(&self) -> impl Future<Output = Result<Vec<Tool>, McpError>> + Send {
        McpClient::list_tools(self)
    }

    fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> impl Future<Output = Result<CallToolResult, McpError>> + Send {
        McpClient::call_tool(self, name, arguments, None)
    }

    fn exited(&self) -> Option<String> {
        McpClient::exited(self)
    }

    fn tools_list_changes(&self) -> u64 {
        McpClient::tools_list_changes(self)
    }

    fn test_hooks(&self) -> TestHooks {
        self.config().hooks.clone()
    }
}
