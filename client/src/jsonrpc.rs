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
mod tests {

    #[test]
    fn a_server_ping_gets_an_empty_result_and_other_requests_method_not_found() {
        let none = |_| false;
        let pong = answer_server_request(Value::from(7), "ping", none).unwrap();
        assert_eq!(
            serde_json::to_value(pong).unwrap(),
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": {}})
        );
        let declined = serde_json::to_value(
            answer_server_request(Value::from("s"), "roots/list", none).unwrap(),
        )
        .unwrap();
        assert_eq!(declined["error"]["code"], -32601);
        assert_eq!(declined["error"]["message"], "Method not found: roots/list");
        assert!(answer_server_request(Value::from(1), "ping", |b| b
            == crate::Breakage::NoPingAnswer)
        .is_none());
        assert!(
            answer_server_request(Value::from(1), "x", |b| b == crate::Breakage::NoDecline)
                .is_none()
        );
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn error_codes_are_the_spec_values() {
        assert_eq!(ErrorCode::PARSE_ERROR.0, -32700);
        assert_eq!(ErrorCode::INVALID_REQUEST.0, -32600);
        assert_eq!(ErrorCode::METHOD_NOT_FOUND.0, -32601);
        assert_eq!(ErrorCode::INVALID_PARAMS.0, -32602);
        assert_eq!(ErrorCode::INTERNAL_ERROR.0, -32603);
        assert_eq!(ErrorCode::METHOD_NOT_FOUND.to_string(), "-32601");
    }

    #[test]
    fn a_result_is_a_response() {
        let got = classify(br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#);
        assert_eq!(
            got,
            Incoming::Response {
                id: json!(3),
                outcome: Ok(json!({"tools": []}))
            }
        );
    }

    #[test]
    fn an_error_is_a_response_keeping_code_and_message() {
        let got =
            classify(br#"{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad"}}"#);
        let error = ErrorObject {
            code: ErrorCode::INVALID_PARAMS,
            message: "bad".into(),
            data: None,
        };
        assert_eq!(
            got,
            Incoming::Response {
                id: json!("a"),
                outcome: Err(error)
            }
        );
    }

    #[test]
    fn a_method_with_an_id_is_a_server_request() {
        let got = classify(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
        assert_eq!(
            got,
            Incoming::Request {
                id: json!(7),
                method: "ping".into(),
                params: None
            }
        );
    }

    #[test]
    fn a_method_without_an_id_is_a_notification() {
        let got = classify(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
        let want = Incoming::Notification {
            method: "notifications/tools/list_changed".into(),
            params: None,
        };
        assert_eq!(got, want);
    }

    #[test]
    fn a_banner_is_not_json() {
        assert!(matches!(
            classify(b"Server listening on stdio"),
            Incoming::NotJson(_)
        ));
        assert!(matches!(classify(b"\xff\xfe"), Incoming::NotJson(_)));
    }

    #[test]
    fn json_that_is_not_json_rpc_is_invalid() {
        for line in [
            &br#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#[..],
            br#"42"#,
            br#"{"id":1,"result":{}}"#,
            br#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}"#,
            br#"{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}"#,
            br#"{"jsonrpc":"2.0","method":5}"#,
            br#"{"jsonrpc":"2.0"}"#,
        ] {
            assert!(
                matches!(classify(line), Incoming::Invalid(_)),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn outgoing_messages_are_one_line_without_absent_members() {
        let request = Request::new(json!(1), "tools/list", None);
        assert_eq!(
            serde_json::to_string(&request).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
        );
        let note = Notification::new("notifications/initialized", None);
        assert_eq!(
            serde_json::to_string(&note).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        let answer = Response::ok(json!(9), json!({}));
        assert_eq!(
            serde_json::to_string(&answer).unwrap(),
            r#"{"jsonrpc":"2.0","id":9,"result":{}}"#
        );
        let decline = Response::err(json!(4), ErrorCode::METHOD_NOT_FOUND, "Method not found");
        let text = serde_json::to_string(&decline).unwrap();
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}"#
        );
        let multi = Request::new(json!(2), "tools/call", Some(json!({"text": "a\nb"})));
        assert!(!serde_json::to_string(&multi).unwrap().contains('\n'));
    }

    #[test]
    fn a_repeated_member_counts_last_as_in_a_map() {
        let got = classify(br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#);
        assert_eq!(
            got,
            Incoming::Response {
                id: json!(2),
                outcome: Ok(json!({}))
            }
        );
        let got = classify(br#" {"jsonrpc":"1.0","jsonrpc":"2.0","method":"m","params":null}"#);
        assert_eq!(
            got,
            Incoming::Notification {
                method: "m".into(),
                params: Some(Value::Null)
            }
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#),
            Incoming::Invalid("request 'm' with a null id".into())
        );
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"result":{}} x"#),
            Incoming::NotJson(_)
        ));
    }

    #[test]
    fn a_borrowed_request_is_written_as_the_owned_one() {
        let params = json!({"name": "echo", "arguments": {}});
        let owned = Request::new(json!(5), "tools/call", Some(params.clone()));
        let borrowed = RequestRef::new(&owned.id, "tools/call", Some(&params));
        assert_eq!(
            serde_json::to_string(&borrowed).unwrap(),
            serde_json::to_string(&owned).unwrap()
        );
        let bare = RequestRef::<Value>::new(&owned.id, "tools/list", None);
        assert_eq!(
            serde_json::to_string(&bare).unwrap(),
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#
        );
    }

    /// What `classify_owned` says of a line, as `classify` would say it (a kept line read).
    fn owned_verdict(line: &[u8]) -> Incoming {
        match classify_owned(line.to_vec()) {
            Sorted::Response { id, outcome } => Incoming::Response {
                id,
                outcome: outcome.map(|r| r.into_value().unwrap()),
            },
            Sorted::Other {
                incoming,
                line: kept,
            } => {
                assert_eq!(kept, line, "the line comes back whole");
                incoming
            }
        }
    }

    #[test]
    fn a_kept_response_line_reads_as_the_general_way_does() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#,
            "[".repeat(130),
            "]".repeat(130)
        );
        let lines: Vec<&[u8]> = vec![
            br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}"#,
            br#" {"result":{"b":1,"a":[2]},"id":"x","jsonrpc":"2.0","extra":{"n":null}}"#,
            br#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":1,"result":2}"#,
            br#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}"#,
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#,
            br#"{"jsonrpc":"2.0","id":7,"method":"ping","result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":"a "[[[ string"}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}} trailing"#,
            b"Server listening on stdio",
            deep.as_bytes(),
        ];
        for line in lines {
            assert_eq!(
                owned_verdict(line),
                classify(line),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        assert!(
            matches!(classify(deep.as_bytes()), Incoming::NotJson(_)),
            "deeper than serde_json reads"
        );
        let kept = classify_owned(lines_plain().to_vec());
        assert!(
            matches!(
                kept,
                Sorted::Response {
                    outcome: Ok(RawResult::Line(_)),
                    ..
                }
            ),
            "a plain response keeps its line: {kept:?}"
        );
    }

    fn lines_plain() -> &'static [u8] {
        br#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}"#
    }

    #[test]
    fn a_kept_result_reads_into_its_type_with_the_trees_error_text() {
        let Sorted::Response {
            outcome: Ok(raw), ..
        } = classify_owned(lines_plain().to_vec())
        else {
            panic!("a response")
        };
        let result: crate::CallToolResult = raw.parse().unwrap();
        assert!(result.is_error && result.content.is_empty());
        let line = br#"{"jsonrpc":"2.0","id":3,"result":{"content":7}}"#;
        let Sorted::Response {
            outcome: Ok(raw), ..
        } = classify_owned(line.to_vec())
        else {
            panic!("a response")
        };
        let from_line = raw
            .parse::<crate::CallToolResult>()
            .unwrap_err()
            .to_string();
        let from_tree = serde_json::from_value::<crate::CallToolResult>(json!({"content": 7}))
            .unwrap_err()
            .to_string();
        assert_eq!(from_line, from_tree);
    }

    #[test]
    fn call_parameters_are_written_as_their_tree() {
        let arguments = json!({"z": 1, "a": [true, null], "s": "x\ny"});
        let borrowed = Params::Call {
            name: "echo",
            arguments: &arguments,
        };
        let tree = json!({"name": "echo", "arguments": arguments});
        assert_eq!(
            serde_json::to_string(&borrowed).unwrap(),
            serde_json::to_string(&tree).unwrap()
        );
        assert_eq!(
            serde_json::to_string(&Params::Tree(&tree)).unwrap(),
            serde_json::to_string(&tree).unwrap()
        );
    }

    #[test]
    fn ids_match_by_value() {
        assert!(ids_match(&json!(1), &json!(1)));
        assert!(ids_match(&json!(1), &json!(1.0)));
        assert!(!ids_match(&json!(1), &json!("1")));
        assert!(!ids_match(&json!(1), &json!(2)));
    }
}
