//! Default replies and JSON-RPC message building.

use serde_json::{json, Map, Value};

use crate::matcher::{META_PROTOCOL_VERSION, META_SUBSCRIPTION_ID};
use crate::script::{Discover, Handshake, RpcErrorBody, ToolDef};

/// The revision a `discover` step offers unless it names others.
pub const STATELESS_REVISION: &str = "2026-07-28";

/// The answer of a `discover` step: the versions, capabilities and `serverInfo`, as a
/// 2026-07-28 result (`resultType`, cacheable).
pub fn discover_result(discover: &Discover) -> Value {
    let versions = match discover.versions.is_empty() {
        true => vec![STATELESS_REVISION.to_string()],
        false => discover.versions.clone(),
    };
    json!({
        "resultType": "complete",
        "supportedVersions": versions,
        "capabilities": discover.capabilities.clone().unwrap_or_else(|| json!({"tools": {}})),
        "serverInfo": {"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")},
        "ttlMs": 0,
        "cacheScope": "public",
    })
}

/// `params` with `_meta["io.modelcontextprotocol/subscriptionId"]` set to `id`.
pub fn tagged(params: Option<&Value>, id: &Value) -> Value {
    let mut params = params
        .cloned()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    let object = params.as_object_mut().expect("an object");
    let meta = object.entry("_meta").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    meta.as_object_mut()
        .expect("an object")
        .insert(META_SUBSCRIPTION_ID.into(), id.clone());
    params
}

/// A default result for a request that carries a 2026-07-28 `_meta` version gets that
/// revision's `resultType: "complete"` (and, for `tools/list`, the cache hints), as a
/// stateless server sends it; older requests get the result as before.
fn stateless_shape(
    request: &Value,
    result: Result<Value, RpcErrorBody>,
) -> Result<Value, RpcErrorBody> {
    let modern = request
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .is_some();
    let mut result = result?;
    if let (true, Some(object)) = (modern, result.as_object_mut()) {
        object
            .entry("resultType")
            .or_insert_with(|| json!("complete"));
        if request.get("method").and_then(Value::as_str) == Some("tools/list") {
            object.entry("ttlMs").or_insert_with(|| json!(0));
            object
                .entry("cacheScope")
                .or_insert_with(|| json!("public"));
        }
    }
    Ok(result)
}

/// The name the mock gives in `serverInfo`.
pub const SERVER_NAME: &str = "mcp-mock-stdio";

/// The protocolVersion answered when the client offered none and the script names none.
pub const FALLBACK_PROTOCOL_VERSION: &str = "2025-06-18";

/// The revisions with an `initialize` handshake: an offer of one is answered with it.
pub const STATEFUL_REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The answer to an `initialize` offering a revision outside [`STATEFUL_REVISIONS`].
pub const LATEST_STATEFUL_REVISION: &str = "2025-11-25";

/// JSON-RPC "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;

/// The default answer to a request: `initialize` → the offered (or the handshake's) version,
/// the handshake's capabilities or `{tools: {listChanged: true}}`, and `serverInfo`;
/// `tools/list` → the script's tools; `tools/call` → a text content `called <name>`;
/// `ping` → `{}`; anything else → error -32601.
pub fn incidental_result(request: &Value, tools: &[ToolDef]) -> Result<Value, RpcErrorBody> {
    match request.get("method").and_then(Value::as_str).unwrap_or("") {
        "logging/setLevel" => Ok(json!({})),
        "resources/list" => Ok(json!({"resources": []})),
        "resources/templates/list" => Ok(json!({"resourceTemplates": []})),
        "prompts/list" => Ok(json!({"prompts": []})),
        _ => default_result(request, tools, &Handshake::default()),
    }
}

/// The default answer to a request: what a plain server would say.
pub fn default_result(
    request: &Value,
    tools: &[ToolDef],
    handshake: &Handshake,
) -> Result<Value, RpcErrorBody> {
    stateless_shape(request, legacy_result(request, tools, handshake))
}

fn legacy_result(
    request: &Value,
    tools: &[ToolDef],
    handshake: &Handshake,
) -> Result<Value, RpcErrorBody> {
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    let params = request.get("params");
    match method {
        "initialize" => {
            let offered = params
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str);
            let version = offered
                .and_then(|o| handshake.answers.get(o))
                .map(String::as_str)
                .or(handshake.version.as_deref())
                // A revision with an `initialize` handshake is echoed; one the mock does
                // not speak (2026-07-28 has no handshake) gets its latest, as the
                // specification asks of a server that does not support the offer.
                .or(offered.filter(|o| STATEFUL_REVISIONS.contains(o)))
                .or(offered.map(|_| LATEST_STATEFUL_REVISION))
                .unwrap_or(FALLBACK_PROTOCOL_VERSION);
            let capabilities = handshake
                .capabilities
                .clone()
                .unwrap_or_else(|| json!({"tools": {"listChanged": true}}));
            Ok(json!({
                "protocolVersion": version,
                "capabilities": capabilities,
                "serverInfo": {"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")},
            }))
        }
        "tools/list" => Ok(json!({"tools": tools.iter().map(tool_json).collect::<Vec<_>>()})),
        "tools/call" => {
            let name = params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            Ok(
                json!({"content": [{"type": "text", "text": format!("called {name}")}], "isError": false}),
            )
        }
        "ping" => Ok(json!({})),
        _ => Err(RpcErrorBody {
            code: METHOD_NOT_FOUND,
            message: format!("Method not found: {method}"),
            data: None,
        }),
    }
}

