//! What reaches a terminal: text from servers and files with its control characters made
//! visible (a server cannot move the cursor, rewrite a line or forge a summary), and writes
//! to stdout/stderr that report a failure (a full disk, a closed pipe) instead of panicking.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a character is shown escaped: C0 and C1 controls, DEL, and the invisible
/// direction and format marks that reorder what a line appears to say.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// `c` as text that shows it: `\n`, `\r`, `\t`, `\x1b`, `\u{202e}`.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if u32::from(c) < 0x100 => out.push_str(&format!("\\x{:02x}", u32::from(c))),
        c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
    }
}

/// One line of text for a terminal: every control character escaped, newlines included.
pub fn line(text: &str) -> String {
    if !text.chars().any(hidden) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// Text of several lines for a terminal: newlines kept, every other control escaped.
pub fn lines(text: &str) -> String {
    text.split('\n').map(line).collect::<Vec<_>>().join("\n")
}

/// Set when a write to stderr failed (the exit code then says so).
static STDERR_FAILED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stdout, escaped as [`lines`]; the error names stdout and the cause.
pub fn print(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    out.write_all(lines(text).as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to stdout: {e}"))
}

/// Writes one line to stderr, escaped as [`line`]; a failure is remembered for
/// [`stderr_failed`] (there is nowhere left to report it).
pub fn eprint(text: &str) {
    let mut err = std::io::stderr().lock();
    let mut bytes = line(text).into_bytes();
    bytes.push(b'\n');
    if err.write_all(&bytes).and_then(|()| err.flush()).is_err() {
        STDERR_FAILED.store(true, Ordering::Relaxed);
    }
}

/// Whether a write to stderr failed during this run.
pub fn stderr_failed() -> bool {
    STDERR_FAILED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(line("ok"), "ok");
        assert_eq!(
            line("a\x1b]0;x\x07b\r\n12 passed"),
            "a\\x1b]0;x\\x07b\\r\\n12 passed"
        );
        assert_eq!(
            line("\u{9b}2J \u{202e}abc \u{7f}"),
            "\\x9b2J \\u{202e}abc \\x7f"
        );
        assert_eq!(lines("one\ntwo\x1b[2K"), "one\ntwo\\x1b[2K");
        assert_eq!(line("é ü ✓"), "é ü ✓");
    }
}
