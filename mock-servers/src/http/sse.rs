//! SSE frames as the mock writes them.

use serde_json::Value;

use crate::script::LineEnd;

/// A frame carrying `message`: an optional `event:` line, the JSON on one `data:` line (or,
/// `multiline`, pretty-printed over several), then a blank line; every line ends with
/// `line_end`.
pub fn frame(message: &Value, event: Option<&str>, line_end: LineEnd, multiline: bool) -> String {
    let json = match multiline {
        true => serde_json::to_string_pretty(message),
        false => serde_json::to_string(message),
    }
    .unwrap_or_default();
    field_frame(event, &json, line_end)
}

/// A frame with an optional `event:` line and `data` split on its newlines into `data:` lines.
pub fn field_frame(event: Option<&str>, data: &str, line_end: LineEnd) -> String {
    let end = line_end.text();
    let mut out = String::new();
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push_str(end);
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push_str(end);
    }
    out.push_str(end);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_data_lines_then_a_blank_line() {
        let message = serde_json::json!({"a": [1]});
        assert_eq!(
            frame(&message, None, LineEnd::Lf, false),
            "data: {\"a\":[1]}\n\n"
        );
        assert_eq!(
            frame(&message, Some("message"), LineEnd::Crlf, true),
            "event: message\r\ndata: {\r\ndata:   \"a\": [\r\ndata:     1\r\ndata:   ]\r\ndata: }\r\n\r\n"
        );
    }
}
