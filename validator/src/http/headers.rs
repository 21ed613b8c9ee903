//! Request headers: the `--header` ones checked before anything is sent, the standard ones of
//! 2026-07-28, and a check's changes to a request's list.

use hyper::header::{HeaderName, HeaderValue};
use serde_json::Value;

/// Checks `--header` names and values before anything is sent. The error is one line and
/// never shows a value (nor a name that is not one: it may be a value without its colon).
pub fn check_headers(
    headers: &[(String, String)],
) -> Result<Vec<(HeaderName, HeaderValue)>, String> {
    headers
        .iter()
        .enumerate()
        .map(|(index, (name, value))| {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                format!(
                    "--header number {} does not start with a valid header name (not shown)",
                    index + 1
                )
            })?;
            let value = HeaderValue::from_str(value).map_err(|_| {
                format!("the value of --header `{name}` is not a valid header value (not shown)")
            })?;
            Ok((name, value))
        })
        .collect()
}

/// The standard request headers of 2026-07-28 for a request: `Mcp-Method`, and `Mcp-Name`
/// (`params.name` or `params.uri`) for `tools/call`, `resources/read` and `prompts/get`, in
/// the Base64 sentinel form when it is not a plain header-safe value.
pub fn standard_headers(message: &Value) -> Vec<(String, String)> {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return Vec::new();
    };
    let mut headers = vec![("Mcp-Method".to_string(), method.to_string())];
    let name = match method {
        "tools/call" | "prompts/get" => message.pointer("/params/name"),
        "resources/read" => message.pointer("/params/uri"),
        _ => None,
    };
    if let Some(name) = name.and_then(Value::as_str) {
        headers.push(("Mcp-Name".to_string(), mcp_refclient::header_value(name)));
    }
    headers
}

/// Removes a header (name without regard to case) from a request's list.
pub fn without(mut headers: Vec<(String, String)>, name: &str) -> Vec<(String, String)> {
    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    headers
}

/// Sets a header (replacing one of that name) in a request's list.
pub fn with(headers: Vec<(String, String)>, name: &str, value: &str) -> Vec<(String, String)> {
    let mut headers = without(headers, name);
    headers.push((name.to_string(), value.to_string()));
    headers
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn standard_headers_name_the_method_and_encode_an_unsafe_name() {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "Hello, 世界"}});
        assert_eq!(
            standard_headers(&call),
            [
                ("Mcp-Method".to_string(), "tools/call".to_string()),
                ("Mcp-Name".into(), "=?base64?SGVsbG8sIOS4lueVjA==?=".into())
            ]
        );
        let read = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "=?base64?literal?="}});
        assert_eq!(
            standard_headers(&read)[1].1,
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        assert_eq!(
            standard_headers(&list),
            [("Mcp-Method".to_string(), "tools/list".to_string())]
        );
    }
}
