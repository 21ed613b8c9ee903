//! The server's own fixtures: what it lists (tools, resources, templates, prompts, every page
//! followed), the arguments built for a tool from its `inputSchema`, and the safety policy
//! that decides which tools may be called at all.
//!
//! No special test tool is ever required: the checks exercise what the server offers, and a
//! check with nothing to exercise is a skip with the reason.

use crate::checks::session::Rpc;
use crate::stdio::Exchange;
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// More pages than this is taken for a server looping on its cursor.
pub const MAX_PAGES: usize = 100;

/// What a list method is called and where its items are in the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListKind {
    /// The method (`tools/list`).
    pub method: &'static str,
    /// The result's array (`tools`).
    pub key: &'static str,
    /// The capability that offers it (`tools`).
    pub capability: &'static str,
}

/// `tools/list`.
pub const TOOLS: ListKind = ListKind {
    method: "tools/list",
    key: "tools",
    capability: "tools",
};
/// `prompts/list`.
pub const PROMPTS: ListKind = ListKind {
    method: "prompts/list",
    key: "prompts",
    capability: "prompts",
};
/// `resources/list`.
pub const RESOURCES: ListKind = ListKind {
    method: "resources/list",
    key: "resources",
    capability: "resources",
};
/// `resources/templates/list`.
pub const TEMPLATES: ListKind = ListKind {
    method: "resources/templates/list",
    key: "resourceTemplates",
    capability: "resources",
};

/// A list, every page followed, or why it could not be had (with the exchange that showed it).
#[derive(Clone, Debug)]
pub struct Listed {
    /// The items of every page, in order.
    pub items: Vec<Value>,
    /// How many pages it took.
    pub pages: usize,
    /// Why the list stopped short, with the exchange that showed it (none when paging went
    /// on past the page bound).
    pub broken: Option<(String, Option<Exchange>)>,
}

/// Lists every page of `kind` (at most [`MAX_PAGES`]), treating cursors as opaque.
pub async fn list_all(session: &mut impl Rpc, kind: ListKind) -> Listed {
    let mut items = Vec::new();
    let mut cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    for page in 1..=MAX_PAGES {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let exchange = session.request(kind.method, params).await;
        let broken = |why: String| Listed {
            items: Vec::new(),
            pages: page,
            broken: Some((why, Some(exchange.clone()))),
        };
        let Some(page_items) = exchange
            .result()
            .and_then(|r| r.get(kind.key))
            .and_then(Value::as_array)
        else {
            return broken(format!(
                "page {page} of `{}` has no `{}` array",
                kind.method, kind.key
            ));
        };
        items.extend(page_items.iter().cloned());
        match exchange.result().and_then(|r| r.get("nextCursor")) {
            None | Some(Value::Null) => {
                return Listed {
                    items,
                    pages: page,
                    broken: None,
                }
            }
            Some(Value::String(next)) if cursors.insert(next.clone()) => {
                cursor = Some(next.clone())
            }
            Some(Value::String(next)) => {
                return broken(format!(
                    "page {page}: `nextCursor` `{next}` came back again"
                ))
            }
            Some(other) => {
                return broken(format!(
                    "page {page}: `nextCursor` is {other}, not a string"
                ))
            }
        }
    }
    Listed {
        items,
        pages: MAX_PAGES,
        broken: Some((format!("still paging after {MAX_PAGES} pages"), None)),
    }
}

/// Which tools the validator may call. Calling a tool can change the world (write a file,
/// send a mail): by default only tools annotated `readOnlyHint: true` are called, others
/// only when the user names them (`--call-tool NAME`, or `callTools` in a config entry).
/// Probes with invalid arguments are calls too and follow the same policy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallPolicy {
    /// Tools the user allowed by name.
    pub named: Vec<String>,
}

impl CallPolicy {
    /// Whether `tool` (as listed) may be called.
    pub fn allows(&self, tool: &Value) -> bool {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        self.named.iter().any(|n| n == name)
            || tool.get("annotations").and_then(|a| a.get("readOnlyHint"))
                == Some(&Value::Bool(true))
    }

    /// The reason nothing was called, for a skip.
    pub fn none_allowed(listed: usize) -> String {
        format!(
            "none of the {listed} listed tool(s) may be called: only tools annotated `readOnlyHint: true` are called unless named with --call-tool"
        )
    }
}

/// The tools a config file's entry `name` allows to be called: its `callTools` array (the
/// file was read and checked before; a file that no longer reads gives none).
pub fn config_call_tools(path: &std::path::Path, name: &str) -> Vec<String> {
    let Ok(text) = mcp_mock_servers::files::read_text(path) else {
        return Vec::new();
    };
    let Ok(file) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    file.pointer(&format!(
        "/mcpServers/{}/callTools",
        name.replace('~', "~0").replace('/', "~1")
    ))
    .and_then(Value::as_array)
    .map(|tools| {
        tools
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    })
    .unwrap_or_default()
}

/// The first type a schema names (`"type": "string"` or `"type": ["string", "null"]`).
fn type_of(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null"),
        _ => None,
    }
}

