//! The wire schemas: the published JSON schema of each revision, embedded (copied verbatim
//! from the specification repository's `schema/<revision>/schema.json`), and the
//! validation of one server message against the right definition.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The revisions whose schema is embedded, oldest first.
pub const REVISIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The stateless revision (no `initialize`; version and capabilities in every request's
/// `_meta`), judged by [`crate::checks::stateless`] rather than by a handshake.
pub const STATELESS: &str = "2026-07-28";

/// The newest revision with an `initialize` handshake: judged by default when the server
/// answers `initialize` (beside [`STATELESS`] when it speaks that).
pub const LATEST: &str = "2025-11-25";

fn schema_text(revision: &str) -> Option<&'static str> {
    Some(match revision {
        "2026-07-28" => include_str!("schema/2026-07-28.json"),
        "2024-11-05" => include_str!("schema/2024-11-05.json"),
        "2025-03-26" => include_str!("schema/2025-03-26.json"),
        "2025-06-18" => include_str!("schema/2025-06-18.json"),
        "2025-11-25" => include_str!("schema/2025-11-25.json"),
        _ => return None,
    })
}

/// The definition a request's result must match, by method.
pub fn result_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "ping" | "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe" => {
            "EmptyResult"
        }
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "completion/complete" => "CompleteResult",
        "server/discover" => "DiscoverResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        _ => return None,
    })
}

type Cache = Mutex<HashMap<(String, String), Arc<jsonschema::Validator>>>;

/// The compiled validator of one definition of one revision (compiled once, then cached).
fn validator(
    revision: &str,
    definition: &str,
) -> Result<Option<Arc<jsonschema::Validator>>, String> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    static ROOTS: OnceLock<Mutex<HashMap<String, Arc<Value>>>> = OnceLock::new();
    let key = (revision.to_string(), definition.to_string());
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(Some(found.clone()));
    }
    let Some(text) = schema_text(revision) else {
        return Ok(None);
    };
    let root = {
        let mut roots = ROOTS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        match roots.get(revision) {
            Some(root) => root.clone(),
            None => {
                let parsed: Value = serde_json::from_str(text)
                    .map_err(|e| format!("the embedded {revision} schema is not JSON: {e}"))?;
                let root = Arc::new(parsed);
                roots.insert(revision.to_string(), root.clone());
                root
            }
        }
    };
    let defs_key = if root.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    if root.get(defs_key).and_then(|d| d.get(definition)).is_none() {
        return Ok(None);
    }
    let schema = json!({
        "$schema": root.get("$schema").cloned().unwrap_or(Value::Null),
        defs_key: reachable(&root[defs_key], defs_key, definition),
        "$ref": format!("#/{defs_key}/{definition}"),
    });
    let compiled = jsonschema::validator_for(&schema)
        .map_err(|e| format!("cannot compile the {revision} schema's {definition}: {e}"))?;
    let compiled = Arc::new(compiled);
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, compiled.clone());
    Ok(Some(compiled))
}

