//! The stderr flood: about `bytes` bytes of 100-byte lines, written in large chunks.

use crate::script::StderrFlood;

/// The length of one flood line, newline included.
pub const LINE_BYTES: usize = 100;

const CHUNK_LINES: usize = 10_000;

/// Bytes that are not valid UTF-8, put in every line when `invalid_utf8` is set.
pub const INVALID_UTF8: &[u8] = &[0xff, 0xfe, 0xc3, 0x28];

/// One flood line of exactly [`LINE_BYTES`] bytes.
pub fn flood_line(invalid_utf8: bool) -> Vec<u8> {
    let mut line = b"mcp-mock-stdio stderr flood ".to_vec();
    if invalid_utf8 {
        line.extend_from_slice(INVALID_UTF8);
        line.push(b' ');
    }
    line.resize(LINE_BYTES - 1, b'.');
    line.push(b'\n');
    line
}

/// Writes the flood through `write` (which returns false to stop, e.g. on a closed pipe),
/// in chunks of about 1 MB. Returns the first bytes written (for the log summary) and the
/// total length.
pub fn write_flood(flood: &StderrFlood, mut write: impl FnMut(&[u8]) -> bool) -> (Vec<u8>, usize) {
    let mut head = Vec::new();
    let mut total = 0;
    let mut emit = |bytes: &[u8], head: &mut Vec<u8>| {
        if head.len() < 1024 {
            head.extend_from_slice(&bytes[..bytes.len().min(1024)]);
        }
        total += bytes.len();
        write(bytes)
    };
    if let Some(first) = &flood.first_line {
        if !emit(format!("{first}\n").as_bytes(), &mut head) {
            return (head, total);
        }
    }
    let line = flood_line(flood.invalid_utf8);
    let chunk = line.repeat(CHUNK_LINES);
    let mut left = flood.bytes;
    while left > 0 {
        let n = left.min(chunk.len());
        let ok = if n % LINE_BYTES == 0 || n == chunk.len() {
            emit(&chunk[..n], &mut head)
        } else {
            // The last, shorter line still ends with a newline.
            let mut tail = chunk[..n - 1].to_vec();
            tail.push(b'\n');
            emit(&tail, &mut head)
        };
        if !ok {
            return (head, total);
        }
        left -= n;
    }
    if let Some(last) = &flood.last_line {
        emit(format!("{last}\n").as_bytes(), &mut head);
    }
    (head, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flood_has_the_size_asked_and_its_framing_lines() {
        let flood = StderrFlood {
            bytes: 2_500_050,
            invalid_utf8: true,
            first_line: Some("FIRST".into()),
            last_line: Some("LAST".into()),
        };
        let mut all = Vec::new();
        let (_, total) = write_flood(&flood, |b| {
            all.extend_from_slice(b);
            true
        });
        assert_eq!(total, all.len());
        assert_eq!(all.len(), 2_500_050 + 6 + 5);
        assert!(all.starts_with(b"FIRST\n"));
        assert!(all.ends_with(b"\nLAST\n"));
        assert!(std::str::from_utf8(&all).is_err());
        assert!(all.windows(4).any(|w| w == INVALID_UTF8));
    }
}
