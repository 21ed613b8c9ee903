//! Server-sent events, parsed as they come.

/// An SSE parser (the HTML living standard's rules): lines end in CRLF, LF or CR; `data`
/// lines of one event are joined with `\n`; a blank line ends an event.
#[derive(Default)]
pub(super) struct SseParser {
    buf: Vec<u8>,
    /// How much of `buf` is known to hold no line end (a long line is not scanned again).
    scanned: usize,
    data: Option<String>,
}

impl SseParser {
    /// Feeds bytes; returns the data of each event they complete. Linear in what it is fed:
    /// one scan of each byte, one move of what is left over.
    pub(super) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buf.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        loop {
            let from = self.scanned.max(start);
            let Some(offset) = self.buf[from..]
                .iter()
                .position(|b| *b == b'\n' || *b == b'\r')
            else {
                self.scanned = self.buf.len();
                break;
            };
            let end = from + offset;
            if self.buf[end] == b'\r' && end + 1 == self.buf.len() {
                self.scanned = end; // a CR whose LF may be in the next chunk
                break;
            }
            let line = String::from_utf8_lossy(&self.buf[start..end]).into_owned();
            let width = if self.buf[end] == b'\r' && self.buf.get(end + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
            start = end + width;
            if line.is_empty() {
                events.extend(self.data.take());
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line.as_str(), ""),
            };
            if field == "data" {
                match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_string()),
                }
            }
        }
        self.buf.drain(..start);
        self.scanned = self.scanned.saturating_sub(start);
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_join_data_lines_across_chunks_and_line_endings() {
        let mut parser = SseParser::default();
        let mut events = parser.push(b"id: 1\ndata: \n\nevent: message\r\ndata: {\"a\":\r");
        events.extend(parser.push(b"\ndata: 1}\r\n\r\n: comment\rdata:x\r\r\n"));
        assert_eq!(events, ["", "{\"a\":\n1}", "x"]);
    }
}
