//! Content blocks as the text a model sees (yoagent's mapping).
//!
//! A `text` block is its text; a `resource` with a `text` is that text; any other kind
//! (`image`, `audio`, a `blob` resource, a kind this crate does not know) is its JSON, with
//! every base64 payload larger than [`LARGE_PAYLOAD`] replaced by its size.

use serde_json::Value;

/// A base64 string longer than this many bytes is replaced by its size (1 KiB, as yoagent's
/// code does).
pub const LARGE_PAYLOAD: usize = 1024;

/// The text of a result's content blocks, one block after the other, joined by newlines.
pub fn content_text(content: &[Value]) -> String {
    content
        .iter()
        .map(block_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of one content block.
pub fn block_text(block: &Value) -> String {
    match block.get("type").and_then(Value::as_str) {
        Some("text") => {
            if let Some(text) = block.get("text").and_then(Value::as_str) {
                return text.to_string();
            }
        }
        Some("resource") => {
            if let Some(text) = block
                .get("resource")
                .and_then(|r| r.get("text"))
                .and_then(Value::as_str)
            {
                return text.to_string();
            }
        }
        _ => {}
    }
    shrink_payloads(block).to_string()
}

/// `value` with every string that is a base64 payload larger than [`LARGE_PAYLOAD`] replaced
/// by `"[base64, N bytes]"`, N being the payload's length as sent.
pub fn shrink_payloads(value: &Value) -> Value {
    match value {
        Value::String(s) if s.len() > LARGE_PAYLOAD && is_base64(s) => {
            Value::String(format!("[base64, {} bytes]", s.len()))
        }
        Value::Array(items) => Value::Array(items.iter().map(shrink_payloads).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), shrink_payloads(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether `s` reads as base64 (standard or URL-safe alphabet, padding, line breaks).
fn is_base64(s: &str) -> bool {
    s.bytes().all(|b| {
        b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_' | b'=' | b'\n' | b'\r')
    })
}
