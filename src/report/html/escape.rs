//! HTML escaping, the one place every text of the report goes through: the five characters
//! HTML gives meaning to become entities, and control characters (a server's NUL, an ANSI
//! escape, a bidi override) are shown as `\u{1b}` rather than written raw.

/// `text` safe as an element's content or a quoted attribute's value.
pub fn text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if shown_as_code(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Control characters, and the invisible ones that reorder what follows them.
fn shown_as_code(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::text;

    #[test]
    fn markup_and_quotes_become_entities() {
        assert_eq!(
            text(r#"<a href="x" title='y'>&</a>"#),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
        );
    }

    #[test]
    fn control_characters_are_shown_not_written() {
        assert_eq!(
            text("a\u{1b}[31mb\u{0}c\r\n\u{7f}\u{202e}d\te"),
            "a\\u{1b}[31mb\\u{0}c\\u{d}\n\\u{7f}\\u{202e}d\te"
        );
    }
}
