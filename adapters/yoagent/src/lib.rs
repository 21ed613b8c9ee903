//! yoagent 0.26's MCP client (`yoagent::mcp`, pinned) as a client under test, under the
//! `yoagent` profile, written against yoagent's and mcp-conformance's public APIs only.
//!
//! What it declares is what yoagent's documentation ("MCP Integration") offers: stdio and
//! HTTP; a per-call bound (`McpToolAdapter::with_call_timeout`, the bound yoagent applies to a
//! call: `McpClient::call_tool` itself has none); `exited()`; the count of
//! `notifications/tools/list_changed` (`tools_list_changes`); headers
//! (`HttpTransport::with_header`); the redirect policy (`with_redirects`); a bearer-token
//! provider (`HttpTransport::with_authorization`, an `AuthorizationSource`); a process group
//! of the server's own (`StdioOptions::own_process_group`). The client is held as yoagent's docs
//! hold it, in an `Arc<tokio::sync::Mutex<McpClient>>`. The tool layer is yoagent's own: an
//! `McpToolSource` over the connected client, asked as its agent loop asks it (the tools at
//! the start of a run, again when `generation()` moved), and `McpToolAdapter`s for a tool
//! set. No timeout, retry or redaction of the adapter's own.

use mcp_conformance::cut::{
    Capability, ClientUnderTest, Described, ScriptedTokens, Settings, StepError, StepResult,
    Target, ToolLayerStep, TransportKind,
};
use mcp_conformance::scenario::RedirectPolicy;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use yoagent::mcp::{
    AuthChallenge, AuthorizationSource, HttpTransport, McpClient, McpError, McpToolAdapter,
    McpToolInfo, McpToolSource, Redirects, StdioOptions,
};
use yoagent::{AgentTool, Content, ToolContext, ToolError, ToolSource};

/// yoagent's MCP client under test.
#[derive(Default)]
pub struct Adapter {
    client: RefCell<Option<Arc<Mutex<McpClient>>>>,
    /// The tool source built over the client, and what the loop last took from it.
    source: RefCell<Option<Rc<Source>>>,
    /// A tool set's tools: every server's adapters, in order.
    set: RefCell<Vec<Arc<dyn AgentTool>>>,
}

/// An `McpToolSource` as yoagent's agent loop holds it: the tools offered for the run and the
/// `generation()` they were taken at.
struct Source {
    source: McpToolSource,
    offered: RefCell<Vec<Arc<dyn AgentTool>>>,
    generation: std::cell::Cell<u64>,
}

impl Source {
    /// The loop's ask: the tools, with the generation they belong to.
    async fn take(&self) {
        self.generation.set(self.source.generation());
        let tools = self.source.tools().await;
        *self.offered.borrow_mut() = tools;
    }

    fn offered(&self) -> Value {
        let tools: Vec<Value> = self
            .offered
            .borrow()
            .iter()
            .map(|t| {
                json!({
                    "name": t.name(),
                    "description": t.description(),
                    "parameters": t.parameters_schema(),
                })
            })
            .collect();
        json!({ "tools": tools })
    }
}

/// A tool's outcome as the model sees it: its text, or its failure's.
fn outcome(result: Result<yoagent::ToolResult, ToolError>) -> Value {
    match result {
        Ok(result) => {
            let parts: Vec<String> = result
                .content
                .iter()
                .map(|c| match c {
                    Content::Text { text } => text.clone(),
                    other => serde_json::to_string(other).unwrap_or_default(),
                })
                .collect();
            json!({ "output": parts.join("\n") })
        }
        Err(ToolError::Failed(text)) => json!({ "failed": text }),
        Err(other) => json!({ "error": other.to_string() }),
    }
}

/// Calls `name` among `tools` as the agent loop does; a name none of them has is answered as
/// the loop answers it (agent_loop.rs: "Tool {} not found").
async fn call_among(tools: &[Arc<dyn AgentTool>], name: &str, arguments: Value) -> Value {
    let tool = tools.iter().find(|t| t.name() == name).cloned();
    match tool {
        Some(tool) => outcome(
            tool.execute(arguments, ToolContext::new("call", name))
                .await,
        ),
        None => json!({ "failed": format!("Tool {name} not found") }),
    }
}

type Answer<'a> = Pin<Box<dyn Future<Output = Result<Option<String>, McpError>> + Send + 'a>>;

/// The scenario's scripted tokens as yoagent's `AuthorizationSource` (see
/// [`ScriptedTokens`]): `Bearer <token>` until a 401, then the next token per refusal. A
/// refusal past the last token gives up (`None`), as a source with nothing better to offer
/// does.
#[derive(Debug)]
struct ScriptedSource(ScriptedTokens);

