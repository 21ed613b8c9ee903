//! The script format: what a scripted server does, step by step.
//!
//! One owner for the format: these serde types (with `deny_unknown_fields`) are the
//! definition, the JSON schema is generated from them, and a scenario's `[server]` table
//! deserializes straight into [`Script`].
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

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
}

fn default_tools() -> Vec<ToolDef> {
    vec![ToolDef {
        name: "echo".into(),
        description: Some("Echoes its arguments back as text".into()),
        input_schema: serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    }]
}

/// The transport a scripted server speaks.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// Newline-delimited JSON-RPC on stdin/stdout of a child process.
    #[default]
    Stdio,
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
    SpawnChild(Empty),
    /// Act as a launcher: start a background copy of this server that plays the remaining
    /// steps on the same stdin/stdout/stderr (same launch, same process group), then exit at
    /// once with code 0.
    Background(Empty),
    /// Close stdout while the process lives on: the client sees end of output, later writes to
    /// stdout go nowhere, and the script goes on (at its end, waiting for stdin to close as
    /// usual; add `stall = {}` to live on past that).
    CloseStdout(Empty),
    /// Stop reading stdin and close it, so the client's next write fails (EPIPE); then live
    /// on: later steps play, an `expect` sees stdin closed, and at the script's end the
    /// server sleeps until killed.
    StopReading(Empty),
}

/// An empty step body: `{}`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// The handshake shorthand.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Handshake {
    /// The protocolVersion to answer; by default the one the client offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The capabilities to declare; by default `{ tools = { listChanged = true } }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
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
    /// A subset the response's `result` must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error code the response must carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i64>,
    /// A name for the request, so a later `reply = { to = ... }` can answer it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A reply to a request. Without `result` and `error`, the default result for the method:
/// `initialize` the offered version with default capabilities, `tools/list` the script's
/// tools, `tools/call` a text content naming the tool, `ping` `{}`, any other method a
/// -32601 error. With `id` and no request received, the default result is `{}`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// The name of the request to answer (see `expect.name`); the latest by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The result to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error to send instead of a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RpcErrorBody>,
    /// Send the reply with this id instead of the request's (a reply for another call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    /// Write the reply line in this many separate writes, flushed about 5 ms apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_writes: Option<usize>,
}

/// A JSON-RPC error object.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RpcErrorBody {
    /// The error code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// Optional data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A notification to send.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Notify {
    /// The method, e.g. `notifications/message`.
    pub method: String,
    /// The params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// A request the server sends to the client.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerRequest {
    /// The id to send it with.
    pub id: Value,
    /// The method, e.g. `ping` or `sampling/createMessage`.
    pub method: String,
    /// The params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// Non-JSON lines on stdout.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Banner {
    /// The lines, written each with a trailing newline.
    pub lines: Vec<String>,
}

/// One very long line on stdout.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LongLine {
    /// Its length in bytes, newline excluded (the line is `x` repeated, not JSON).
    pub bytes: usize,
}

/// Text on stderr.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StderrText {
    /// The text, written as given (add `\n` for a line).
    pub text: String,
}

/// A stderr flood.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StderrFlood {
    /// How many bytes to write, in lines of 100 bytes (the last one shorter), besides
    /// `first_line` and `last_line`.
    pub bytes: usize,
    /// Mix invalid UTF-8 bytes into the lines.
    #[serde(default)]
    pub invalid_utf8: bool,
    /// A line written first, before the flood.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_line: Option<String>,
    /// A line written last, after the flood.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_line: Option<String>,
}

/// A pause.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Stall {
    /// How long, in milliseconds; forever (until killed) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
}

/// A crash.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Crash {
    /// The exit code.
    pub code: i32,
    /// Written on stderr (with a trailing newline) before exiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
}

/// A clean exit.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Exit {
    /// The exit code.
    #[serde(default)]
    pub code: i32,
}
