//! The stdout reader: newline-delimited messages, each line bounded, dispatched as they come
//! (strict, kova) or only while a call is in progress (yoagent).

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use super::Shared;
use crate::jsonrpc::{answer_server_request, classify_owned, Incoming, RawResult, Sorted};
use crate::Breakage;

/// The longest line kept: past it the line is discarded as a protocol violation.
pub(crate) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The read buffer: a read takes what the pipe holds up to this (a pipe holds 64 KiB by
/// default); a longer line is read in several. Its pages are zeroed, so resident: kept small.
const READ_BUFFER_BYTES: usize = 16_384; // 16 KiB

/// How much of a non-JSON line is remembered for the close error.
const REMEMBERED_CHARS: usize = 200;

/// What reading the next line gave.
#[derive(Debug)]
pub(crate) enum LineEvent {
    /// One line, without its `\n` (and a `\r` before it).
    Line(Vec<u8>),
    /// A line longer than the bound, discarded; its length.
    TooLong(usize),
    /// The end of the output, or a read error.
    End(Option<io::Error>),
}

/// Reads newline-delimited lines, never holding more than `max` bytes of one line.
pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    ended: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader of `input` keeping lines up to `max` bytes.
    pub(crate) fn new(input: R, max: usize) -> Self {
        LineReader {
            inner: BufReader::with_capacity(READ_BUFFER_BYTES, input),
            max,
            ended: false,
        }
    }

    /// The next line; a message split across several writes comes back whole.
    pub(crate) async fn next(&mut self) -> LineEvent {
        let mut line = Vec::new();
        let mut discarded = 0usize;
        loop {
            if self.ended {
                return LineEvent::End(None);
            }
            let buf = match self.inner.fill_buf().await {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.ended = true;
                    return LineEvent::End(Some(e));
                }
            };
            if buf.is_empty() {
                self.ended = true;
                if discarded > 0 {
                    return LineEvent::TooLong(discarded);
                }
                if !line.is_empty() {
                    return LineEvent::Line(finish(line));
                }
                return LineEvent::End(None);
            }
            let (piece, used, complete) = match buf.iter().position(|b| *b == b'\n') {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            if discarded > 0 {
                discarded += piece.len();
            } else if line.len() + piece.len() > self.max {
                discarded = line.len() + piece.len();
                line = Vec::new();
            } else {
                line.extend_from_slice(piece);
            }
            self.inner.consume(used);
            if complete {
                if discarded > 0 {
                    return LineEvent::TooLong(discarded);
                }
                return LineEvent::Line(finish(line));
            }
        }
    }
}

