//! Matching a received message against an `expect` step.
//!
//! Free functions: [`matches()`] checks a whole [`Expect`]; [`contains`] is the subset rule it
//! uses for `params` and `result` (objects compared key by key, recursively; arrays element
//! by element with equal length; numbers by value, so `1` matches `1.0`).

use serde_json::Value;

use crate::script::{Expect, HttpMatch, Origin};

/// Whether `message` (a received line, parsed) satisfies every field the matcher gives.
///
/// `method` must equal the message's `method`; `response_to` requires a response (no
/// `method`, a `result` or an `error`) whose `id` equals it; `has_id` requires a non-null
/// `id` to be present (or absent); `params` and `result` must be [`contains`]-subsets;
/// `error_code` must equal `error.code`. A message that is not a JSON object matches nothing.
pub fn matches(expect: &Expect, message: &Value) -> bool {
    let Some(object) = message.as_object() else {
        return false;
    };
    let id = object.get("id").filter(|id| !id.is_null());
    if let Some(method) = &expect.method {
        if object.get("method").and_then(Value::as_str) != Some(method.as_str()) {
            return false;
        }
    }
    if let Some(wanted) = &expect.response_to {
        let is_response = !object.contains_key("method")
            && (object.contains_key("result") || object.contains_key("error"));
        if !is_response || !id.is_some_and(|id| same(id, wanted)) {
            return false;
        }
    }
    if let Some(has_id) = expect.has_id {
        if id.is_some() != has_id {
            return false;
        }
    }
    if let Some(params) = &expect.params {
        if !object
            .get("params")
            .is_some_and(|actual| contains(actual, params))
        {
            return false;
        }
    }
    if !expect.absent_params.is_empty() {
        let params = object.get("params").and_then(Value::as_object);
        if params.is_some_and(|p| expect.absent_params.iter().any(|key| p.contains_key(key))) {
            return false;
        }
    }
    if let Some(result) = &expect.result {
        if !object
            .get("result")
            .is_some_and(|actual| contains(actual, result))
        {
            return false;
        }
    }
    if let Some(version) = &expect.meta {
        if !carries_meta(object.get("params"), version) {
            return false;
        }
    }
    if let Some(code) = expect.error_code {
        let actual = object
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64);
        if actual != Some(code) {
            return false;
        }
    }
    true
}

/// The `_meta` key of a request's protocol version (2026-07-28).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of a request's client capabilities.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of a request's client identity.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key tagging a notification with its `subscriptions/listen` stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Whether `params._meta` carries protocol version `version`, a client capabilities object
/// and a client info with a string name and version.
pub fn carries_meta(params: Option<&Value>, version: &str) -> bool {
    let Some(meta) = params.and_then(|p| p.get("_meta")) else {
        return false;
    };
    let info = meta.get(META_CLIENT_INFO);
    meta.get(META_PROTOCOL_VERSION).and_then(Value::as_str) == Some(version)
        && meta
            .get(META_CLIENT_CAPABILITIES)
            .is_some_and(Value::is_object)
        && info
            .and_then(|i| i.get("name"))
            .is_some_and(Value::is_string)
        && info
            .and_then(|i| i.get("version"))
            .is_some_and(Value::is_string)
}

/// An HTTP request as the HTTP matcher sees it.
#[derive(Clone, Copy, Debug)]
pub struct RequestView<'a> {
    /// The listener it reached.
    pub origin: Origin,
    /// The method.
    pub method: &'a str,
    /// The path and query.
    pub path: &'a str,
    /// The headers, names lowercased.
    pub headers: &'a [(String, String)],
}

impl RequestView<'_> {
    /// The first value of a header (name without regard to case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Whether an HTTP request satisfies an [`HttpMatch`]: the method (without regard to case),
/// the path (with its query when the pattern has a `?`), the origin, each header's exact
/// value, and each absent header's absence (header names without regard to case).
pub fn http_matches(pattern: &HttpMatch, request: &RequestView<'_>) -> bool {
    if let Some(method) = &pattern.method {
        if !method.eq_ignore_ascii_case(request.method) {
            return false;
        }
    }
    if let Some(path) = &pattern.path {
        let actual = match path.contains('?') {
            true => request.path,
            false => request.path.split('?').next().unwrap_or(""),
        };
        if actual != path {
            return false;
        }
    }
    if pattern
        .origin
        .is_some_and(|origin| origin != request.origin)
    {
        return false;
    }
    let headers_ok = pattern.headers.iter().all(|(name, value)| {
        request
            .header(name)
            .is_some_and(|actual| header_value_matches(name, value, actual))
    });
    headers_ok
        && pattern
            .absent_headers
            .iter()
            .all(|name| request.header(name).is_none())
}

