//! How heavy a JSON or TOML text would be once parsed: a parsed value costs tens of bytes
//! (a TOML one, with its spans, about a kilobyte), so a few megabytes of `[0,0,0,…]` take
//! hundreds of megabytes once parsed (and every copy a report keeps as much again). A text is
//! weighed in one pass before it is parsed, and refused past a bound on its values or its
//! nesting: the byte cap on a file does not bound what it expands to.

/// Why a JSON text is too heavy to parse. Lowercase, one line; the caller names the source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Heavy {
    /// More values (array elements, object members) than the bound.
    #[error("it holds more than {0} values")]
    Values(usize),
    /// Arrays and objects nested deeper than the bound.
    #[error("it nests arrays and tables deeper than {0} levels")]
    Depth(usize),
}

/// Counts the values of a JSON text (array elements and object members, outside strings)
/// and its nesting; refuses it once it holds more than `max_values` or nests deeper than
/// `max_depth`.
pub fn check_json(text: &[u8], max_values: usize, max_depth: usize) -> Result<(), Heavy> {
    let mut scale = Scale::new(max_values, max_depth);
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
            _ => scale.weigh(*byte)?,
        }
    }
    Ok(())
}

/// [`check_json`] for a TOML text: values are array elements, inline-table members and
/// `key = value` lines; strings (basic, literal, multi-line) and comments are skipped.
pub fn check_toml(text: &str, max_values: usize, max_depth: usize) -> Result<(), Heavy> {
    let mut scale = Scale::new(max_values, max_depth);
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        let skip_to = |end: &[u8], from: usize| {
            rest[from..]
                .windows(end.len())
                .position(|w| w == end)
                .map_or(bytes.len(), |p| at + from + p + end.len())
        };
        at = match rest[0] {
            b'"' if rest.starts_with(b"\"\"\"") => skip_to(b"\"\"\"", 3),
            b'\'' if rest.starts_with(b"'''") => skip_to(b"'''", 3),
            b'\'' => skip_to(b"'", 1),
            b'#' => skip_to(b"\n", 1),
            b'"' => {
                let mut end = 1;
                while end < rest.len() && rest[end] != b'"' {
                    end += if rest[end] == b'\\' { 2 } else { 1 };
                }
                at + end + 1
            }
            byte => {
                scale.weigh(if byte == b'=' { b',' } else { byte })?;
                at + 1
            }
        };
    }
    Ok(())
}

/// The running count of values and the nesting, outside strings.
struct Scale {
    values: usize,
    depth: usize,
    max_values: usize,
    max_depth: usize,
}

impl Scale {
    fn new(max_values: usize, max_depth: usize) -> Scale {
        Scale {
            values: 1,
            depth: 0,
            max_values,
            max_depth,
        }
    }

    /// One byte outside strings: `,` adds a value, `[` and `{` add a value and a level.
    fn weigh(&mut self, byte: u8) -> Result<(), Heavy> {
        match byte {
            b',' | b'[' | b'{' => {
                self.values += 1;
                if self.values > self.max_values {
                    return Err(Heavy::Values(self.max_values));
                }
                if byte != b',' {
                    self.depth += 1;
                    if self.depth > self.max_depth {
                        return Err(Heavy::Depth(self.max_depth));
                    }
                }
            }
            b']' | b'}' => self.depth = self.depth.saturating_sub(1),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_depth_are_counted_outside_strings() {
        assert!(check_json(br#"{"a": [1, 2, {"b": "x,y,[z{"}]}"#, 10, 3).is_ok());
        let many = format!("[{}]", vec!["0"; 101].join(","));
        assert_eq!(
            check_json(many.as_bytes(), 100, 10),
            Err(Heavy::Values(100))
        );
        assert!(check_json(many.as_bytes(), 102, 10).is_ok());
        let commas_in_a_string = format!("{{\"s\": \"{}\"}}", ",".repeat(1000));
        assert!(check_json(commas_in_a_string.as_bytes(), 10, 10).is_ok());
        let escaped_quote = format!("[\"\\\"{}\"]", ",".repeat(1000));
        assert!(check_json(escaped_quote.as_bytes(), 10, 10).is_ok());
        let deep = format!("{}{}", "[".repeat(11), "]".repeat(11));
        assert_eq!(check_json(deep.as_bytes(), 100, 10), Err(Heavy::Depth(10)));
        let wide_but_flat = "[[],[],[],[],[],[],[],[],[],[],[],[]]";
        assert!(check_json(wide_but_flat.as_bytes(), 100, 2).is_ok());
    }

    #[test]
    fn toml_values_are_counted_outside_strings_and_comments() {
        let text = "a = 1 # , , , [\nb = [1, 2, \"x,[y\\\",\", 'p,[q']\nc = \"\"\"\n, , [\n\"\"\"\n[t]\nd = { e = 1 }\n";
        // The whole, then a=, b=, [ and its 3 commas, c=, [t], d=, { and e=: 12.
        assert!(
            check_toml(text, 12, 2).is_ok(),
            "{:?}",
            check_toml(text, 12, 2)
        );
        assert_eq!(check_toml(text, 11, 2), Err(Heavy::Values(11)));
        let deep = format!("a = {}{}", "[".repeat(5), "]".repeat(5));
        assert_eq!(check_toml(&deep, 100, 4), Err(Heavy::Depth(4)));
        let steps = format!("steps = [{}]", "{ connect = {} },".repeat(1000));
        assert_eq!(check_toml(&steps, 2000, 8), Err(Heavy::Values(2000)));
    }
}