fn finish(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

/// Cuts a non-JSON line to a readable length for error text.
pub(crate) fn cut(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    match text.char_indices().nth(REMEMBERED_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Reads the server's stdout until it ends, dispatching each message.
pub(crate) async fn run<R: AsyncRead + Unpin>(shared: Arc<Shared>, stdout: R) {
    let mut lines = LineReader::new(stdout, MAX_LINE_BYTES);
    let gated =
        shared.profile.reads_only_during_calls() && !shared.broken(Breakage::ReadsBetweenCalls);
    let mut awaiting = shared.awaiting.subscribe();
    loop {
        if gated {
            // yoagent: the next line is read only while a call is in progress.
            let _ = awaiting.wait_for(|busy| *busy).await;
        }
        let event = lines.next().await;
        let line = match event {
            LineEvent::End(cause) => {
                if let Some(cause) = &cause {
                    tracing::debug!(target: "mcp_refclient", server = %shared.command, "reading stdout failed: {cause}");
                }
                shared.output_closed().await;
                return;
            }
            LineEvent::TooLong(len) => {
                tracing::warn!(
                    target: "mcp_refclient",
                    server = %shared.command,
                    "discarded a stdout line of {len} bytes (over {MAX_LINE_BYTES}): protocol violation"
                );
                continue;
            }
            LineEvent::Line(line) => line,
        };
        shared
            .lines_read
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if gated {
            // A line read as a call ended waits for the next call, as if read then.
            let _ = awaiting.wait_for(|busy| *busy).await;
        }
        dispatch(&shared, line).await;
    }
}

async fn dispatch(shared: &Shared, line: Vec<u8>) {
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    // A response keeps its line: the caller reads the result into what it needs.
    let (incoming, line) = match classify_owned(line) {
        Sorted::Response { id, outcome } => return shared.deliver(id, outcome),
        Sorted::Other { incoming, line } => (incoming, line),
    };
    match incoming {
        Incoming::Response { id, outcome } => shared.deliver(id, outcome.map(RawResult::Value)),
        Incoming::Request { id, method, .. } => {
            if method != "ping" {
                tracing::warn!(
                    target: "mcp_refclient",
                    server = %shared.command,
                    "declined server request '{method}': method not found"
                );
            }
            if let Some(answer) = answer_server_request(id, &method, |rule| shared.broken(rule)) {
                shared.answer(&answer).await;
            }
        }
        Incoming::Notification { method, .. } => {
            if method == "notifications/tools/list_changed"
                && !shared.broken(Breakage::NoListChangedCount)
            {
                shared.count_list_changed();
            } else if shared.broken(Breakage::NotificationFailsCall) {
                shared.fail_oldest(crate::McpError::Protocol(format!(
                    "expected a response, got notification '{method}'"
                )));
            } else {
                tracing::debug!(target: "mcp_refclient", "skipped notification '{method}'");
            }
        }
        Incoming::NotJson(_) => {
            let text = cut(&line);
            tracing::warn!(target: "mcp_refclient", server = %shared.command, "skipped a stdout line that is not JSON: {text}");
            shared.not_json(text);
        }
        Incoming::Invalid(why) => {
            tracing::warn!(target: "mcp_refclient", server = %shared.command, "skipped an invalid JSON-RPC message: {why}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn a_message_split_across_writes_is_reassembled() {
        let (mut tx, rx) = tokio::io::duplex(8);
        let writer = tokio::spawn(async move {
            for piece in [
                &b"{\"jsonrpc\":"[..],
                b"\"2.0\",\"id\":1,",
                b"\"result\":{}}\r\n",
                b"second\n",
                b"tail",
            ] {
                tx.write_all(piece).await.unwrap();
                tx.flush().await.unwrap();
            }
        });
        let mut lines = LineReader::new(rx, 1024);
        let first = lines.next().await;
        assert!(
            matches!(&first, LineEvent::Line(l) if l == br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            "{first:?}"
        );
        assert!(matches!(lines.next().await, LineEvent::Line(l) if l == b"second"));
        assert!(matches!(lines.next().await, LineEvent::Line(l) if l == b"tail"));
        assert!(matches!(lines.next().await, LineEvent::End(None)));
        assert!(matches!(lines.next().await, LineEvent::End(None)));
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn an_overlong_line_is_discarded_and_the_next_one_read() {
        let mut input = vec![b'x'; 100];
        input.extend_from_slice(b"\nok\n");
        let mut lines = LineReader::new(&input[..], 10);
        assert!(matches!(lines.next().await, LineEvent::TooLong(100)));
        assert!(matches!(lines.next().await, LineEvent::Line(l) if l == b"ok"));
        assert!(matches!(lines.next().await, LineEvent::End(None)));
    }

    /// Gives each read the next of `reads` (data, or an error of that kind), then end of input.
    struct Scripted(std::collections::VecDeque<Result<&'static [u8], io::ErrorKind>>);

    impl AsyncRead for Scripted {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<io::Result<()>> {
            std::task::Poll::Ready(match self.0.pop_front() {
                Some(Ok(data)) => {
                    buf.put_slice(data);
                    Ok(())
                }
                Some(Err(kind)) => Err(kind.into()),
                None => Ok(()),
            })
        }
    }

    // A pipe read on Unix does not give EINTR to a non-blocking reader, so no server can show
    // these two: a read interrupted is retried, any other read error ends the output.
    #[tokio::test]
    async fn an_interrupted_read_is_retried() {
        let input = Scripted([Err(io::ErrorKind::Interrupted), Ok(&b"ok\n"[..])].into());
        let mut lines = LineReader::new(input, 1024);
        let first = lines.next().await;
        assert!(
            matches!(&first, LineEvent::Line(l) if l == b"ok"),
            "{first:?}"
        );
        assert!(matches!(lines.next().await, LineEvent::End(None)));
    }

    #[tokio::test]
    async fn a_failed_read_ends_the_output() {
        let input = Scripted([Err(io::ErrorKind::BrokenPipe), Ok(&b"late\n"[..])].into());
        let mut lines = LineReader::new(input, 1024);
        let first = lines.next().await;
        assert!(
            matches!(&first, LineEvent::End(Some(e)) if e.kind() == io::ErrorKind::BrokenPipe),
            "{first:?}"
        );
        assert!(matches!(lines.next().await, LineEvent::End(None)));
    }

    #[test]
    fn a_remembered_line_is_cut_to_a_readable_length() {
        assert_eq!(cut(b"  Starting server \n"), "Starting server");
        let long = "é".repeat(500);
        let text = cut(long.as_bytes());
        assert_eq!(text.chars().count(), REMEMBERED_CHARS + 1);
        assert!(text.ends_with('…'));
    }
}
