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

/// One SSE event's fields as sent (the block of lines up to a blank line, or up to the end
/// of what was read): what the resumability checks look at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Event {
    /// The `id` field's value (the last one in the block), if there is one.
    pub id: Option<String>,
    /// The `data` lines joined with newlines; `None` when the block has no `data` field.
    pub data: Option<String>,
    /// Whether the block has a `retry` field with a number of milliseconds.
    pub retry: bool,
}

/// The events of an SSE body read (or of its kept start), in order; comment-only blocks are
/// left out.
pub fn events(body: &[u8]) -> Vec<Event> {
    let text = String::from_utf8_lossy(body);
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = Vec::new();
    let mut event: Option<Event> = None;
    for line in text.split('\n') {
        if line.is_empty() {
            out.extend(event.take());
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        let current = event.get_or_insert_with(Event::default);
        match field {
            "id" => current.id = Some(value.to_string()),
            "data" => match &mut current.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => current.data = Some(value.to_string()),
            },
            "retry" => {
                current.retry |= !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
            }
            _ => {}
        }
    }
    out.extend(event);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_keep_ids_empty_data_and_retry_in_order() {
        let body = b"id: a1\ndata:\n\n: comment\n\nid: a2\r\ndata: {\"x\":\r\ndata: 1}\r\n\r\nretry: 500\nid: a3";
        let got = events(body);
        assert_eq!(
            got,
            [
                Event {
                    id: Some("a1".into()),
                    data: Some(String::new()),
                    retry: false
                },
                Event {
                    id: Some("a2".into()),
                    data: Some("{\"x\":\n1}".into()),
                    retry: false
                },
                Event {
                    id: Some("a3".into()),
                    data: None,
                    retry: true
                },
            ]
        );
        assert!(!events(b"retry: soon\n\n")[0].retry);
    }

    #[test]
    fn sse_events_join_data_lines_across_chunks_and_line_endings() {
        let mut parser = SseParser::default();
        let mut events = parser.push(b"id: 1\ndata: \n\nevent: message\r\ndata: {\"a\":\r");
        events.extend(parser.push(b"\ndata: 1}\r\n\r\n: comment\rdata:x\r\r\n"));
        assert_eq!(events, ["", "{\"a\":\n1}", "x"]);
    }
}
