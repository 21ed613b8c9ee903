//! How the server answers a request: `reply` (JSON or SSE), and the HTTP-only steps that
//! shape the wire (`respond`, `redirect`, `open_sse`, `write`, `close_stream`,
//! `expire_session`, `refuse`, `endpoint`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{one, RpcErrorBody};

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
    /// Send the reply with this id instead of the request's (a reply for another call);
    /// stdio: `"${id}"` is the request's own id written as a string (`2` → `"2"`), and
    /// `"${id}.0"` its number written as a float (`2` → `2.0`), whatever id the client chose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    /// Write the reply line in this many separate writes, flushed about 5 ms apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_writes: Option<usize>,
    /// HTTP: the body's framing: `json` (the default, unless frames went out on this
    /// response already) or `sse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framing: Option<Framing>,
    /// HTTP: the status (200 by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// HTTP: extra response headers (a name given replaces the default, e.g. `content-type`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// HTTP: issue this `Mcp-Session-Id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// HTTP, SSE framing: the line ending of the stream's fields (`lf` by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sse_line_end: Option<LineEnd>,
    /// HTTP, SSE framing: split the message's JSON over several `data:` lines.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multiline_data: bool,
    /// HTTP: after the reply, keep the response open (no end of body) until the client goes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hold_open: bool,
}

impl Reply {
    /// Whether any HTTP-only field is given.
    pub fn has_http_fields(&self) -> bool {
        self.framing.is_some()
            || self.status.is_some()
            || !self.headers.is_empty()
            || self.session_id.is_some()
            || self.sse_line_end.is_some()
            || self.multiline_data
            || self.hold_open
    }
}

/// How an HTTP response body carries a JSON-RPC message.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Framing {
    /// `application/json`: the message is the body.
    Json,
    /// `text/event-stream`: the message is a `data:` frame.
    Sse,
}

/// The line ending of SSE fields.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum LineEnd {
    /// `\n`.
    #[default]
    Lf,
    /// `\r\n`.
    Crlf,
    /// `\r`.
    Cr,
}

impl LineEnd {
    /// The bytes.
    pub fn text(self) -> &'static str {
        match self {
            LineEnd::Lf => "\n",
            LineEnd::Crlf => "\r\n",
            LineEnd::Cr => "\r",
        }
    }
}

/// Which request an HTTP step answers: `to` names one (see `expect.name`); by default the
/// latest one taken that is still unanswered (for `disconnect`: or still streaming).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// The name of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// A raw HTTP answer.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Respond {
    /// The name of the request to answer; the latest unanswered one by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The status (200 by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Response headers (`content-type` is `text/plain; charset=utf-8` when there is a body
    /// and none is given).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The body text; `${url}` becomes the URL the request reached (scheme, host, path and
    /// query), `${path}` its path and query, and `${id}` its JSON-RPC id. Empty by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Append this many bytes of `x` to the body (a body of N bytes), streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<usize>,
    /// Issue this `Mcp-Session-Id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Send the body without a length and never end it: the stream stays open until the
    /// client goes (a body that stalls after its first bytes).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hold_open: bool,
}

/// A redirect.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Redirect {
    /// The status: 301, 302, 303, 307 (the default) or 308.
    #[serde(default = "default_redirect_status")]
    pub status: u16,
    /// The `Location`; `${primary}`, `${second}` and `${plain}` become those origins
    /// (`http://127.0.0.1:PORT`, `http://localhost:PORT2`, …), e.g. `${second}/mcp` or `/mcp2`;
    /// `${second_port}` the second listener's port (`http://127.0.0.1:${second_port}/mcp`:
    /// another origin by its port only).
    pub location: String,
    /// How many requests to redirect: the one taken by the `expect`, then the next
    /// `repeat - 1` whatever they are (1 by default; 11 for a loop past a 10-hop limit).
    #[serde(default = "one")]
    pub repeat: usize,
    /// The name of the request to answer; the latest unanswered one by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

fn default_redirect_status() -> u16 {
    307
}

/// The SSE response headers, sent ahead of any frame.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OpenSse {
    /// The name of the request to answer; the latest unanswered one by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The status (200 by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Extra response headers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Issue this `Mcp-Session-Id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The line ending of the stream's fields (`lf` by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sse_line_end: Option<LineEnd>,
}

/// Raw bytes on the open streamed response.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Write {
    /// The text, written as given (`"data: not json\n\n"`), but `${id}` becomes the JSON-RPC
    /// id of the latest request (the one being answered, whatever id the client chose).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Then this many bytes of `x`, without a newline (an endless line), streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<usize>,
}

/// The end of a streamed response.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CloseStream {
    /// Cut the connection instead of ending the body cleanly.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abort: bool,
}

/// Waiting for the client to close a streamed response it holds open.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AwaitClose {
    /// The name of the request whose stream; by default, over legacy-sse the `endpoint`
    /// stream, otherwise the latest streamed response still open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The bound: a stream still open after it is a mismatch.
    pub within_ms: u64,
}

/// A session to expire.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExpireSession {
    /// The session id; the latest issued by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// A time during which the primary origin refuses connections.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Refuse {
    /// How long, in milliseconds.
    pub ms: u64,
}

/// The legacy `endpoint` event.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    /// The POST endpoint the event names, as sent (`/messages?session_id=1`, or
    /// `${second}/messages` for another origin).
    #[serde(default = "default_endpoint_path")]
    pub path: String,
}

fn default_endpoint_path() -> String {
    "/messages".into()
}
