//! kova-sdk 0.10's MCP client (`kova_sdk::mcp`, pinned) as a client under test, under the
//! `kova` profile, written against kova-sdk's and mcp-conformance's public APIs only.
//!
//! What it declares is what kova's documentation ("Connecting MCP Servers") offers: stdio,
//! Streamable HTTP and the legacy HTTP+SSE transport; a per-call timeout
//! (`tools_call_with_timeout`); `reconnect()`; static headers; its one request timeout
//! (`McpClient::connect_with_timeout`) and a bearer-token provider (its `TokenProvider`
//! trait, on Streamable HTTP); its tool layer (`McpTool`, each tool named
//! `{server_name}__{tool}`, listed once as `AgentBuilder::mcp_client` lists them). kova has no
//! `close()`: a stdio child "is killed on drop", so closing is dropping the client. It has no
//! `exited()` either: `McpClient`'s public API (connect, reconnect, `tools_list`, `tools_call`)
//! reports a server's exit only through a failed call. No timeout, retry or redaction of the
//! adapter's own.

use kova_sdk::error::KovaError;
use kova_sdk::mcp::tool::McpTool;
use kova_sdk::mcp::{McpClient, McpTransport, TokenProvider};
use kova_sdk::tool::Tool;
use mcp_conformance::cut::{
    Capability, ClientUnderTest, Described, ScriptedTokens, Settings, StepError, StepResult,
    Target, ToolLayerStep, TransportKind,
};
use mcp_conformance::scenario::TimeoutOverrides;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// kova-sdk's MCP client under test.
#[derive(Default)]
pub struct Adapter {
    client: RefCell<Option<Arc<McpClient>>>,
    /// The tool layer's server name (`McpTool`'s `server_name`) and the tools it offers.
    server: RefCell<Option<String>>,
    tools: RefCell<Vec<Arc<McpTool>>>,
    /// A tool set's tools, every server's in order.
    set: RefCell<Vec<Arc<McpTool>>>,
}

/// The tools `client` lists, each an `McpTool` of `server`, as `AgentBuilder::mcp_client`
/// builds them (agent/builder.rs).
async fn mcp_tools(client: &Arc<McpClient>, server: &str) -> Result<Vec<Arc<McpTool>>, StepError> {
    let definitions = client.tools_list().await.map_err(text)?;
    Ok(definitions
        .into_iter()
        .map(|definition| Arc::new(McpTool::new(definition, Arc::clone(client), server)))
        .collect())
}

fn offered(tools: &[Arc<McpTool>]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name(),
                "original_name": t.bare_name(),
                "description": t.description(),
                "parameters": t.parameters_schema(),
            })
        })
        .collect();
    json!({ "tools": tools })
}

/// Calls `name` among `tools` as kova's agent loop does: a tool's result, failed when
/// `is_error`; a name none has, the loop's "Tool not found" (agent/mod.rs:813).
async fn call_among(tools: &[Arc<McpTool>], name: &str, arguments: Value) -> Value {
    match tools.iter().find(|t| t.name() == name) {
        Some(tool) => match tool.execute(arguments).await {
            Ok(result) if result.is_error => json!({ "failed": result.content }),
            Ok(result) => json!({ "output": result.content }),
            Err(e) => json!({ "error": e.to_string() }),
        },
        None => json!({ "failed": format!("Tool not found: {name}") }),
    }
}

fn text(error: impl std::fmt::Display) -> StepError {
    StepError::new(error.to_string())
}

