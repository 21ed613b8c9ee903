//! yoagent 0.26's MCP client (`yoagent::mcp`, pinned) as a client under test, under the
//! `yoagent` profile, written against yoagent's and mcp-conformance's public APIs only.
//!
//! What it declares is what yoagent's documentation ("MCP Integration") offers: stdio and
//! HTTP; a per-call bound (`McpToolAdapter::with_call_timeout`, the bound yoagent applies to a
//! call: `McpClient::call_tool` itself has none); `exited()`; the count of
//! `notifications/tools/list_changed` (`tools_list_changes`); headers
//! (`HttpTransport::with_header`); the redirect policy (`with_redirects`); a process group of
//! the server's own (`StdioOptions::own_process_group`). The client is held as yoagent's docs
//! hold it, in an `Arc<tokio::sync::Mutex<McpClient>>`. No timeout, retry or redaction of the
//! adapter's own.

use mcp_conformance::cut::{
    Capability, ClientUnderTest, Described, Settings, StepError, StepResult, Target, TransportKind,
};
use mcp_conformance::scenario::RedirectPolicy;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use yoagent::mcp::{
    HttpTransport, McpClient, McpToolAdapter, McpToolInfo, Redirects, StdioOptions,
};
use yoagent::{AgentTool, ToolContext};

/// yoagent's MCP client under test.
#[derive(Default)]
pub struct Adapter {
    client: RefCell<Option<Arc<Mutex<McpClient>>>>,
}

fn text(error: impl std::fmt::Display) -> StepError {
    StepError::new(error.to_string())
}

impl Adapter {
    fn client(&self) -> Result<Arc<Mutex<McpClient>>, StepError> {
        self.client
            .borrow()
            .clone()
            .ok_or_else(|| StepError::new("not connected"))
    }
}

impl ClientUnderTest for Adapter {
    fn describe(&self) -> Described {
        Described {
            name: "yoagent".into(),
            version: "0.26.6".into(),
            transports: vec![TransportKind::Stdio, TransportKind::Http],
            capabilities: vec![
                Capability::CallTimeout,
                Capability::Exited,
                Capability::ListChangedCount,
                Capability::CustomHeaders,
                Capability::RedirectPolicy,
                Capability::ProcessGroup,
                Capability::Drop,
            ],
            profile: "yoagent".into(),
        }
    }

    async fn connect(&self, target: &Target, _settings: &Settings) -> StepResult {
        let client = match target {
            Target::Stdio(stdio) => {
                let args: Vec<&str> = stdio.args.iter().map(String::as_str).collect();
                let env = (!stdio.env.is_empty()).then(|| stdio.env.clone().into_iter().collect());
                let options = StdioOptions::new().own_process_group(stdio.own_process_group);
                McpClient::connect_stdio_with(&stdio.command, &args, env, options)
                    .await
                    .map_err(text)?
            }
            Target::Http(http) => {
                let mut transport = HttpTransport::new(&http.url).map_err(text)?;
                for [name, value] in &http.headers {
                    transport = transport.with_header(name, value).map_err(text)?;
                }
                if let Some(policy) = &http.redirects {
                    let redirects = match policy {
                        RedirectPolicy::None => Redirects::None,
                        RedirectPolicy::SameOrigin => Redirects::SameOrigin,
                        RedirectPolicy::Any => Redirects::Any,
                    };
                    transport = transport.with_redirects(redirects).map_err(text)?;
                }
                McpClient::connect_http_with(transport)
                    .await
                    .map_err(text)?
            }
        };
        let info = client
            .server_info()
            .map(|i| json!(i))
            .unwrap_or(Value::Null);
        *self.client.borrow_mut() = Some(Arc::new(Mutex::new(client)));
        Ok(json!({ "serverInfo": info }))
    }

    async fn list_tools(&self) -> StepResult {
        let client = self.client()?;
        let tools = client.lock().await.list_tools().await.map_err(text)?;
        Ok(json!(tools))
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> StepResult {
        let client = self.client()?;
        match timeout {
            None => {
                let result = client
                    .lock()
                    .await
                    .call_tool(name, arguments)
                    .await
                    .map_err(text)?;
                Ok(json!(result))
            }
            Some(timeout) => {
                // yoagent bounds a call in its tool adapter, the way an agent calls a tool.
                let tool = McpToolInfo {
                    name: name.to_string(),
                    description: None,
                    input_schema: Value::Null,
                };
                let adapter = McpToolAdapter::new(client, tool).with_call_timeout(Some(timeout));
                let result = adapter
                    .execute(arguments, ToolContext::new("call", name))
                    .await
                    .map_err(text)?;
                Ok(json!(result))
            }
        }
    }

    async fn close(&self) -> StepResult {
        // `close(&self)` leaves the client in place: `exited()` then reads "was closed".
        let client = self.client()?;
        client.lock().await.close().await.map_err(text)?;
        Ok(json!("closed"))
    }

    async fn drop_connection(&self) -> StepResult {
        Ok(json!(self.client.borrow_mut().take().is_some()))
    }

    async fn exited(&self) -> Result<Option<String>, StepError> {
        Ok(self.client()?.lock().await.exited())
    }

    async fn list_changed_count(&self) -> Result<u64, StepError> {
        Ok(self.client()?.lock().await.tools_list_changes())
    }
}