fn tool_json(tool: &ToolDef) -> Value {
    let mut object = Map::new();
    object.insert("name".into(), json!(tool.name));
    if let Some(description) = &tool.description {
        object.insert("description".into(), json!(description));
    }
    object.insert("inputSchema".into(), tool.input_schema.clone());
    if let Some(annotations) = &tool.annotations {
        object.insert("annotations".into(), annotations.clone());
    }
    if let Some(schema) = &tool.output_schema {
        object.insert("outputSchema".into(), schema.clone());
    }
    Value::Object(object)
}

/// A response message: `{jsonrpc, id, result}` or `{jsonrpc, id, error}`.
pub fn response(id: Value, outcome: Result<Value, RpcErrorBody>) -> Value {
    match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => {
            let mut body = json!({"code": error.code, "message": error.message});
            if let Some(data) = error.data {
                body["data"] = data;
            }
            json!({"jsonrpc": "2.0", "id": id, "error": body})
        }
    }
}

/// A notification message, or a request when `id` is given.
pub fn message(id: Option<&Value>, method: &str, params: Option<&Value>) -> Value {
    let mut object = Map::new();
    object.insert("jsonrpc".into(), json!("2.0"));
    if let Some(id) = id {
        object.insert("id".into(), id.clone());
    }
    object.insert("method".into(), json!(method));
    if let Some(params) = params {
        object.insert("params".into(), params.clone());
    }
    Value::Object(object)
}

/// Expands `${env:NAME}` (the variable's value, empty when unset) and `${env?:NAME}`
/// (`set` or `unset`) in every string of a scripted result, so a scenario can see the
/// environment the client gave the server without the snapshot holding machine paths.
pub fn expand_env(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(expand_env_text(text)),
        Value::Array(items) => Value::Array(items.iter().map(expand_env).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), expand_env(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn expand_env_text(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${env") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let Some(end) = after.find('}') else {
            out.push_str(after);
            return out;
        };
        let inner = &after[2..end];
        match (inner.strip_prefix("env?:"), inner.strip_prefix("env:")) {
            (Some(name), _) => out.push_str(if std::env::var_os(name).is_some() {
                "set"
            } else {
                "unset"
            }),
            (None, Some(name)) => out.push_str(&std::env::var(name).unwrap_or_default()),
            (None, None) => out.push_str(&after[..=end]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_answers_the_offered_version() {
        let request =
            json!({"id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05"}});
        let result = default_result(&request, &[], &Handshake::default()).unwrap();
        assert_eq!(result["protocolVersion"], "2024-11-05");
        assert_eq!(
            result["capabilities"],
            json!({"tools": {"listChanged": true}})
        );
        assert_eq!(result["serverInfo"]["name"], SERVER_NAME);
    }

    #[test]
    fn an_offer_of_a_revision_without_a_handshake_is_answered_with_the_latest_stateful_one() {
        let request =
            json!({"id": 1, "method": "initialize", "params": {"protocolVersion": "2026-07-28"}});
        let result = default_result(&request, &[], &Handshake::default()).unwrap();
        assert_eq!(result["protocolVersion"], "2025-11-25");
    }

    #[test]
    fn the_handshake_version_wins_over_the_offer() {
        let request =
            json!({"id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05"}});
        let handshake = Handshake {
            version: Some("1999-01-01".into()),
            ..Handshake::default()
        };
        let result = default_result(&request, &[], &handshake).unwrap();
        assert_eq!(result["protocolVersion"], "1999-01-01");
        let answers = [("2024-11-05".to_string(), "2025-06-18".to_string())].into();
        let handshake = Handshake {
            answers,
            ..handshake
        };
        let result = default_result(&request, &[], &handshake).unwrap();
        assert_eq!(result["protocolVersion"], "2025-06-18");
    }

    #[test]
    fn unknown_methods_are_not_found() {
        let request = json!({"id": 1, "method": "sampling/createMessage"});
        let error = default_result(&request, &[], &Handshake::default()).unwrap_err();
        assert_eq!(error.code, METHOD_NOT_FOUND);
    }

    #[test]
    fn env_placeholders_expand_and_other_text_stays() {
        let value =
            serde_json::json!({"t": ["${env?:PATH}/${env:MCP_MOCK_SURELY_UNSET}/${other}"]});
        assert_eq!(
            expand_env(&value),
            serde_json::json!({"t": ["set//${other}"]})
        );
    }

    #[test]
    fn tools_call_names_the_tool() {
        let request = json!({"id": 1, "method": "tools/call", "params": {"name": "echo"}});
        let result = default_result(&request, &[], &Handshake::default()).unwrap();
        assert_eq!(result["content"][0]["text"], "called echo");
    }
}
