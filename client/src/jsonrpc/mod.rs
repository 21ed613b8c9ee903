//! JSON-RPC 2.0 messages as MCP uses them: the outgoing request, notification and response,
//! the error object with its [`ErrorCode`], and [`classify`], which sorts one incoming line.

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The only JSON-RPC version MCP speaks.
pub const JSONRPC_VERSION: &str = "2.0";

/// A JSON-RPC error code, kept as the peer sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Invalid method parameters.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A request: a method call that expects a response with the same id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The id the response must carry.
    pub id: Value,
    /// The method.
    pub method: String,
    /// The parameters, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl Request {
    /// A request for `method` with `id`.
    pub fn new(id: Value, method: impl Into<String>, params: Option<Value>) -> Self {
        Request {
            jsonrpc: JSONRPC_VERSION.into(),
            id,
            method: method.into(),
            params,
        }
    }
}

/// A notification: a message without an id, never answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The method.
    pub method: String,
    /// The parameters, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

impl Notification {
    /// A notification of `method`.
    pub fn new(method: impl Into<String>, params: Option<Value>) -> Self {
        Notification {
            jsonrpc: JSONRPC_VERSION.into(),
            method: method.into(),
            params,
        }
    }
}

/// The error object of an error response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The code.
    pub code: ErrorCode,
    /// The message, as sent.
    pub message: String,
    /// Extra data, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A response: the result or the error of the request with the same id.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The id of the request answered.
    pub id: Value,
    /// The result, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

impl Response {
    /// A success response.
    pub fn ok(id: Value, result: Value) -> Self {
        Response {
            jsonrpc: JSONRPC_VERSION.into(),
            id,
            result: Some(result),
            error: None,
        }
    }

    /// An error response.
    pub fn err(id: Value, code: ErrorCode, message: impl Into<String>) -> Self {
        let error = ErrorObject {
            code,
            message: message.into(),
            data: None,
        };
        Response {
            jsonrpc: JSONRPC_VERSION.into(),
            id,
            result: None,
            error: Some(error),
        }
    }
}

/// What one incoming line is.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    /// A response to one of our requests: its result or its error.
    Response {
        /// The id it carries.
        id: Value,
        /// The result, or the error object.
        outcome: Result<Value, ErrorObject>,
    },
    /// A request from the server (`ping`, `sampling/createMessage`, …).
    Request {
        /// Its id, to answer with.
        id: Value,
        /// The method.
        method: String,
        /// The parameters, if any.
        params: Option<Value>,
    },
    /// A notification from the server.
    Notification {
        /// The method.
        method: String,
        /// The parameters, if any.
        params: Option<Value>,
    },
    /// The line is not JSON at all (a banner, a debug print).
    NotJson(String),
    /// JSON, but not a JSON-RPC 2.0 message; the reason says why.
    Invalid(String),
}

/// The members of a message that say what it is, each `Some` when present (a `null`
/// member is `Some(Value::Null)`); the others are skipped.
#[derive(Default, Deserialize)]
struct Envelope {
    #[serde(default, deserialize_with = "present")]
    jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

/// A member that is there, `null` included.
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// Sorts one line (without its newline) into a response, a server request, a notification,
/// not JSON, or invalid.
pub fn classify(line: &[u8]) -> Incoming {
    // The common case, an object without repeated members, is read straight into its
    // envelope (no map for the outer object); anything else (a repeated member, where the
    // last one counts, or not an object) goes the general way, with the same verdicts.
    if line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        if let Ok(envelope) = serde_json::from_slice::<Envelope>(line) {
            return sort(envelope);
        }
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => return Incoming::NotJson(e.to_string()),
    };
    let Value::Object(mut object) = value else {
        let what = if value.is_array() {
            "a batch (JSON array)"
        } else {
            "not a JSON object"
        };
        return Incoming::Invalid(what.into());
    };
    sort(Envelope {
        jsonrpc: object.remove("jsonrpc"),
        id: object.remove("id"),
        method: object.remove("method"),
        params: object.remove("params"),
        result: object.remove("result"),
        error: object.remove("error"),
    })
}

