//! MCP answers for [`wiremock`] users (feature `wiremock`).
//!
//! If your client's tests already start a `wiremock::MockServer`, mount an [`McpResponder`]
//! on it and the server speaks Streamable HTTP MCP: it answers `initialize` (the revision
//! asked for when it knows it), acknowledges notifications with an empty 202, lists the tools
//! you gave it, answers `tools/call` with their canned results, `ping` with `{}`, and any other
//! method with -32601, and ends a session on `DELETE`. Canned faults are builder calls: SSE framing, a session id that must
//! come back (400 without it, 404 for another one or once it expired), a delay. For a single
//! canned answer, compose wiremock mocks with the [`mcp_method`] and [`mcp_tool`] matchers and
//! an [`McpReply`] (a result or a JSON-RPC error carrying the request's own id) or any
//! `ResponseTemplate` (a status).
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use mcp_mock_servers::wiremock::{mcp_tool, McpReply, McpResponder};
//! use serde_json::json;
//! use wiremock::{matchers::path, Mock, MockServer};
//!
//! let server = MockServer::start().await;
//! // `fail` answers with a JSON-RPC error; mounted first, so it wins over the general answer.
//! Mock::given(path("/mcp")).and(mcp_tool("fail")).respond_with(McpReply::error(-32000, "boom")).mount(&server).await;
//! Mock::given(path("/mcp"))
//!     .respond_with(McpResponder::new().tool("echo", json!({ "content": [{ "type": "text", "text": "hi" }] })).sse())
//!     .mount(&server)
//!     .await;
//! // point the client under test at format!("{}/mcp", server.uri())
//! # });
//! ```
//!
//! Streaming faults (frames then a stall, a stream held open, a reset mid-body) cannot be
//! said with a canned response: use the scripted [`crate::HttpMock`] for those.

use ::wiremock::{Match, Request, Respond, ResponseTemplate};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

/// The revisions the responder answers with when a client asks for them.
const KNOWN_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// What it answers when asked for a revision it does not know.
const LATEST_REVISION: &str = "2025-11-25";
const SESSION_HEADER: &str = "mcp-session-id";

/// A whole MCP server as one wiremock responder: handshake, tools, ping and defaults.
#[derive(Debug, Default)]
pub struct McpResponder {
    tools: Vec<Value>,
    results: BTreeMap<String, Value>,
    sse: bool,
    session: Option<String>,
    expire_after: Option<usize>,
    delay: Option<Duration>,
    /// The current session: how many were issued, and requests that carried the current one.
    state: Mutex<SessionState>,
}

#[derive(Debug, Default)]
struct SessionState {
    issued: usize,
    carried: usize,
    /// Ended by a `DELETE`.
    ended: bool,
}

impl McpResponder {
    /// A server with no tools that answers in plain JSON without sessions.
    pub fn new() -> Self {
        McpResponder::default()
    }

    /// Offers a tool named `name` (an empty object schema) whose every call answers `result`.
    pub fn tool(mut self, name: &str, result: Value) -> Self {
        self.tools
            .push(json!({ "name": name, "inputSchema": { "type": "object" } }));
        self.results.insert(name.to_string(), result);
        self
    }

    /// Frames every answer as one SSE `message` event instead of a JSON body.
    pub fn sse(mut self) -> Self {
        self.sse = true;
        self
    }

    /// Issues `id` as `Mcp-Session-Id` on `initialize` (`id-2`, `id-3`, … on later ones) and
    /// requires the current one on every later request: 400 without it, 404 with another.
    pub fn session_id(mut self, id: &str) -> Self {
        self.session = Some(id.to_string());
        self
    }

    /// Once `n` requests have carried the first session, it has expired: 404 until a new
    /// `initialize`, whose session lives on.
    pub fn expire_session_after(mut self, n: usize) -> Self {
        self.expire_after = Some(n);
        self
    }

    /// Holds every answer back for `delay` (wiremock's own delay: the head is late too).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    fn answer(&self, message: &Value) -> Option<Value> {
        let id = message.get("id")?.clone();
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let outcome = match method {
            "initialize" => {
                let asked = params
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let version = if KNOWN_REVISIONS.contains(&asked) {
                    asked
                } else {
                    LATEST_REVISION
                };
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": { "tools": {} },
                    "serverInfo": { "name": "mcp-mock-wiremock", "version": env!("CARGO_PKG_VERSION") },
                }))
            }
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({ "tools": self.tools })),
            "tools/call" => {
                let name = params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                match self.results.get(name) {
                    Some(result) => Ok(result.clone()),
                    None => Err((-32602, format!("unknown tool: {name}"))),
                }
            }
            _ => Err((-32601, format!("method not found: {method}"))),
        };
        Some(response(id, outcome))
    }

    /// The session check: `None` when the request may go on, or the status to refuse it with.
    fn session_refusal(&self, request: &Request) -> Option<u16> {
        self.session.as_ref()?;
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let current = self.session_name(state.issued)?;
        match request
            .headers
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            None => Some(400),
            Some(sent) if sent != current || state.ended => Some(404),
            Some(_) => {
                state.carried += 1;
                match self.expire_after {
                    Some(limit) if state.issued == 1 && state.carried > limit => Some(404),
                    _ => None,
                }
            }
        }
    }

    /// The id of the `n`-th session issued (1-based); `None` before the first.
    fn session_name(&self, n: usize) -> Option<String> {
        let base = self.session.as_deref()?;
        match n {
            0 => None,
            1 => Some(base.to_string()),
            n => Some(format!("{base}-{n}")),
        }
    }

    /// A new session for an `initialize`: its id, counted from zero requests.
    fn issue_session(&self) -> Option<String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let name = self.session_name(state.issued + 1)?;
        state.issued += 1;
        state.carried = 0;
        state.ended = false;
        Some(name)
    }
}