impl Adapter {
    fn client(&self) -> Result<Arc<McpClient>, StepError> {
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
                // `McpClient::connect_with_timeout(transport, request_timeout)`: one bound on
                // every request (the handshake, `tools/list`, each `tools/call`).
                Capability::ConfigurableTimeouts,
                // `McpTransport::StreamableHttp { auth: Option<Arc<dyn TokenProvider>> }`:
                // `token()` before each request, `refresh()` once on a 401.
                Capability::TokenProvider,
                // `McpTool::new(definition, client, server_name)` (mcp/tool.rs) over each
                // listed tool, as `AgentBuilder::mcp_client` registers them.
                Capability::ToolLayer,
            ],
            profile: "kova".into(),
        }
    }

    async fn connect(&self, target: &Target, settings: &Settings) -> StepResult {
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
                        auth: http.tokens.as_ref().map(|tokens| {
                            Arc::new(ScriptedProvider(ScriptedTokens::new(tokens)))
                                as Arc<dyn TokenProvider>
                        }),
                    }
                }
            }
        };
        let client = match request_timeout(&settings.timeouts) {
            Some(timeout) => McpClient::connect_with_timeout(transport, timeout).await,
            None => McpClient::connect(transport).await,
        }
        .map_err(text)?;
        *self.client.borrow_mut() = Some(Arc::new(client));
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
        // The tools hold the client too.
        self.tools.borrow_mut().clear();
        self.set.borrow_mut().clear();
        Ok(json!(self.client.borrow_mut().take().is_some()))
    }

    async fn tool_layer(&self, step: ToolLayerStep) -> StepResult {
        match step {
            ToolLayerStep::Build { name, prefix, .. } => {
                // kova names every tool `{server_name}__{tool}`: the prefix, else the name.
                self.client()?;
                *self.server.borrow_mut() = Some(prefix.clone().unwrap_or_else(|| name.clone()));
                Ok(json!({ "source": name, "prefix": prefix }))
            }
            ToolLayerStep::BeginRun => {
                let server = self.server.borrow().clone().ok_or_else(|| {
                    StepError::new("a tool-layer step needs a `tool_source` step first")
                })?;
                let tools = mcp_tools(&self.client()?, &server).await?;
                let value = offered(&tools);
                *self.tools.borrow_mut() = tools;
                Ok(value)
            }
            // kova's agent lists its MCP tools once, when it is built.
            ToolLayerStep::NextTurn => Ok(offered(&self.tools.borrow())),
            ToolLayerStep::Call { name, arguments } => {
                let tools = self.tools.borrow().clone();
                Ok(call_among(&tools, &name, arguments).await)
            }
            ToolLayerStep::Set { servers } => {
                let client = self.client()?;
                let mut tools: Vec<Arc<McpTool>> = Vec::new();
                for server in &servers {
                    let name = server.prefix.clone().unwrap_or_else(|| server.name.clone());
                    tools.extend(mcp_tools(&client, &name).await?);
                }
                let names: Vec<Value> = tools.iter().map(|t| json!({ "name": t.name() })).collect();
                *self.set.borrow_mut() = tools;
                Ok(json!({ "tools": names }))
            }
            ToolLayerStep::CallSet { name, arguments } => {
                let tools = self.set.borrow().clone();
                Ok(call_among(&tools, &name, arguments).await)
            }
        }
    }

    async fn reconnect(&self) -> StepResult {
        self.client()?.reconnect().await.map_err(text)?;
        Ok(json!("reconnected"))
    }
}

/// kova's one request timeout from the scenario's bounds: the tightest it sets (0, unbounded,
/// counts as none). kova bounds every request and an HTTP stall with it; it has no exit
/// settle bound. `None`: kova's default (30 s).
fn request_timeout(timeouts: &TimeoutOverrides) -> Option<Duration> {
    [
        timeouts.handshake_ms,
        timeouts.call_ms,
        timeouts.list_ms,
        timeouts.idle_read_ms,
    ]
    .into_iter()
    .flatten()
    .filter(|&ms| ms > 0)
    .min()
    .map(Duration::from_millis)
}

type Answer<'a> = Pin<Box<dyn Future<Output = Result<String, KovaError>> + Send + 'a>>;

/// The scenario's scripted tokens as kova's `TokenProvider` (see [`ScriptedTokens`]).
#[derive(Debug)]
struct ScriptedProvider(ScriptedTokens);

// kova declares the trait with `#[async_trait]`: these are the methods it expands to.
impl TokenProvider for ScriptedProvider {
    fn token<'a, 'b>(&'a self) -> Answer<'b>
    where
        'a: 'b,
        Self: 'b,
    {
        let token = self.0.token();
        Box::pin(async move {
            token.ok_or_else(|| KovaError::Mcp("the token provider has no token left".into()))
        })
    }

    fn refresh<'a, 'b>(&'a self) -> Answer<'b>
    where
        'a: 'b,
        Self: 'b,
    {
        let token = self.0.refresh();
        Box::pin(async move {
            token.ok_or_else(|| KovaError::Mcp("the token provider could not refresh".into()))
        })
    }
}