/// What a message is, by the members it has.
fn sort(envelope: Envelope) -> Incoming {
    let Envelope {
        jsonrpc,
        id,
        method,
        params,
        result,
        error,
    } = envelope;
    match jsonrpc {
        Some(Value::String(v)) if v == JSONRPC_VERSION => {}
        Some(other) => return Incoming::Invalid(format!("jsonrpc is {other}, not \"2.0\"")),
        None => return Incoming::Invalid("no jsonrpc member".into()),
    }
    if let Some(method) = method {
        let Value::String(method) = method else {
            return Incoming::Invalid("method is not a string".into());
        };
        return match id {
            None => Incoming::Notification { method, params },
            Some(Value::Null) => Incoming::Invalid(format!("request '{method}' with a null id")),
            Some(id) => Incoming::Request { id, method, params },
        };
    }
    let Some(id) = id else {
        return Incoming::Invalid("neither a method nor an id".into());
    };
    match (result, error) {
        (Some(_), Some(_)) => Incoming::Invalid("a response with both result and error".into()),
        (Some(result), None) => Incoming::Response {
            id,
            outcome: Ok(result),
        },
        (None, Some(error)) => match serde_json::from_value::<ErrorObject>(error) {
            Ok(error) => Incoming::Response {
                id,
                outcome: Err(error),
            },
            Err(e) => Incoming::Invalid(format!("malformed error object: {e}")),
        },
        (None, None) => Incoming::Invalid("a response with neither result nor error".into()),
    }
}

/// What a response line is read as first: its `result` skipped, not built (no tree).
#[derive(Deserialize)]
struct ResponseHead<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<IgnoredAny>,
    #[serde(default, deserialize_with = "present")]
    result: Option<IgnoredAny>,
    #[serde(default, deserialize_with = "present")]
    error: Option<IgnoredAny>,
}

/// The `result` member of a response line, read as `T` (the other members skipped).
#[derive(Deserialize)]
struct ResultOf<T> {
    result: T,
}

/// The deepest nesting `serde_json` reads (its recursion limit): a deeper line is not JSON to
/// it, and must stay so whichever way it is read.
const MAX_DEPTH: usize = 127;

/// Whether the arrays and objects of `line` nest at most [`MAX_DEPTH`] deep (strings skipped).
fn depth_within(line: &[u8]) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in line {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return false;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
}

/// The result of a response as it arrived: the line that carries it, read into the type the
/// caller wants only then (no tree built and converted), or a tree already built (a line read
/// the general way).
#[derive(Debug)]
pub(crate) enum RawResult {
    /// A line that is a valid response whose only `result` member is the result.
    Line(Vec<u8>),
    /// The result, read.
    Value(Value),
}

impl RawResult {
    /// The result as a JSON tree.
    pub(crate) fn into_value(self) -> Result<Value, serde_json::Error> {
        match self {
            RawResult::Line(line) => {
                serde_json::from_slice::<ResultOf<Value>>(&line).map(|r| r.result)
            }
            RawResult::Value(value) => Ok(value),
        }
    }

    /// The result read as `T`; the error as reading it from its tree gives.
    pub(crate) fn parse<T: DeserializeOwned>(self) -> Result<T, serde_json::Error> {
        match self {
            RawResult::Line(line) => match serde_json::from_slice::<ResultOf<T>>(&line) {
                Ok(read) => Ok(read.result),
                // The same words as the tree's: the error text does not depend on the path.
                Err(_) => serde_json::from_value(RawResult::Line(line).into_value()?),
            },
            RawResult::Value(value) => serde_json::from_value(value),
        }
    }
}