impl Respond for McpResponder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let template = match request.method.as_str() {
            // No GET stream and sessions end at once: what most stateless servers answer.
            "GET" => ResponseTemplate::new(405),
            "DELETE" => match self.session_refusal(request) {
                Some(status) => ResponseTemplate::new(status),
                None => {
                    self.state.lock().unwrap_or_else(|e| e.into_inner()).ended = true;
                    ResponseTemplate::new(200)
                }
            },
            _ => match serde_json::from_slice::<Value>(&request.body) {
                Err(_) => ResponseTemplate::new(400).set_body_json(json!({
                    "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": "parse error" }
                })),
                Ok(message) => {
                    let initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
                    let refusal = if initialize { None } else { self.session_refusal(request) };
                    match refusal {
                        Some(status) => ResponseTemplate::new(status),
                        None => match self.answer(&message) {
                            // A notification or a response from the client: acknowledged.
                            None => ResponseTemplate::new(202),
                            Some(answer) => {
                                let framed = frame(answer, self.sse);
                                match initialize.then(|| self.issue_session()).flatten() {
                                    Some(id) => framed.insert_header("Mcp-Session-Id", id.as_str()),
                                    None => framed,
                                }
                            }
                        },
                    }
                }
            },
        };
        match self.delay {
            Some(delay) => template.set_delay(delay),
            None => template,
        }
    }
}

/// One canned answer to whatever request it is mounted for, carrying that request's id.
#[derive(Clone, Debug)]
pub struct McpReply {
    outcome: Result<Value, (i64, String)>,
    sse: bool,
    before: Vec<Value>,
}

impl McpReply {
    /// Answers with `result`.
    pub fn result(result: Value) -> Self {
        McpReply {
            outcome: Ok(result),
            sse: false,
            before: Vec::new(),
        }
    }

    /// Answers with a JSON-RPC error.
    pub fn error(code: i64, message: &str) -> Self {
        McpReply {
            outcome: Err((code, message.to_string())),
            sse: false,
            before: Vec::new(),
        }
    }

    /// Frames the answer as SSE.
    pub fn sse(mut self) -> Self {
        self.sse = true;
        self
    }

    /// Sends this notification (`{ "method": …, "params": … }`) as an SSE frame ahead of the
    /// answer (implies SSE framing), like a server reporting progress.
    pub fn notify_first(mut self, notification: Value) -> Self {
        let mut message = json!({ "jsonrpc": "2.0" });
        if let (Some(target), Some(fields)) = (message.as_object_mut(), notification.as_object()) {
            target.extend(fields.clone());
        }
        self.before.push(message);
        self.sse = true;
        self
    }
}

impl Respond for McpReply {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let id = serde_json::from_slice::<Value>(&request.body)
            .ok()
            .and_then(|m| m.get("id").cloned())
            .unwrap_or(Value::Null);
        let answer = response(id, self.outcome.clone());
        if self.before.is_empty() {
            return frame(answer, self.sse);
        }
        let mut body = String::new();
        for message in self.before.iter().chain(std::iter::once(&answer)) {
            body.push_str(&sse_event(message));
        }
        ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
    }
}

/// The JSON-RPC response carrying `id`: a result, or an error with its code and message.
fn response(id: Value, outcome: Result<Value, (i64, String)>) -> Value {
    match outcome {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err((code, text)) => {
            json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": text } })
        }
    }
}

fn frame(message: Value, sse: bool) -> ResponseTemplate {
    if sse {
        ResponseTemplate::new(200).set_body_raw(sse_event(&message), "text/event-stream")
    } else {
        ResponseTemplate::new(200).set_body_json(message)
    }
}

fn sse_event(message: &Value) -> String {
    format!("event: message\ndata: {message}\n\n")
}

/// Matches a POST whose JSON-RPC body has this `method`.
pub fn mcp_method(method: &str) -> McpMethod {
    McpMethod {
        method: method.to_string(),
        tool: None,
    }
}

/// Matches a `tools/call` of the tool named `name`.
pub fn mcp_tool(name: &str) -> McpMethod {
    McpMethod {
        method: "tools/call".into(),
        tool: Some(name.to_string()),
    }
}

/// The matcher behind [`mcp_method`] and [`mcp_tool`].
#[derive(Clone, Debug)]
pub struct McpMethod {
    method: String,
    tool: Option<String>,
}

impl Match for McpMethod {
    fn matches(&self, request: &Request) -> bool {
        let Ok(message) = serde_json::from_slice::<Value>(&request.body) else {
            return false;
        };
        if message.get("method").and_then(Value::as_str) != Some(self.method.as_str()) {
            return false;
        }
        match &self.tool {
            None => true,
            Some(tool) => {
                message.pointer("/params/name").and_then(Value::as_str) == Some(tool.as_str())
            }
        }
    }
}
