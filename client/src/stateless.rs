//! Revision 2026-07-28 (stateless MCP): the `_meta` every request carries, the era probe's
//! verdict, `resultType`, and the `Mcp-Name` header's encoding.

use serde_json::{json, Map, Value};

use crate::{ClientConfig, McpError};

/// The `_meta` key of a request's protocol version.
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of a request's client capabilities.
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of a request's client identity.
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// The error codes only a 2026-07-28 server sends: header mismatch, missing client
/// capability, unsupported protocol version. Any of them identifies a modern server.
pub(crate) const HEADER_MISMATCH: i32 = -32020;
/// Missing required client capability.
pub(crate) const MISSING_CAPABILITY: i32 = -32021;
/// Unsupported protocol version.
pub(crate) const UNSUPPORTED_VERSION: i32 = -32022;

/// How many `input_required` rounds one request may take before the client gives up.
pub(crate) const MAX_INPUT_ROUNDS: usize = 8;

/// Whether a JSON-RPC error code is one of the recognized modern errors.
pub(crate) fn is_modern_error(code: i32) -> bool {
    matches!(
        code,
        HEADER_MISMATCH | MISSING_CAPABILITY | UNSUPPORTED_VERSION
    )
}

/// `params` with the request `_meta` of `version`: protocol version, client capabilities
/// (none: the reference client declares no optional capability) and client info. Keys the
/// caller set in `_meta` are kept.
pub(crate) fn with_meta(params: Option<Value>, version: &str, config: &ClientConfig) -> Value {
    let mut params = match params {
        Some(Value::Object(object)) => object,
        _ => Map::new(),
    };
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    let meta = meta.as_object_mut().expect("an object");
    meta.insert(META_PROTOCOL_VERSION.into(), json!(version));
    meta.insert(META_CLIENT_CAPABILITIES.into(), json!({}));
    meta.insert(META_CLIENT_INFO.into(), client_info(config));
    Value::Object(params)
}

/// The client's `name` and `version`, as `clientInfo` carries them.
pub(crate) fn client_info(config: &ClientConfig) -> Value {
    json!({
        "name": config.client_name.as_deref().unwrap_or(env!("CARGO_PKG_NAME")),
        "version": env!("CARGO_PKG_VERSION"),
    })
}

/// What a result's `resultType` says.
#[derive(Debug, PartialEq)]
pub(crate) enum ResultKind {
    /// Absent (an earlier-revision server) or `complete`.
    Complete,
    /// `input_required`: the request is to be retried with the input it asks for.
    InputRequired,
}

/// Reads a result's `resultType`; an unknown one is a protocol error naming it.
pub(crate) fn result_kind(method: &str, result: &Value) -> Result<ResultKind, McpError> {
    match result.get("resultType") {
        None => Ok(ResultKind::Complete),
        Some(Value::String(kind)) if kind == "complete" => Ok(ResultKind::Complete),
        Some(Value::String(kind)) if kind == "input_required" => Ok(ResultKind::InputRequired),
        Some(other) => Err(McpError::Protocol(format!(
            "the result of '{method}' has resultType {}, which this client does not know",
            cut(&other.to_string())
        ))),
    }
}

/// The retry of an `input_required` result: the original params, `requestState` echoed
/// exactly (left out when the result has none). Input requests are refused with an error
/// naming them: the reference client declares no capability to answer any.
pub(crate) fn input_retry(
    method: &str,
    original: &Value,
    result: &Value,
) -> Result<Value, McpError> {
    if let Some(requests) = result
        .get("inputRequests")
        .and_then(Value::as_object)
        .filter(|r| !r.is_empty())
    {
        let asked: Vec<String> = requests
            .iter()
            .map(|(key, request)| {
                let what = request
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("an unnamed request");
                format!("{} ({})", cut(what), cut(key))
            })
            .collect();
        return Err(McpError::Protocol(format!(
            "'{method}' needs input the client cannot give: {}; the client declared no capability for it",
            asked.join(", ")
        )));
    }
    let mut params = original.as_object().cloned().unwrap_or_default();
    params.remove("inputResponses");
    match result.get("requestState") {
        Some(state) => params.insert("requestState".into(), state.clone()),
        None => params.remove("requestState"),
    };
    Ok(Value::Object(params))
}

/// The verdict on a `server/discover` probe that failed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ProbeFailure {
    /// A legacy server: fall back to `initialize`.
    Legacy,
    /// A modern server that refused the request: surface its error.
    Modern,
    /// Neither: the connection or the server failed; give up.
    Fatal,
}

/// Classifies a failed probe: a recognized modern error is a modern server; any other
/// JSON-RPC error, a 4xx over HTTP, or no answer within the probe's bound (stdio) is a
/// legacy one; a dead connection or a 5xx is fatal.
pub(crate) fn classify_probe_failure(error: &McpError) -> ProbeFailure {
    match error {
        McpError::JsonRpc { code, .. } if is_modern_error(code.0) => ProbeFailure::Modern,
        McpError::JsonRpc { .. } => ProbeFailure::Legacy,
        McpError::Http { status, .. } if (400..500).contains(status) => ProbeFailure::Legacy,
        McpError::Timeout(_) => ProbeFailure::Legacy,
        _ => ProbeFailure::Fatal,
    }
}