/// What [`classify_owned`] makes of a line.
#[derive(Debug)]
pub(crate) enum Sorted {
    /// A response: its id, and its result (kept as its line where it can be) or its error.
    Response {
        /// The id it carries.
        id: Value,
        /// The result, or the error object.
        outcome: Result<RawResult, ErrorObject>,
    },
    /// Anything else, as [`classify`] sorts it, with its line.
    Other {
        /// What the line is.
        incoming: Incoming,
        /// The line.
        line: Vec<u8>,
    },
}

/// [`classify`] for a line the caller owns: a response with a result keeps its line as a
/// [`RawResult`] instead of reading the result into a tree; anything else is classified as
/// `classify` does, and comes back with its line.
pub(crate) fn classify_owned(line: Vec<u8>) -> Sorted {
    if line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') && depth_within(&line) {
        if let Ok(head) = serde_json::from_slice::<ResponseHead>(&line) {
            // A repeated member fails the read above (the last one counts: the general way).
            if let (Some("2.0"), Some(id), None, Some(_), None) = (
                head.jsonrpc.as_deref(),
                head.id,
                &head.method,
                &head.result,
                &head.error,
            ) {
                return Sorted::Response {
                    id,
                    outcome: Ok(RawResult::Line(line)),
                };
            }
        }
    }
    match classify(&line) {
        Incoming::Response { id, outcome } => Sorted::Response {
            id,
            outcome: outcome.map(RawResult::Value),
        },
        incoming => Sorted::Other { incoming, line },
    }
}

/// The parameters of a request as written, borrowed: a tree, or the parts of `tools/call`'s
/// (written as `{"name": …, "arguments": …}`, the tree they would make). One type, so the
/// request path is compiled once.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Params<'a> {
    /// Any parameters, as a tree.
    Tree(&'a Value),
    /// `tools/call`'s.
    Call {
        /// The tool.
        name: &'a str,
        /// Its arguments.
        arguments: &'a Value,
    },
}

impl Serialize for Params<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Params::Tree(value) => value.serialize(serializer),
            Params::Call { name, arguments } => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("name", name)?;
                map.serialize_entry("arguments", arguments)?;
                map.end()
            }
        }
    }
}

/// A request as written: [`Request`] borrowing its parts (nothing copied to send it).
#[derive(Serialize)]
pub(crate) struct RequestRef<'a, P: ?Sized = Value> {
    pub(crate) jsonrpc: &'static str,
    pub(crate) id: &'a Value,
    pub(crate) method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) params: Option<&'a P>,
}

impl<'a, P: ?Sized> RequestRef<'a, P> {
    /// A request for `method` with `id`.
    pub(crate) fn new(id: &'a Value, method: &'a str, params: Option<&'a P>) -> Self {
        RequestRef {
            jsonrpc: JSONRPC_VERSION,
            id,
            method,
            params,
        }
    }
}

/// Whether a response id answers a request id. Numbers compare by value (`1` and `1.0`).
pub fn ids_match(sent: &Value, received: &Value) -> bool {
    match (sent, received) {
        (Value::Number(a), Value::Number(b)) => a == b || a.as_f64() == b.as_f64(),
        _ => sent == received,
    }
}

/// The client's answer to a request the server sent: `{}` to a `ping`, "method not found"
/// (-32601) to anything else — on every transport. `None` where a test breakage
/// (`NoPingAnswer`, `NoDecline`) leaves the request unanswered; `broken` tells which are on.
/// The caller logs a declined request at WARN, naming its peer.
pub(crate) fn answer_server_request(
    id: Value,
    method: &str,
    broken: impl Fn(crate::Breakage) -> bool,
) -> Option<Response> {
    if method == "ping" {
        let result = if broken(crate::Breakage::PingAnswerNotEmpty) {
            serde_json::json!({ "pong": true })
        } else {
            Value::Object(Default::default())
        };
        (!broken(crate::Breakage::NoPingAnswer)).then(|| Response::ok(id, result))
    } else {
        (!broken(crate::Breakage::NoDecline)).then(|| {
            Response::err(
                id,
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            )
        })
    }
}

#[cfg(test)]
mod tests;
