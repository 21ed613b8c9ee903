//! The script format: what a scripted server does, step by step.
//!
//! One owner for the format: these serde types (with `deny_unknown_fields`) are the
//! definition, the JSON schema is generated from them, and a scenario's `[server]` table
//! deserializes straight into [`Script`].
//!
//! Over HTTP (`transport = "http"`, `"https"` or `"legacy-sse"`) the same steps drive a
//! listener: an `expect` takes the next HTTP request, `notify`/`request` become SSE frames on
//! the open response, `reply` ends it, and HTTP-only steps (`respond`, `redirect`, `hang`,
//! `open_sse`, `write`, `close_stream`, `expire_session`, `endpoint`, `disconnect`) shape
//! the wire; see the `http` module.
//!
//! ```toml
//! transport = "stdio"
//! steps = [
//!   { banner = { lines = ["starting my-server v1.0"] } },
//!   { handshake = {} },
//!   { expect = { method = "tools/call" } },
//!   { notify = { method = "notifications/progress", params = { progressToken = 1, progress = 0.5 } } },
//!   { reply = { result = { content = [{ type = "text", text = "done" }] } } },
//! ]
//! ```

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod answers;
mod auth;
mod messages;
mod misbehaviours;

pub use answers::*;
pub use auth::*;
pub use messages::*;
pub use misbehaviours::*;

/// A scripted server: the transport it speaks, the tools it offers and its ordered steps.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The transport the server speaks.
    #[serde(default)]
    pub transport: Transport,
    /// The tools the server offers: the default reply to `tools/list` lists them, in this order.
    #[serde(default = "default_tools")]
    pub tools: Vec<ToolDef>,
    /// What the server does, in order. Every step must be reached: a server that ends with
    /// steps unused fails the scenario with what was expected and what was received. After
    /// the last step the server waits for stdin to close (messages received then are logged,
    /// not matched) and exits 0.
    pub steps: Vec<Step>,
    /// Steps played instead of `steps` on a later launch of the same scenario (the second
    /// launch plays `relaunch[0]`, the third `relaunch[1]`, …; past the end, the last entry).
    /// The launch count is kept in the scenario's temp folder.
    #[serde(default)]
    pub relaunch: Vec<Vec<Step>>,
    /// Messages outside the rule under test, by method: a request or notification
    /// with one of these methods that arrives where a step expects something else is
    /// answered with a default (`server/discover` as method-not-found, empty lists, `{}`)
    /// and recorded as incidental, instead of failing the script — a real client may list
    /// tools before calling one, probe `server/discover`, ping, set a log level or cancel a
    /// call it abandoned; `GET` stands
    /// for the stream a Streamable HTTP client may open with a GET (answered 405). The
    /// scenario runner leaves out every method a scenario's expectations name, so a rule
    /// about a message is never passed by this policy.
    #[serde(default = "default_incidental")]
    pub incidental: Vec<String>,
    /// Settings of the HTTP transports (`http`, `https`, `legacy-sse`).
    #[serde(default, skip_serializing_if = "HttpSettings::is_default")]
    pub http: HttpSettings,
    /// HTTP: the authorization side (an OAuth 2.1 resource server and its authorization
    /// server); none by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthSettings>,
}

impl Script {
    /// The steps of each launch, the first launch's first.
    pub fn launch_steps(&self) -> impl Iterator<Item = &Vec<Step>> {
        std::iter::once(&self.steps).chain(&self.relaunch)
    }
}

/// In an `incidental` list: the HTTP GET a Streamable HTTP client may send to open a stream
/// for server messages, answered 405 (this server offers none) where the script waits for
/// something else.
pub const LISTEN_STREAM: &str = "GET";

/// The default incidental-traffic policy.
pub fn default_incidental() -> Vec<String> {
    [
        "tools/list",
        "server/discover",
        "ping",
        "logging/setLevel",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
        "notifications/cancelled",
        LISTEN_STREAM,
    ]
    .map(String::from)
    .to_vec()
}