/// The definitions `definition` refers to, directly or not (itself included): all a
/// validator of it needs, so compiling it does not walk the whole schema (most of the time
/// `validate` spends judging).
fn reachable(defs: &Value, defs_key: &str, definition: &str) -> Value {
    let prefix = format!("#/{defs_key}/");
    let mut kept = serde_json::Map::new();
    let mut todo = vec![definition.to_string()];
    while let Some(name) = todo.pop() {
        if kept.contains_key(&name) {
            continue;
        }
        let Some(body) = defs.get(&name) else {
            continue;
        };
        let mut stack = vec![body];
        while let Some(node) = stack.pop() {
            match node {
                Value::Object(map) => {
                    if let Some(Value::String(target)) = map.get("$ref") {
                        if let Some(rest) = target.strip_prefix(&prefix) {
                            todo.push(rest.to_string());
                        }
                    }
                    stack.extend(map.values());
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        kept.insert(name, body.clone());
    }
    Value::Object(kept)
}

/// Compiles ahead the validators every `initialize` answer needs in each revision (its
/// envelope and `InitializeResult`), so judging later finds them cached. Run beside the
/// server launches, it takes compile time off the end of a validation.
pub fn warm(revisions: &[&str]) {
    for revision in revisions {
        for definitions in [
            &["JSONRPCResultResponse", "JSONRPCResponse"][..],
            &["InitializeResult"],
        ] {
            let _ = definitions
                .iter()
                .find(|d| validator(revision, d).ok().flatten().is_some());
        }
    }
}

/// Whether a revision's schema is embedded.
pub fn has_revision(revision: &str) -> bool {
    schema_text(revision).is_some()
}

/// Validates `instance` against `definition`; `Ok(None)` when valid or when the revision
/// has no such definition, `Ok(Some(problem))` when invalid, `Err` when the harness failed.
fn check(revision: &str, definition: &str, instance: &Value) -> Result<Option<String>, String> {
    let Some(validator) = validator(revision, definition)? else {
        return Ok(None);
    };
    let problems: Vec<String> = validator
        .iter_errors(instance)
        .take(3)
        .map(|e| {
            let at = e.instance_path.to_string();
            format!(
                "{} at `{}`",
                super::outcome::excerpt(&e.to_string()),
                if at.is_empty() { "/" } else { &at }
            )
        })
        .collect();
    Ok(if problems.is_empty() {
        None
    } else {
        Some(format!("not a valid {definition}: {}", problems.join("; ")))
    })
}

/// Validates `instance` against the `revision`'s `definition`: `Ok(None)` when valid or when
/// the revision has no such definition, `Ok(Some(problem))` when invalid, `Err` when the
/// harness failed.
pub fn validate_as(
    revision: &str,
    definition: &str,
    instance: &Value,
) -> Result<Option<String>, String> {
    check(revision, definition, instance)
}

/// Validates one message the server sent, given the method of the request it answers (for
/// a response). `Ok(None)`: valid. `Ok(Some(problem))`: invalid. `Err`: harness fault.
pub fn validate_message(
    revision: &str,
    message: &Value,
    answered: Option<&str>,
) -> Result<Option<String>, String> {
    let first = |defs: &[&'static str]| -> &'static str {
        defs.iter()
            .copied()
            .find(|d| validator(revision, d).ok().flatten().is_some())
            .unwrap_or(defs[0])
    };
    if message.get("method").is_some() {
        let (envelope, kind) = if message.get("id").is_some() {
            ("JSONRPCRequest", "ServerRequest")
        } else {
            ("JSONRPCNotification", "ServerNotification")
        };
        if let Some(problem) = check(revision, envelope, message)? {
            return Ok(Some(problem));
        }
        return check(revision, kind, message);
    }
    if message.get("error").is_some() && message.get("result").is_some() {
        // No revision's envelope forbids the extra member, JSON-RPC 2.0 itself does.
        return Ok(Some(
            "a response with both `result` and `error` (JSON-RPC 2.0, Response object: \"Either the result member or error member MUST be included, but both members MUST NOT be included.\")".into(),
        ));
    }
    if message.get("error").is_some() {
        let envelope = first(&["JSONRPCErrorResponse", "JSONRPCError"]);
        let mut message = message.clone();
        // JSON-RPC 2.0 asks for `id: null` where the request's id could not be read (a parse
        // error); the older MCP schemas do not allow null, so the envelope is judged without it.
        if message.get("id") == Some(&Value::Null) {
            if let Some(object) = message.as_object_mut() {
                object.insert("id".into(), json!(0));
            }
        }
        return check(revision, envelope, &message);
    }
    let envelope = first(&["JSONRPCResultResponse", "JSONRPCResponse"]);
    if let Some(problem) = check(revision, envelope, message)? {
        return Ok(Some(problem));
    }
    // A multi round-trip request's interim answer has a shape of its own, whatever the method.
    let interim = message
        .pointer("/result/resultType")
        .and_then(Value::as_str)
        == Some("input_required");
    let definition = if interim {
        Some("InputRequiredResult")
    } else {
        answered.and_then(result_definition)
    };
    match (definition, message.get("result")) {
        (Some(definition), Some(result)) => check(revision, definition, result),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_with_both_result_and_error_is_invalid_at_every_revision() {
        let both = json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": -32603, "message": "x"}});
        let error_only =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}});
        for revision in REVISIONS.into_iter().chain([STATELESS]) {
            let problem = validate_message(revision, &both, Some("ping")).unwrap();
            assert!(
                problem.is_some_and(|p| p.contains("both `result` and `error`")),
                "{revision}"
            );
            assert_eq!(
                validate_message(revision, &error_only, Some("ping")).unwrap(),
                None,
                "{revision}"
            );
        }
    }

    #[test]
    fn every_embedded_schema_compiles_its_envelopes() {
        for revision in REVISIONS {
            let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
            assert_eq!(
                validate_message(revision, &ok, Some("ping")).unwrap(),
                None,
                "{revision}"
            );
        }
        let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "ttlMs": 0, "cacheScope": "public", "tools": []}});
        assert_eq!(
            validate_message(STATELESS, &ok, Some("tools/list")).unwrap(),
            None
        );
        let bad = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}});
        let problem = validate_message(STATELESS, &bad, Some("tools/list"))
            .unwrap()
            .unwrap();
        assert!(problem.contains("resultType"), "{problem}");
    }

    #[test]
    fn a_bad_result_is_named_with_where_it_is_wrong() {
        let bad = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": 5, "inputSchema": {"type": "object"}}]}});
        let problem = validate_message("2025-06-18", &bad, Some("tools/list"))
            .unwrap()
            .unwrap();
        assert!(
            problem.contains("ListToolsResult") && problem.contains("/tools/0/name"),
            "{problem}"
        );
        let parse_error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
        assert_eq!(
            validate_message("2024-11-05", &parse_error, None).unwrap(),
            None
        );
    }
}