/// The clear error for an `UnsupportedProtocolVersionError`: what the server supports and
/// what the client offered.
pub(crate) fn unsupported_version(offered: &str, data: Option<&Value>) -> McpError {
    let supported: Vec<String> = data
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|v| cut(v.as_str().unwrap_or("?")))
                .collect()
        })
        .unwrap_or_default();
    let theirs = match supported.is_empty() {
        true => "no version list".to_string(),
        false => supported.join(", "),
    };
    McpError::Protocol(format!(
        "unsupported protocol version (-32022): the client offered {offered}, the server supports {theirs}; \
         no version both speak"
    ))
}

/// The value of `Mcp-Name` (or any mirrored header): as is when it is plain header-safe
/// ASCII, else `=?base64?…?=` of its UTF-8 (so is a plain value that looks like that form).
pub fn header_value(value: &str) -> String {
    // RFC 9110 allows a tab inside a field value, but the 2026-07-28 text sends any value with
    // "control characters" as base64, and a tab is one: encoding it is valid either way.
    let plain = value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
        && (!value.starts_with("=?base64?") || !value.ends_with("?="));
    match plain && !value.is_empty() {
        true => value.to_string(),
        false => format!("=?base64?{}?=", base64(value.as_bytes())),
    }
}

/// Standard base64 with padding (RFC 4648), for the header values of 2026-07-28 that need it
/// (`=?base64?…?=`); public so that the validator encodes as the client does.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            match i <= chunk.len() {
                true => out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char),
                false => out.push('='),
            }
        }
    }
    out
}

/// A server-sent text cut to a readable length.
fn cut(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_plain_or_base64_as_the_spec_examples() {
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(
            header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(header_value("two words"), "two words");
        assert_eq!(header_value("tab\there"), "=?base64?dGFiCWhlcmU=?=");
        assert_eq!(header_value(""), "=?base64??=");
    }

    #[test]
    fn a_missing_result_type_is_complete_and_an_unknown_one_an_error() {
        assert_eq!(
            result_kind("tools/list", &json!({"tools": []})).unwrap(),
            ResultKind::Complete
        );
        assert_eq!(
            result_kind("tools/list", &json!({"resultType": "complete"})).unwrap(),
            ResultKind::Complete
        );
        assert_eq!(
            result_kind("tools/call", &json!({"resultType": "input_required"})).unwrap(),
            ResultKind::InputRequired
        );
        let error = result_kind("tools/call", &json!({"resultType": "task"})).unwrap_err();
        assert!(error.to_string().contains("resultType \"task\""), "{error}");
    }

    #[test]
    fn a_retry_echoes_the_request_state_exactly_or_leaves_it_out() {
        let original = json!({"name": "t", "arguments": {}, "requestState": "old"});
        let retry = input_retry(
            "tools/call",
            &original,
            &json!({"resultType": "input_required", "requestState": "s1"}),
        )
        .unwrap();
        assert_eq!(
            retry,
            json!({"name": "t", "arguments": {}, "requestState": "s1"})
        );
        let retry = input_retry(
            "tools/call",
            &original,
            &json!({"resultType": "input_required"}),
        )
        .unwrap();
        assert_eq!(retry, json!({"name": "t", "arguments": {}}));
        let asked = json!({"resultType": "input_required", "inputRequests": {"login": {"method": "elicitation/create"}}});
        let error = input_retry("tools/call", &original, &asked).unwrap_err();
        assert!(
            error.to_string().contains("elicitation/create (login)"),
            "{error}"
        );
    }

    #[test]
    fn only_the_three_modern_codes_keep_a_client_from_falling_back() {
        use crate::ErrorCode;
        let rpc = |code| McpError::JsonRpc {
            code: ErrorCode(code),
            message: String::new(),
            data: None,
        };
        for code in [HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION] {
            assert_eq!(classify_probe_failure(&rpc(code)), ProbeFailure::Modern);
        }
        for code in [-32601, -32600, -32602, -32000, -32001, -32004] {
            assert_eq!(classify_probe_failure(&rpc(code)), ProbeFailure::Legacy);
        }
        let http = |status| McpError::Http {
            status,
            message: String::new(),
        };
        assert_eq!(classify_probe_failure(&http(400)), ProbeFailure::Legacy);
        assert_eq!(classify_probe_failure(&http(405)), ProbeFailure::Legacy);
        assert_eq!(classify_probe_failure(&http(503)), ProbeFailure::Fatal);
        assert_eq!(
            classify_probe_failure(&McpError::Transport("gone".into())),
            ProbeFailure::Fatal
        );
    }

    #[test]
    fn meta_carries_version_capabilities_and_identity_and_keeps_the_callers_keys() {
        let config = ClientConfig::default();
        let params = with_meta(
            Some(json!({"name": "t", "_meta": {"progressToken": 7}})),
            "2026-07-28",
            &config,
        );
        let meta = &params["_meta"];
        assert_eq!(meta[META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(meta[META_CLIENT_CAPABILITIES], json!({}));
        assert!(
            meta[META_CLIENT_INFO]["name"].is_string()
                && meta[META_CLIENT_INFO]["version"].is_string()
        );
        assert_eq!(meta["progressToken"], 7);
        assert_eq!(params["name"], "t");
    }
}