/// Settings of the HTTP transports: `[server.http]` in a scenario.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HttpSettings {
    /// The path (and query) of the endpoint the mock's URL names: `/mcp` by default, `/sse`
    /// for `legacy-sse`. A key-like path (`/sk-live-4f9a8b7c/mcp?key=…`) serves redaction tests;
    /// the mock answers any path the script lets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl HttpSettings {
    /// Whether nothing is set (so the table is left out when serialized).
    pub fn is_default(&self) -> bool {
        self == &Self::default()
    }
}

fn default_tools() -> Vec<ToolDef> {
    vec![ToolDef {
        name: "echo".into(),
        description: Some("Echoes its arguments back as text".into()),
        input_schema: serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        annotations: None,
        output_schema: None,
    }]
}

/// The transport a scripted server speaks.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// Newline-delimited JSON-RPC on stdin/stdout of a child process.
    #[default]
    Stdio,
    /// Streamable HTTP on a loopback listener (`http://127.0.0.1:PORT/mcp`), with a second
    /// origin (`http://localhost:PORT2`) for cross-origin redirects.
    Http,
    /// As `http`, over TLS with a certificate generated at start for `127.0.0.1` and
    /// `localhost`; a third, plain-HTTP listener serves https-to-http redirects.
    Https,
    /// The legacy HTTP+SSE transport (2024-11-05): a GET opens an SSE stream that names the
    /// POST endpoint in an `endpoint` event; POSTs get 202 and the answers go on the stream.
    LegacySse,
}

impl Transport {
    /// Whether the transport is one of the HTTP ones (`http`, `https`, `legacy-sse`).
    pub fn is_http(self) -> bool {
        !matches!(self, Transport::Stdio)
    }
}

/// A tool as the server lists it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolDef {
    /// The tool's name.
    pub name: String,
    /// The tool's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments (`inputSchema` on the wire).
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    /// Its annotations as listed (`{ readOnlyHint = true }`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// The JSON Schema of its structured result (`outputSchema` on the wire), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