// yoagent declares the trait with `#[async_trait]`: these are the methods it expands to.
impl AuthorizationSource for ScriptedSource {
    fn authorization<'a, 'b>(&'a self) -> Answer<'b>
    where
        'a: 'b,
        Self: 'b,
    {
        let token = self.0.token();
        Box::pin(async move { Ok(token.map(|t| format!("Bearer {t}"))) })
    }

    fn challenged<'a, 'c, 'b>(&'a self, challenge: &'c AuthChallenge) -> Answer<'b>
    where
        'a: 'b,
        'c: 'b,
        Self: 'b,
    {
        let token = (challenge.status == 401)
            .then(|| self.0.refresh())
            .flatten();
        Box::pin(async move { Ok(token.map(|t| format!("Bearer {t}"))) })
    }
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

    fn source(&self) -> Result<Rc<Source>, StepError> {
        self.source
            .borrow()
            .clone()
            .ok_or_else(|| StepError::new("a tool-layer step needs a `tool_source` step first"))
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
                // `HttpTransport::with_authorization(Arc<dyn AuthorizationSource>)`:
                // `authorization()` before each request, `challenged()` once on a 401 (a new
                // value sends the request once more).
                Capability::TokenProvider,
                // `McpToolSource::new(client)` (mcp/source.rs) over the connected client, and
                // `McpToolAdapter::with_prefix` for a tool set.
                Capability::ToolLayer,
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
                if let Some(tokens) = &http.tokens {
                    transport = transport
                        .with_authorization(Arc::new(ScriptedSource(ScriptedTokens::new(tokens))))
                        .map_err(text)?;
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
        // The source and the set's tools hold the client too.
        self.source.borrow_mut().take();
        self.set.borrow_mut().clear();
        Ok(json!(self.client.borrow_mut().take().is_some()))
    }

    async fn exited(&self) -> Result<Option<String>, StepError> {
        Ok(self.client()?.lock().await.exited())
    }

    async fn list_changed_count(&self) -> Result<u64, StepError> {
        Ok(self.client()?.lock().await.tools_list_changes())
    }

    async fn tool_layer(&self, step: ToolLayerStep) -> StepResult {
        match step {
            ToolLayerStep::Build {
                name,
                prefix,
                reports_notifications,
            } => {
                if !reports_notifications {
                    // Only a custom `McpTransport` reports no notifications
                    // (`McpClient::reports_notifications`); the stdio and HTTP ones do.
                    return Err(StepError::new(
                        "yoagent's stdio and HTTP transports report notifications; a source without them needs a custom transport",
                    ));
                }
                // `McpToolSource::new` takes the client itself; `McpToolSource::client` gives
                // it back, shared, for the steps that call the server directly.
                let shared = self
                    .client
                    .borrow_mut()
                    .take()
                    .ok_or_else(|| StepError::new("not connected"))?;
                let client = match Arc::try_unwrap(shared) {
                    Ok(client) => client.into_inner(),
                    Err(shared) => {
                        *self.client.borrow_mut() = Some(shared);
                        return Err(StepError::new("the client is in use"));
                    }
                };
                let mut source = McpToolSource::new(client);
                if let Some(prefix) = &prefix {
                    source = source.with_prefix(prefix.clone());
                }
                *self.client.borrow_mut() = Some(source.client().clone());
                *self.source.borrow_mut() = Some(Rc::new(Source {
                    source,
                    offered: RefCell::new(Vec::new()),
                    generation: std::cell::Cell::new(0),
                }));
                Ok(json!({ "source": name, "prefix": prefix }))
            }
            ToolLayerStep::Set { servers } => {
                // Each server's tools as `McpToolAdapter`s (what `Agent::with_mcp_server_*`
                // builds), a name already offered left out as the agent leaves it out.
                let client = self.client()?;
                let mut tools: Vec<Arc<dyn AgentTool>> = Vec::new();
                for server in &servers {
                    // Listed as each server is added, as `with_mcp_server_*` lists it.
                    let listed = client.lock().await.list_tools().await.map_err(text)?;
                    for tool in listed {
                        let mut adapter = McpToolAdapter::new(client.clone(), tool);
                        if let Some(prefix) = &server.prefix {
                            adapter = adapter.with_prefix(prefix.clone());
                        }
                        if tools.iter().all(|t| t.name() != adapter.name()) {
                            tools.push(Arc::new(adapter));
                        }
                    }
                }
                let names: Vec<Value> = tools.iter().map(|t| json!({ "name": t.name() })).collect();
                *self.set.borrow_mut() = tools;
                Ok(json!({ "tools": names }))
            }
            ToolLayerStep::CallSet { name, arguments } => {
                let tools = self.set.borrow().clone();
                Ok(call_among(&tools, &name, arguments).await)
            }
            ToolLayerStep::BeginRun => {
                let source = self.source()?;
                source.take().await;
                Ok(source.offered())
            }
            ToolLayerStep::NextTurn => {
                let source = self.source()?;
                if source.source.generation() != source.generation.get() {
                    source.take().await;
                }
                Ok(source.offered())
            }
            ToolLayerStep::Call { name, arguments } => {
                let source = self.source()?;
                let tools = source.offered.borrow().clone();
                Ok(call_among(&tools, &name, arguments).await)
            }
        }
    }
}
