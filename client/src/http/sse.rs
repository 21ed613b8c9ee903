//! An incremental `text/event-stream` parser (the SSE spec's rules): lines end in CR, LF or
//! CRLF; an event's `data:` lines are joined with `\n`; a blank line ends the event; lines
//! starting with `:` are comments. One event is bounded in size.

use std::collections::VecDeque;

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    /// The `event:` field, `message` when none was given.
    pub(crate) kind: String,
    /// The `data:` lines joined with `\n`.
    pub(crate) data: Vec<u8>,
}

/// An event grew past the bound.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLong(pub(crate) usize);

/// Feeds bytes in as they come, takes whole events out.
pub(crate) struct SseParser {
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    kind: Option<String>,
    /// The last byte fed was a CR: an LF right after it ends nothing.
    after_cr: bool,
    /// Nothing fed yet: a leading BOM is skipped.
    at_start: bool,
    /// Bytes fed since the last dispatched event (or start).
    pending: usize,
    max: usize,
    /// A CR ends a line (false under the test switch `SseCrKept`).
    cr_ends_line: bool,
    /// The test switch `LastEventIdReplayed`: the last `id:` field, kept (`None` otherwise).
    pub(crate) last_id: Option<Option<String>>,
    /// Events parsed and not yet taken.
    ready: VecDeque<Event>,
}

impl SseParser {
    /// A parser keeping events up to `max` bytes.
    pub(crate) fn new(max: usize) -> Self {
        SseParser {
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            kind: None,
            after_cr: false,
            at_start: true,
            pending: 0,
            max,
            cr_ends_line: true,
            last_id: None,
            ready: VecDeque::new(),
        }
    }

    /// The test switch `SseCrKept`: lines end at LF only.
    pub(crate) fn cr_kept(mut self) -> Self {
        self.cr_ends_line = false;
        self
    }

    /// The test switch `LastEventIdReplayed`: `id:` fields are kept.
    pub(crate) fn ids_kept(mut self) -> Self {
        self.last_id = Some(None);
        self
    }

    /// Parses `chunk`; the events it completes are queued for [`SseParser::next_event`].
    pub(crate) fn feed(&mut self, mut chunk: &[u8]) -> Result<(), TooLong> {
        if self.at_start && !chunk.is_empty() {
            self.at_start = false;
            if let Some(rest) = chunk.strip_prefix("\u{feff}".as_bytes()) {
                chunk = rest;
            }
        }
        for &byte in chunk {
            if self.after_cr {
                self.after_cr = false;
                if byte == b'\n' {
                    continue;
                }
            }
            match byte {
                b'\r' if self.cr_ends_line => {
                    self.after_cr = true;
                    self.end_line();
                }
                b'\n' => self.end_line(),
                _ => {
                    self.pending += 1;
                    if self.pending > self.max {
                        return Err(TooLong(self.pending));
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(())
    }

    /// The next whole event, if one is ready.
    pub(crate) fn next_event(&mut self) -> Option<Event> {
        self.ready.pop_front()
    }

    /// Whether the stream ended inside an event (bytes after the last blank line), which the
    /// SSE spec discards.
    pub(crate) fn unterminated(&self) -> bool {
        !self.line.is_empty() || self.has_data || self.kind.is_some()
    }

    fn end_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            if self.has_data {
                let kind = self.kind.take().unwrap_or_else(|| "message".into());
                self.ready.push_back(Event {
                    kind,
                    data: std::mem::take(&mut self.data),
                });
            }
            self.has_data = false;
            self.kind = None;
            self.pending = 0;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => self.kind = Some(String::from_utf8_lossy(value).into_owned()),
            b"id" if self.last_id.is_some() => {
                self.last_id = Some(Some(String::from_utf8_lossy(value).into_owned()));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pieces: &[&[u8]]) -> (Vec<Event>, bool) {
        let mut parser = SseParser::new(1024);
        let mut events = Vec::new();
        for piece in pieces {
            parser.feed(piece).unwrap();
            while let Some(e) = parser.next_event() {
                events.push(e);
            }
        }
        (events, parser.unterminated())
    }

    fn data(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| String::from_utf8(e.data.clone()).unwrap())
            .collect()
    }

    #[test]
    fn every_line_end_works_even_split() {
        for input in [
            &b"data: a\n\ndata: b\n\n"[..],
            b"data: a\r\n\r\ndata: b\r\n\r\n",
            b"data: a\r\rdata: b\r\r",
        ] {
            let pieces: Vec<&[u8]> = input.chunks(1).collect();
            let (events, open) = parse(&pieces);
            assert_eq!(data(&events), ["a", "b"], "{input:?}");
            assert!(!open);
        }
    }

    #[test]
    fn data_lines_join_with_newline_and_comments_are_ignored() {
        let (events, _) = parse(&[b": hi\nevent: note\ndata: {\"a\":\ndata:1}\nid: 4\n\n"]);
        assert_eq!(data(&events), ["{\"a\":\n1}"]);
        assert_eq!(events[0].kind, "note");
    }

    #[test]
    fn an_event_without_data_is_not_dispatched_and_a_trailing_one_is_unterminated() {
        let (events, open) = parse(&[b"event: x\n\ndata: y"]);
        assert!(events.is_empty());
        assert!(open);
    }

    #[test]
    fn an_endless_line_is_refused() {
        let mut parser = SseParser::new(10);
        assert_eq!(parser.feed(b"data: 0123456789"), Err(TooLong(11)));
    }

    #[test]
    fn a_leading_bom_is_skipped() {
        let (events, _) = parse(&["\u{feff}data: x\n\n".as_bytes()]);
        assert_eq!(data(&events), ["x"]);
    }
}