/// One step of a script. Each is a table with one key naming the step.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Shorthand for: expect `initialize`, reply with the default result, expect
    /// `notifications/initialized`.
    Handshake(Handshake),
    /// 2026-07-28: expect `server/discover` and answer it with the supported versions, the
    /// capabilities and `serverInfo` (a stateless server's first exchange). A script without
    /// this step answers `server/discover` as an older server does: -32601, as incidental
    /// traffic.
    Discover(Discover),
    /// Read the next message the client sends and check it matches. A mismatch ends the
    /// script with what was expected and what was received (exit code 3); stdin closing
    /// first ends it as unfinished (exit code 4).
    Expect(Expect),
    /// Answer a request received by an `expect` step (the latest one unless `to` names one).
    Reply(Reply),
    /// Send a notification.
    Notify(Notify),
    /// Send a request to the client (a `ping`, `sampling/createMessage`, `roots/list`, …).
    /// Its answer is read by a later `expect = { response_to = ... }` step.
    Request(ServerRequest),
    /// Write lines that are not JSON-RPC on stdout (a banner, a debug print).
    Banner(Banner),
    /// Write one line of the given length on stdout (JSON or not).
    LongLine(LongLine),
    /// Write text on stderr.
    Stderr(StderrText),
    /// Write a large amount on stderr, invalid UTF-8 included.
    StderrFlood(StderrFlood),
    /// Do nothing for a while, or forever (until killed) when `ms` is absent.
    Stall(Stall),
    /// Write `stderr` (and a newline), then exit with `code`.
    Crash(Crash),
    /// Exit with `code` (0 unless given).
    Exit(Exit),
    /// From now on, keep running when stdin closes (a server that ignores its closed input):
    /// stdin closing at an `expect` or at the script's end makes the server sleep until
    /// killed instead of exiting.
    IgnoreStdinClose(Empty),
    /// Wait until stdin closes, then go on with the next step.
    AwaitStdinClose(Empty),
    /// Start a descendant process that sleeps until killed (reported in the process facts).
    /// It is in the server's process group and holds none of the client's pipes.
    SpawnChild(SpawnChild),
    /// Act as a launcher: start a background copy of this server that plays the remaining
    /// steps on the same stdin/stdout/stderr (same launch, same process group), then exit at
    /// once with code 0.
    Background(Empty),
    /// Leave the process group it was started in and lead one of its own (`setpgid(0, 0)`),
    /// as a server started without a group of its own may do: its pid then names a group,
    /// which holds what it starts later (`spawn_child`, `background`). A server started in a
    /// group of its own leads it already (nothing changes).
    NewProcessGroup(Empty),
    /// Close stdout while the process lives on: the client sees end of output, later writes to
    /// stdout go nowhere, and the script goes on (at its end, waiting for stdin to close as
    /// usual; add `stall = {}` to live on past that).
    CloseStdout(Empty),
    /// Close stderr while the process lives on (and stdout stays open): the client sees the
    /// end of stderr; later writes to it go nowhere.
    CloseStderr(Empty),
    /// Stop reading stdin and close it, so the client's next write fails (EPIPE); then live
    /// on: later steps play, an `expect` sees stdin closed, and at the script's end the
    /// server sleeps until killed.
    StopReading(Empty),
    /// HTTP: answer a request taken by an `expect` with a raw status, headers and body (no
    /// JSON-RPC): a 202, an empty 200, a 401 with `WWW-Authenticate`, a 404, a 500 quoting the
    /// URL, a non-JSON body, a body of N bytes.
    Respond(Respond),
    /// HTTP: answer a request with a redirect (`Location` from the script), and the next
    /// `repeat - 1` requests too, whatever they are (a redirect loop).
    Redirect(Redirect),
    /// HTTP: leave a request without an answer: no status line, no headers, until the client
    /// goes away. The script goes on.
    Hang(Target),
    /// HTTP: close a request's connection without an answer (or cut its streamed response
    /// short): the client sees the connection reset.
    Disconnect(Target),
    /// HTTP: send the SSE response headers for a request now (status 200,
    /// `text/event-stream`); frames follow with `notify`, `request`, `write`, `reply`.
    OpenSse(OpenSse),
    /// HTTP: write raw bytes on the open streamed response (opening an SSE response first if
    /// needed; legacy-sse: on the endpoint stream): malformed SSE, a truncated frame, an
    /// endless line.
    Write(Write),
    /// HTTP: end the open streamed response (legacy-sse: the endpoint stream): cleanly (a
    /// frame without its blank line stays unterminated), or cut with `abort = true`.
    CloseStream(CloseStream),
    /// HTTP: wait, bounded, until the client closes a streamed response the server holds
    /// open (legacy-sse: the `endpoint` stream; else the latest open one, or the request
    /// `to` names), as a client does when it lets go of the connection (`close()`, a drop);
    /// logged as `client_closed`. Still open at the bound: a mismatch.
    AwaitClose(AwaitClose),
    /// HTTP: expire a session issued earlier (the latest by default): from now on every
    /// request carrying it gets 404, without taking a step.
    ExpireSession(ExpireSession),
    /// legacy-sse: answer the GET taken by an `expect` with an SSE stream carrying an
    /// `endpoint` event that names the POST path; answers and notifications then go on it.
    Endpoint(Endpoint),
    /// HTTP: stop listening on the primary origin for `ms`, the port kept, so a new
    /// connection is refused (connections already open live on); then listen again. The
    /// script goes on at once. As the first step, the port refuses from the start.
    Refuse(Refuse),
}

