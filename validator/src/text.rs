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
