//! Text cut to a size in bytes, on a character boundary: what a log keeps of a line, what a
//! report quotes of a body.

/// The start of `text`, at most `max` bytes, on a character boundary.
pub fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` cut to at most `max` bytes, on a character boundary, marking the cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    format!("{}… ({} bytes in all)", prefix(text, max), text.len())
}

/// `text` cut to at most `max` characters, marking the cut: what a report shows of a message
/// a person reads, where a count of characters is what the eye sees.
pub fn cut_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_cut_stays_on_a_character_boundary_and_says_the_size() {
        assert_eq!(cut("héllo", 2), "h… (6 bytes in all)");
        assert_eq!(cut("hello", 5), "hello");
    }

    #[test]
    fn a_character_cut_counts_characters_not_bytes() {
        assert_eq!(cut_chars("héllo", 2), "hé…");
        assert_eq!(cut_chars("héllo", 5), "héllo");
    }
}