/// Whether a header's value is the pattern's: the same text, or for `Accept` the same media
/// types in any order (the order of an `Accept` list carries no meaning; only q-values do).
pub fn header_value_matches(name: &str, pattern: &str, actual: &str) -> bool {
    if pattern == actual {
        return true;
    }
    if !name.eq_ignore_ascii_case("accept") {
        return false;
    }
    let types = |text: &str| {
        let mut types: Vec<String> = text
            .split(',')
            .map(|t| t.trim().to_ascii_lowercase())
            .filter(|t| !t.is_empty())
            .collect();
        types.sort();
        types
    };
    types(pattern) == types(actual)
}

/// Whether `actual` contains `pattern`: every key of a pattern object is in the actual object
/// with a containing value; arrays have the same length and contain element by element;
/// anything else is equal (numbers by value).
pub fn contains(actual: &Value, pattern: &Value) -> bool {
    match (actual, pattern) {
        (Value::Object(actual), Value::Object(pattern)) => pattern
            .iter()
            .all(|(key, want)| actual.get(key).is_some_and(|have| contains(have, want))),
        (Value::Array(actual), Value::Array(pattern)) => {
            actual.len() == pattern.len()
                && actual
                    .iter()
                    .zip(pattern)
                    .all(|(have, want)| contains(have, want))
        }
        _ => same(actual, pattern),
    }
}

/// Equality with numbers compared by value (`1` equals `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(x), Some(y)) if x == y)
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_accept_list_matches_in_any_order_other_headers_exactly() {
        use super::header_value_matches;
        assert!(header_value_matches(
            "Accept",
            "application/json, text/event-stream",
            "text/event-stream, application/json"
        ));
        assert!(!header_value_matches(
            "accept",
            "application/json, text/event-stream",
            "application/json"
        ));
        assert!(!header_value_matches("x-key", "a, b", "b, a"));
    }

    use super::*;
    use serde_json::json;

    fn method(m: &str) -> Expect {
        Expect {
            method: Some(m.into()),
            ..Expect::default()
        }
    }

    #[test]
    fn a_method_matches_requests_and_notifications_of_that_method() {
        assert!(matches(
            &method("ping"),
            &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        ));
        assert!(!matches(
            &method("ping"),
            &json!({"jsonrpc": "2.0", "id": 1, "method": "pong"})
        ));
        assert!(!matches(&method("ping"), &json!("ping")));
    }

    #[test]
    fn has_id_tells_requests_from_notifications() {
        let request = Expect {
            has_id: Some(true),
            ..method("x")
        };
        assert!(matches(&request, &json!({"id": 0, "method": "x"})));
        assert!(!matches(&request, &json!({"method": "x"})));
        assert!(!matches(&request, &json!({"id": null, "method": "x"})));
    }

    #[test]
    fn response_to_needs_a_response_with_that_id() {
        let e = Expect {
            response_to: Some(json!(7)),
            ..Expect::default()
        };
        assert!(matches(&e, &json!({"id": 7, "result": {}})));
        assert!(matches(
            &e,
            &json!({"id": 7, "error": {"code": -32601, "message": "no"}})
        ));
        assert!(!matches(&e, &json!({"id": 8, "result": {}})));
        assert!(!matches(&e, &json!({"id": 7, "method": "ping"})));
    }

    #[test]
    fn params_are_a_recursive_subset() {
        let e = Expect {
            params: Some(json!({"name": "echo", "arguments": {"n": 1}})),
            ..method("tools/call")
        };
        let msg = json!({"id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"n": 1.0, "m": 2}}});
        assert!(matches(&e, &msg));
        let other =
            json!({"id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {}}});
        assert!(!matches(&e, &other));
    }

    #[test]
    fn arrays_must_have_the_same_length() {
        assert!(contains(
            &json!([1, {"a": 1, "b": 2}]),
            &json!([1, {"a": 1}])
        ));
        assert!(!contains(&json!([1, 2]), &json!([1])));
    }

    #[test]
    fn http_headers_match_without_regard_to_case() {
        let headers = vec![("authorization".to_string(), "Bearer t1".to_string())];
        let view = RequestView {
            origin: Origin::Primary,
            method: "post",
            path: "/mcp?x=1",
            headers: &headers,
        };
        let mut pattern = HttpMatch {
            method: Some("POST".into()),
            path: Some("/mcp".into()),
            ..HttpMatch::default()
        };
        pattern
            .headers
            .insert("Authorization".into(), "Bearer t1".into());
        assert!(http_matches(&pattern, &view));
        pattern.absent_headers.push("AUTHORIZATION".into());
        assert!(!http_matches(&pattern, &view));
        pattern.absent_headers.clear();
        pattern.path = Some("/mcp?x=2".into());
        assert!(!http_matches(&pattern, &view));
        pattern.path = None;
        pattern.origin = Some(Origin::Second);
        assert!(!http_matches(&pattern, &view));
    }

    #[test]
    fn error_code_reads_the_error_object() {
        let e = Expect {
            error_code: Some(-32601),
            ..Expect::default()
        };
        assert!(matches(
            &e,
            &json!({"id": 1, "error": {"code": -32601, "message": "x"}})
        ));
        assert!(!matches(&e, &json!({"id": 1, "result": {}})));
    }
}
