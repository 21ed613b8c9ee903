//! The client side the validator plays: the client capabilities a declaring session
//! declares (`roots`, `sampling`, `elicitation` in form mode), and its canned answers to the
//! server's requests for them, which every session gives as they come
//! (`server.requests.*` judges what was asked).

use crate::schema;
use serde_json::{json, Value};

/// The server requests for client capabilities: method, capability, schema definition.
pub const CLIENT_REQUESTS: [(&str, &str, &str); 3] = [
    ("sampling/createMessage", "sampling", "CreateMessageRequest"),
    ("elicitation/create", "elicitation", "ElicitRequest"),
    ("roots/list", "roots", "ListRootsRequest"),
];

/// The revision that brought `elicitation`.
const ELICITATION_SINCE: &str = "2025-06-18";

/// The client capabilities a declaring session declares when offering `revision`: roots,
/// sampling (without `context` or `tools`) and, where the revision has it, elicitation with
/// no mode named (form mode only, as 2025-11-25 reads an empty object). The negotiation
/// sessions declare them too: the one at the probe's revision serves the parse-error check
/// and then these checks.
pub fn declared_at(revision: &str) -> Value {
    let mut declared = json!({"roots": {}, "sampling": {}});
    // A revision no schema has (the negotiation's unknown offer) is answered with the
    // latest: it declares what the latest has.
    let known = schema::has_revision(revision);
    if revision >= ELICITATION_SINCE || !known {
        declared["elicitation"] = json!({});
    }
    declared
}

/// Why a request goes beyond what `declared` says, if it does.
pub fn beyond_declared(method: &str, params: Option<&Value>, declared: &Value) -> Option<String> {
    let (_, capability, _) = CLIENT_REQUESTS.iter().find(|(m, _, _)| *m == method)?;
    let Some(declared_capability) = declared.get(capability) else {
        return Some(format!(
            "`{method}` sent, though the client declared no `{capability}`"
        ));
    };
    let param = |key: &str| params.and_then(|p| p.get(key));
    match method {
        "sampling/createMessage" if declared_capability.get("tools").is_none() => [
            "tools",
            "toolChoice",
        ]
        .iter()
        .find(|key| param(key).is_some())
        .map(|key| {
            format!("`{method}` with `{key}`, though the client did not declare `sampling.tools`")
        }),
        "elicitation/create"
            if param("mode").and_then(Value::as_str) == Some("url")
                && declared_capability.get("url").is_none() =>
        {
            Some(format!(
                "`{method}` in URL mode, though the client declared `elicitation` without `url`"
            ))
        }
        _ => None,
    }
}

/// The validator's answer to a server request `message`, given the client capabilities it
/// `declared`: `ping` `{}`; a declared request a sane canned result (no roots, a short
/// assistant text, a declined elicitation); one beyond what was declared -32602 (the schema:
/// "The client MUST return an error if this field is provided but
/// ClientCapabilities.sampling.tools is not declared"); any other -32601.
pub fn answer(message: &Value, declared: &Value) -> Value {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let known = CLIENT_REQUESTS.iter().any(|(m, _, _)| *m == method);
    let error = |code: i64, text: String| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}});
    if method == "ping" {
        return json!({"jsonrpc": "2.0", "id": id, "result": {}});
    }
    if !known {
        return error(-32601, "Method not found".into());
    }
    if let Some(why) = beyond_declared(method, message.get("params"), declared) {
        let code = if why.contains("declared no") {
            -32601
        } else {
            -32602
        };
        return error(code, why);
    }
    let result = match method {
        "roots/list" => json!({"roots": []}),
        "sampling/createMessage" => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "mcp-conformance: a canned answer (no model is sampled)"},
            "model": "mcp-conformance-validate",
            "stopReason": "endTurn",
        }),
        _ => json!({"action": "decline"}),
    };
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::REVISIONS;

    /// Every canned answer is a valid result of its revision.
    #[test]
    fn the_canned_answers_are_valid_results_at_each_revision() {
        for revision in REVISIONS {
            let declared = declared_at(revision);
            for (method, capability, _) in CLIENT_REQUESTS {
                if declared.get(capability).is_none() {
                    continue;
                }
                let params = match method {
                    "sampling/createMessage" => json!({"messages": [], "maxTokens": 10}),
                    "elicitation/create" => {
                        json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}})
                    }
                    _ => json!({}),
                };
                let reply = answer(
                    &json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}),
                    &declared,
                );
                let definition = match method {
                    "sampling/createMessage" => "CreateMessageResult",
                    "elicitation/create" => "ElicitResult",
                    _ => "ListRootsResult",
                };
                assert_eq!(
                    schema::validate_as(revision, definition, &reply["result"]).unwrap(),
                    None,
                    "{method} at {revision}: {reply}"
                );
            }
        }
    }
}
