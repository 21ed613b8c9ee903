//! How heavy a JSON text would be once parsed: a parsed value costs tens of bytes per JSON
//! value, so a few megabytes of `[0,0,0,…]` take hundreds of megabytes once parsed (and
//! every copy a report keeps as much again). A text is weighed in one pass before it is
//! parsed, and refused past a bound on its values or its nesting.

/// Why a JSON text is too heavy to parse. Lowercase, one line; the caller names the source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Heavy {
    /// More values (array elements, object members) than the bound.
    #[error("it holds more than {0} JSON values")]
    Values(usize),
    /// Arrays and objects nested deeper than the bound.
    #[error("it nests JSON deeper than {0} levels")]
    Depth(usize),
}

/// Counts the values of a JSON text (array elements and object members, outside strings)
/// and its nesting; refuses it once it holds more than `max_values` or nests deeper than
/// `max_depth`.
pub fn check(text: &[u8], max_values: usize, max_depth: usize) -> Result<(), Heavy> {
    let mut values = 1usize;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for byte in text {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b',' | b'[' | b'{' => {
                values += 1;
                if values > max_values {
                    return Err(Heavy::Values(max_values));
                }
                if *byte != b',' {
                    depth += 1;
                    if depth > max_depth {
                        return Err(Heavy::Depth(max_depth));
                    }
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_depth_are_counted_outside_strings() {
        assert!(check(br#"{"a": [1, 2, {"b": "x,y,[z{"}]}"#, 10, 3).is_ok());
        let many = format!("[{}]", vec!["0"; 101].join(","));
        assert_eq!(check(many.as_bytes(), 100, 10), Err(Heavy::Values(100)));
        assert!(check(many.as_bytes(), 102, 10).is_ok());
        let commas_in_a_string = format!("{{\"s\": \"{}\"}}", ",".repeat(1000));
        assert!(check(commas_in_a_string.as_bytes(), 10, 10).is_ok());
        let escaped_quote = format!("[\"\\\"{}\"]", ",".repeat(1000));
        assert!(check(escaped_quote.as_bytes(), 10, 10).is_ok());
        let deep = format!("{}{}", "[".repeat(11), "]".repeat(11));
        assert_eq!(check(deep.as_bytes(), 100, 10), Err(Heavy::Depth(10)));
        let wide_but_flat = "[[],[],[],[],[],[],[],[],[],[],[],[]]";
        assert!(check(wide_but_flat.as_bytes(), 100, 2).is_ok());
    }
}