/// A value valid for `schema` as far as simple schemas go: its `default`, `const`, first
/// `enum` value or first example, else a value of its type within its bounds.
pub fn value_for(schema: &Value, depth: usize) -> Value {
    for key in ["default", "const"] {
        if let Some(value) = schema.get(key) {
            return value.clone();
        }
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(first) = schema
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(first) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return value_for(first, depth + 1);
        }
    }
    let number = |integer: bool| {
        let low = schema.get("minimum").and_then(Value::as_f64).or_else(|| {
            schema
                .get("exclusiveMinimum")
                .and_then(Value::as_f64)
                .map(|m| if integer { m.floor() + 1.0 } else { m + 1.0 })
        });
        let high = schema.get("maximum").and_then(Value::as_f64);
        let mut value = low.unwrap_or(1.0);
        if let Some(high) = high.filter(|h| value > *h) {
            value = high;
        }
        if integer {
            json!(value.ceil() as i64)
        } else {
            json!(value)
        }
    };
    match type_of(schema) {
        Some("integer") => number(true),
        Some("number") => number(false),
        Some("boolean") => json!(false),
        Some("array") => {
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            let item = schema
                .get("items")
                .cloned()
                .unwrap_or(json!({"type": "string"}));
            Value::Array(
                (0..min.min(8))
                    .map(|_| value_for(&item, depth + 1))
                    .collect(),
            )
        }
        Some("object") if depth < 8 => arguments_for(schema, depth + 1),
        Some("object") => json!({}),
        Some("null") => Value::Null,
        _ => {
            let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
            let mut text = "mcp-conformance".to_string();
            while text.len() < min.min(4096) {
                text.push('x');
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
                text.truncate(max as usize);
            }
            Value::String(text)
        }
    }
}

/// The arguments for a tool: its required properties (with [`value_for`]); optional ones
/// are left to the server's defaults.
pub fn arguments_for(schema: &Value, depth: usize) -> Value {
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut arguments = Map::new();
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let property = properties
            .and_then(|p| p.get(name))
            .cloned()
            .unwrap_or(json!({}));
        arguments.insert(name.to_string(), value_for(&property, depth));
    }
    Value::Object(arguments)
}

/// Arguments that violate `schema`, and how: a required property left out, else a declared
/// property of a simple type given a value of another type. `None` when the schema makes
/// no such demand (every object is valid for it).
pub fn invalid_arguments_for(schema: &Value) -> Option<(Value, String)> {
    let valid = arguments_for(schema, 0);
    if let Some(first) = schema
        .get("required")
        .and_then(Value::as_array)
        .and_then(|r| r.first())
        .and_then(Value::as_str)
    {
        let mut arguments = valid;
        if let Some(map) = arguments.as_object_mut() {
            map.remove(first);
        }
        return Some((
            arguments,
            format!("the required property `{first}` left out"),
        ));
    }
    let properties = schema.get("properties").and_then(Value::as_object)?;
    for (name, property) in properties {
        let wrong = match property.get("type").and_then(Value::as_str) {
            Some("string") => json!(12345),
            Some("number" | "integer") => json!("not a number"),
            Some("boolean") => json!("not a boolean"),
            Some("array") => json!("not an array"),
            Some("object") => json!("not an object"),
            _ => continue,
        };
        let mut arguments = valid;
        if let Some(map) = arguments.as_object_mut() {
            map.insert(name.clone(), wrong.clone());
        }
        return Some((
            arguments,
            format!(
                "`{name}` given {wrong}, not a {}",
                property["type"].as_str().unwrap_or_default()
            ),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_fill_the_required_properties_within_their_bounds() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "enum": ["Paris", "Rome"]},
                "count": {"type": "integer", "minimum": 3, "maximum": 10},
                "ratio": {"type": "number", "exclusiveMinimum": 0},
                "tags": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 20}},
                "deep": {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]},
                "optional": {"type": "string"}
            },
            "required": ["city", "count", "ratio", "tags", "deep"]
        });
        let arguments = arguments_for(&schema, 0);
        assert_eq!(arguments["city"], "Paris");
        assert_eq!(arguments["count"], 3);
        assert_eq!(arguments["ratio"], 1.0);
        assert_eq!(arguments["tags"][0].as_str().unwrap().len(), 20);
        assert_eq!(arguments["deep"], json!({"x": false}));
        assert!(arguments.get("optional").is_none());
    }

    #[test]
    fn invalid_arguments_leave_out_a_required_property_or_mistype_one() {
        let required =
            json!({"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]});
        assert_eq!(invalid_arguments_for(&required).unwrap().0, json!({}));
        let typed = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        assert_eq!(
            invalid_arguments_for(&typed).unwrap().0,
            json!({"text": 12345})
        );
        assert!(invalid_arguments_for(&json!({"type": "object"})).is_none());
    }

    #[test]
    fn only_read_only_tools_or_named_ones_may_be_called() {
        let policy = CallPolicy {
            named: vec!["delete".into()],
        };
        assert!(policy.allows(&json!({"name": "read", "annotations": {"readOnlyHint": true}})));
        assert!(!policy.allows(&json!({"name": "write", "annotations": {"readOnlyHint": false}})));
        assert!(!policy.allows(&json!({"name": "plain"})));
        assert!(policy.allows(&json!({"name": "delete", "annotations": {"destructiveHint": true}})));
    }
}
