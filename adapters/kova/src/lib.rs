//! kova-sdk 0.10's MCP client (`kova_sdk::mcp`, pinned) as a client under test, under the
//! `kova` profile, written against kova-sdk's and mcp-conformance's public APIs only.
//!
//! What it declares is what kova's documentation ("Connecting MCP Servers") offers: stdio,
//! Streamable HTTP and the legacy HTTP+SSE transport; a per-call timeout
//! (`tools_call_with_timeout`); `reconnect()`; static headers. kova has no `close()`: a
//! stdio child "is killed on drop", so closing is dropping the client. No timeout, retry or
//! redaction of the adapter's own.

use kova_sdk::mcp::{McpClient, McpTransport};
use mcp_conformance::cut::{
    Capability, ClientUnderTest, Described, Settings, StepError, StepResult, Target, TransportKind,
};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

/// kova-sdk's MCP client under test.
#[derive(Default)]
pub struct Adapter {
    client: RefCell<Option<Rc<McpClient>>>,
}

fn text(error: impl std::fmt::Display) -> StepError {
    StepError::new(error.to_string())
}

impl Adapter {
    fn client(&self) -> Result<Rc<McpClient>, StepError> {
        self.client
            .borrow()
            .clone()
            .ok_or_else(|| StepError::new("not connected"))
    }
}

impl ClientUnderTest for Adapter {
    fn describe(&self) -> Described {
        Described {
            name: "kova-sdk".into(),
            version: "0.10.1".into(),
            transports: vec![
                TransportKind::Stdio,
                TransportKind::Http,
                TransportKind::LegacySse,
            ],
            capabilities: vec![
                Capability::CallTimeout,
                Capability::Reconnect,
                Capability::CustomHeaders,
                Capability::Drop,
            ],
            profile: "kova".into(),
        }
    }

    async fn connect(&self, target: &Target, _settings: &Settings) -> StepResult {
        let transport = match target {
            Target::Stdio(stdio) => McpTransport::Stdio {
                command: stdio.command.clone(),
                args: stdio.args.clone(),
                env: stdio.env.clone().into_iter().collect(),
            },
            Target::Http(http) => {
                // A name set again replaces its value. kova takes a `HashMap<String, String>`,
                // whose keys differ by case where header names do not: the caller keeps one
                // entry per name (else both would go out, in the map's random order).
                let mut headers: HashMap<String, String> = HashMap::new();
                for [name, value] in &http.headers {
                    headers.retain(|old, _| !old.eq_ignore_ascii_case(name));
                    headers.insert(name.clone(), value.clone());
                }
                if http.legacy_sse {
                    McpTransport::HttpSse {
                        url: http.url.clone(),
                        headers,
                    }
                } else {
                    McpTransport::StreamableHttp {
                        url: http.url.clone(),
                        headers,
                        auth: None,
                    }
                }
            }
        };
        let client = McpClient::connect(transport).await.map_err(text)?;
        *self.client.borrow_mut() = Some(Rc::new(client));
        Ok(json!("connected"))
    }

    async fn list_tools(&self) -> StepResult {
        let tools = self.client()?.tools_list().await.map_err(text)?;
        Ok(json!(tools))
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> StepResult {
        let client = self.client()?;
        let (content, is_error) = match timeout {
            None => client.tools_call(name, arguments).await,
            Some(timeout) => {
                client
                    .tools_call_with_timeout(name, arguments, timeout)
                    .await
            }
        }
        .map_err(text)?;
        Ok(json!({ "text": content, "isError": is_error }))
    }

    async fn close(&self) -> StepResult {
        // kova-sdk has no close(): dropping the client kills its stdio child.
        let client = self
            .client
            .borrow_mut()
            .take()
            .ok_or_else(|| StepError::new("not connected"))?;
        drop(client);
        Ok(json!("dropped"))
    }

    async fn drop_connection(&self) -> StepResult {
        Ok(json!(self.client.borrow_mut().take().is_some()))
    }

    async fn reconnect(&self) -> StepResult {
        self.client()?.reconnect().await.map_err(text)?;
        Ok(json!("reconnected"))
    }
}
