//! The data of the tools methods: a listed [`Tool`] and a [`CallToolResult`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool as listed by the server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// The tool's name, as the server is called with it.
    pub name: String,
    /// What the tool does, if the server says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    #[serde(rename = "inputSchema", default)]
    pub input_schema: Value,
}

/// The result of `tools/call`, as data: `isError` is kept as a flag, not turned into an error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallToolResult {
    /// The content blocks, as sent.
    #[serde(default)]
    pub content: Vec<Value>,
    /// Whether the tool reported a failure.
    #[serde(rename = "isError", default)]
    pub is_error: bool,
    /// The structured result, if any.
    #[serde(
        rename = "structuredContent",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
}

/// One page of `tools/list`.
#[derive(Debug, Deserialize)]
pub(crate) struct ToolsPage {
    /// The tools of this page.
    pub tools: Vec<Tool>,
    /// Where the next page starts, if there is one.
    #[serde(rename = "nextCursor", default)]
    pub next_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_result_keeps_is_error_as_data() {
        let result: CallToolResult = serde_json::from_value(
            json!({"content": [{"type": "text", "text": "no"}], "isError": true}),
        )
        .unwrap();
        assert!(result.is_error);
        assert_eq!(result.content.len(), 1);
        let plain: CallToolResult = serde_json::from_value(json!({"content": []})).unwrap();
        assert!(!plain.is_error);
        assert_eq!(plain.structured_content, None);
    }

    #[test]
    fn a_page_reads_its_cursor() {
        let page: ToolsPage = serde_json::from_value(json!({
            "tools": [{"name": "echo", "inputSchema": {"type": "object"}}],
            "nextCursor": "2"
        }))
        .unwrap();
        assert_eq!(page.tools[0].name, "echo");
        assert_eq!(page.tools[0].description, None);
        assert_eq!(page.next_cursor.as_deref(), Some("2"));
    }
}
