//! `server.tools.*`: the tool list (with its pages) and calling a tool that does not exist.

use super::common::names::NO_SUCH_TOOL;
use super::session::Rpc;
use crate::outcome::{Failure, Finding};
use serde_json::{json, Value};
use std::collections::HashSet;

/// tools have unique names and an object `inputSchema`; `nextCursor` pages work.
pub const LIST: &str = "server.tools.list";
/// calling an unknown tool is an error (isError result or JSON-RPC error).
pub const UNKNOWN: &str = "server.tools.unknown";

/// More pages than this is taken for a server looping on its cursor.
const MAX_PAGES: usize = 1000;

fn no_tools(capabilities: &Value) -> Option<Finding> {
    capabilities
        .get("tools")
        .is_none()
        .then(|| Finding::skip("the server declares no `tools` capability"))
}

/// Lists every page and checks names and input schemas.
pub async fn list(session: &mut impl Rpc, capabilities: &Value) -> Finding {
    if let Some(skip) = no_tools(capabilities) {
        return skip;
    }
    let mut names = HashSet::new();
    let mut cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    for page in 1..=MAX_PAGES {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let exchange = session.request("tools/list", params).await;
        let fail = |expected: &str, actual: String| {
            Finding::Fail(
                Failure::new(expected, actual)
                    .sent(&exchange.sent)
                    .reply(&exchange),
            )
        };
        let Some(tools) = exchange
            .result()
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
        else {
            let expected = if page == 1 {
                "a result with a `tools` array"
            } else {
                "the next page for the server's own `nextCursor`"
            };
            return fail(expected, format!("page {page}: no `tools` array"));
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                return fail(
                    "every tool has a string `name`",
                    format!("page {page}: a tool without one: {tool}"),
                );
            };
            if !names.insert(name.to_string()) {
                return fail(
                    "unique tool names",
                    format!("page {page}: `{name}` listed twice"),
                );
            }
            let schema = tool.get("inputSchema");
            if !schema.is_some_and(|s| s.is_object() && s.get("type") == Some(&json!("object"))) {
                return fail(
                    "an `inputSchema` object with `type: \"object\"`",
                    format!(
                        "`{name}` has inputSchema {}",
                        schema.map_or("(none)".to_string(), Value::to_string)
                    ),
                );
            }
        }
        match exchange.result().and_then(|r| r.get("nextCursor")) {
            None | Some(Value::Null) => {
                return Finding::pass_with(format!("{} tool(s) on {page} page(s)", names.len()));
            }
            Some(Value::String(next)) => {
                if !cursors.insert(next.clone()) {
                    return fail(
                        "a cursor that moves on",
                        format!("page {page}: `nextCursor` `{next}` came back again"),
                    );
                }
                cursor = Some(next.clone());
            }
            Some(other) => {
                return fail(
                    "`nextCursor` a string",
                    format!("page {page}: `nextCursor` is {other}"),
                )
            }
        }
    }
    Finding::Fail(Failure::new(
        "a list that ends",
        format!("still paging after {MAX_PAGES} pages"),
    ))
}

/// Calls a tool that does not exist.
pub async fn unknown(session: &mut impl Rpc, capabilities: &Value) -> Finding {
    if let Some(skip) = no_tools(capabilities) {
        return skip;
    }
    let exchange = session
        .request(
            "tools/call",
            Some(json!({"name": NO_SUCH_TOOL, "arguments": {}})),
        )
        .await;
    if exchange.error_code().is_some()
        || exchange.result().and_then(|r| r.get("isError")) == Some(&json!(true))
    {
        return Finding::pass();
    }
    let actual = if exchange.result().is_some() {
        "a result without `isError: true`"
    } else {
        "no response"
    };
    Finding::Fail(
        Failure::new("a JSON-RPC error or a result with `isError: true`", actual)
            .sent(&exchange.sent)
            .reply(&exchange),
    )
}