/// An empty step body: `{}`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// A descendant to start: `spawn_child = {}`, or one that ignores SIGTERM.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SpawnChild {
    /// Ignore SIGTERM (as a child busy shutting down, or a shell's background job, may): only
    /// SIGKILL ends it, so a client that ends the group with SIGTERM leaves it running.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_sigterm: bool,
}

/// The handshake shorthand.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Handshake {
    /// The protocolVersion to answer; by default the one the client offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The protocolVersion to answer to each offered one (`{ "2025-11-25" = "2024-11-05" }`);
    /// an offer not listed gets `version`, else itself.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub answers: std::collections::BTreeMap<String, String>,
    /// The capabilities to declare; by default `{ tools = { listChanged = true } }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
    /// HTTP: issue this `Mcp-Session-Id` with the `initialize` answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// The `server/discover` shorthand.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Discover {
    /// The `supportedVersions` to answer; `["2026-07-28"]` by default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<String>,
    /// The capabilities to declare; by default `{ tools = {} }` (no list changes, so a
    /// client opens no `subscriptions/listen` stream unless the script says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
    /// The `_meta` protocol version the probe must carry (see `expect.meta`); unchecked when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<String>,
}

/// A matcher for the next message the client sends. At most one of `method` and
/// `response_to` is given; with neither, any message satisfying the other fields matches.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The method of a request or notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The id of a request this server sent: the message must be the client's response to it
    /// (no `method`, a `result` or an `error`, this `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_to: Option<Value>,
    /// Whether the message must carry an id (`true`: a request; `false`: a notification).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_id: Option<bool>,
    /// A subset the message's `params` must contain (objects compared key by key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Keys the message's `params` must not carry (`requestState` after a round whose result
    /// gave none): a client that keeps a value from an earlier message fails here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent_params: Vec<String>,
    /// A subset the response's `result` must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error code the response must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i64>,
    /// A name for the request, so a later `reply = { to = ... }` can answer it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// 2026-07-28: the request's `params._meta` must carry this
    /// `io.modelcontextprotocol/protocolVersion`, a `io.modelcontextprotocol/clientCapabilities`
    /// object and a `io.modelcontextprotocol/clientInfo` with a string name and version;
    /// over HTTP the request's `MCP-Protocol-Version` must be that version and its
    /// `Mcp-Method` the body's method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<String>,
    /// HTTP: what the request itself must be (method, path, headers, origin). A request
    /// without a JSON-RPC body (a `GET`, a `DELETE`) is matched by this alone: the JSON-RPC
    /// fields above are then left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpMatch>,
}

impl Expect {
    /// Whether any JSON-RPC field is given (so the request's body must be a matching message).
    pub fn has_rpc_fields(&self) -> bool {
        self.method.is_some()
            || self.response_to.is_some()
            || self.has_id.is_some()
            || self.params.is_some()
            || !self.absent_params.is_empty()
            || self.result.is_some()
            || self.error_code.is_some()
            || self.meta.is_some()
    }
}

/// A matcher for an HTTP request, beside its JSON-RPC body.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HttpMatch {
    /// The method (`POST`, `GET`, `DELETE`), compared without regard to case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The path; with a `?`, the path and query, else the path alone (query ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The listener the request reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// Headers the request must carry with exactly these values (names without regard to case).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Headers the request must not carry (names without regard to case).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent_headers: Vec<String>,
}

/// One of the HTTP mock's listeners.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// The URL the client is given: `http(s)://127.0.0.1:PORT`.
    Primary,
    /// The second origin: `http(s)://localhost:PORT2`, another host name and port.
    Second,
    /// https only: a plain-HTTP listener, `http://127.0.0.1:PORT3`, for https-to-http redirects.
    Plain,
}

impl Origin {
    /// Its name in the wire log and in `${…}` placeholders.
    pub fn name(self) -> &'static str {
        match self {
            Origin::Primary => "primary",
            Origin::Second => "second",
            Origin::Plain => "plain",
        }
    }
}

fn one() -> usize {
    1
}
