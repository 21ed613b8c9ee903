//! How heavy a JSON text would be once parsed: a parsed value costs tens of bytes per JSON
//! value, so a few megabytes of `[0,0,0,…]` would take hundreds of megabytes (and every copy
//! a report keeps as much again). Texts with more values than [`MAX_VALUES`] are refused
//! before parsing, with that reason.

/// The most JSON values a message may hold to be parsed and judged.
pub const MAX_VALUES: usize = 50_000;

/// Counts the values of a JSON text (array elements and object members, outside strings) in
/// one pass ([`mcp_mock_servers::weight::check_json`], which weighs scripts the same way);
/// refuses the text once it holds more than [`MAX_VALUES`]. Nesting is not bounded here: the
/// parser's own recursion limit refuses a text nested too deep.
pub fn check(text: &[u8]) -> Result<(), String> {
    mcp_mock_servers::weight::check_json(text, MAX_VALUES, usize::MAX)
        .map_err(|_| format!("more than {MAX_VALUES} JSON values, too many to judge"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings() {
        assert!(check(br#"{"a": [1, 2, {"b": "x,y,[z{"}]}"#).is_ok());
        let many = format!("[{}]", vec!["0"; MAX_VALUES + 1].join(","));
        assert!(check(many.as_bytes())
            .unwrap_err()
            .contains("more than 50000 JSON values"));
        let commas_in_a_string = format!("{{\"s\": \"{}\"}}", ",".repeat(MAX_VALUES * 2));
        assert!(check(commas_in_a_string.as_bytes()).is_ok());
        let escaped_quote = format!("[\"\\\"{}\"]", ",".repeat(MAX_VALUES * 2));
        assert!(check(escaped_quote.as_bytes()).is_ok());
    }
}
