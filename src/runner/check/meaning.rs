//! What a text says, whatever its words: the numbers it names and the durations it names.
//! A portable check asserts these, so no client is failed for spelling `1.05s` where
//! another spells `1050ms`.

/// The numbers `text` names, each a run of digits standing alone: a leading `-` belongs to
/// it, and a run inside a decimal (`1.3`), an address (`127.0.0.1`) or next to a letter
/// (`x3`) is no number of its own. A port after `:` counts as the number it is.
pub fn numbers(text: &str) -> Vec<i64> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let before = start.checked_sub(1).map(|b| bytes[b]);
        let after = bytes.get(i).copied();
        let joined = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_');
        let dotted_before = before == Some(b'.') && start >= 2 && bytes[start - 2].is_ascii_digit();
        let dotted_after = after == Some(b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        if joined(before) || joined(after) || dotted_before || dotted_after {
            continue;
        }
        let negative =
            before == Some(b'-') && !(start >= 2 && bytes[start - 2].is_ascii_alphanumeric());
        if let Ok(value) = text[start..i].parse::<i64>() {
            found.push(if negative { -value } else { value });
        }
    }
    found
}

/// The durations `text` names, in milliseconds: a number (with or without a fraction)
/// followed, with or without a space, by `ms`, `s` or their spelled-out forms.
pub fn durations_ms(text: &str) -> Vec<f64> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_number = bytes[i].is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.'));
        if !starts_number {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
            i += 1;
        }
        let Ok(value) = text[start..i].trim_end_matches('.').parse::<f64>() else {
            continue;
        };
        let rest = text[i..].strip_prefix(' ').unwrap_or(&text[i..]);
        let unit: String = rest
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect::<String>()
            .to_ascii_lowercase();
        let scale = match unit.as_str() {
            "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => 1.0,
            "s" | "sec" | "secs" | "second" | "seconds" => 1000.0,
            _ => continue,
        };
        found.push(value * scale);
    }
    found
}

/// Whether `text` names `wanted` milliseconds (to within half a millisecond).
pub fn names_duration(text: &str, wanted_ms: u64) -> bool {
    durations_ms(text)
        .iter()
        .any(|ms| (ms - wanted_ms as f64).abs() < 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_is_found_alone_and_never_inside_another() {
        assert_eq!(numbers("exited with exit status: 3; last stderr"), [3]);
        assert_eq!(numbers("returncode=3"), [3]);
        assert_eq!(numbers("code -32602: bad"), [-32602]);
        assert!(!numbers("status 30").contains(&3));
        assert!(!numbers("after 1.3s").contains(&3));
        assert!(!numbers("http://127.0.0.1:40003/mcp").contains(&3));
        assert!(!numbers("tool x3").contains(&3));
        assert_eq!(numbers("HTTP 401 Unauthorized"), [401]);
    }

    #[test]
    fn a_duration_is_read_as_a_value_in_any_spelling() {
        for text in [
            "timed out after 150ms",
            "Timeout after 150 ms",
            "no data for 0.15s",
            "took 0.150 seconds",
        ] {
            assert!(names_duration(text, 150), "{text}");
        }
        assert!(names_duration("timed out after 1.05s", 1050));
        assert!(names_duration("timed out after 1050ms", 1050));
        assert!(!names_duration("timed out after 1.1s", 1050));
        assert!(!names_duration("timed out after 150", 150));
        assert!(!names_duration("150 messages", 150));
        assert!(!names_duration("v1.5s", 1500));
    }
}
