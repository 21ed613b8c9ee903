//! The server's stderr: drained continuously, logged at DEBUG line by line under
//! [`log_targets::STDERR`](crate::log_targets::STDERR), and its last few KB kept for error text.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

/// How many bytes of stderr are kept (the rules ask for 2 KiB to 8 KiB).
pub(crate) const TAIL_BYTES: usize = 4 * 1024;

/// A line longer than this is logged in pieces.
const LOG_LINE_MAX: usize = 4 * 1024;

/// The kept bytes of stderr: the last [`TAIL_BYTES`], or the first with the `StderrHeadKept`
/// breakage. Memory stays bounded whatever the server writes.
#[derive(Debug)]
pub(crate) struct StderrTail {
    bytes: VecDeque<u8>,
    cap: usize,
    keep_head: bool,
    dropped: bool,
}

impl StderrTail {
    /// An empty buffer keeping `cap` bytes: the last ones, or the first with `keep_head`.
    pub(crate) fn new(cap: usize, keep_head: bool) -> Self {
        StderrTail {
            bytes: VecDeque::with_capacity(cap),
            cap,
            keep_head,
            dropped: false,
        }
    }

    /// Adds what the server wrote.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        if self.keep_head {
            let room = self.cap.saturating_sub(self.bytes.len());
            self.bytes.extend(&chunk[..room.min(chunk.len())]);
            return;
        }
        let chunk = &chunk[chunk.len().saturating_sub(self.cap)..];
        let excess = (self.bytes.len() + chunk.len()).saturating_sub(self.cap);
        if excess > 0 {
            self.bytes.drain(..excess);
            self.dropped = true;
        }
        if chunk.len() == self.cap {
            self.dropped = true;
        }
        self.bytes.extend(chunk);
    }

    /// How many bytes are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The kept text, lossy UTF-8, trimmed; a character cut at the front is left out.
    pub(crate) fn text(&self) -> String {
        let (a, b) = self.bytes.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        let start = if self.dropped {
            bytes
                .iter()
                .take(3)
                .take_while(|b| (**b & 0xC0) == 0x80)
                .count()
        } else {
            0
        };
        String::from_utf8_lossy(&bytes[start..]).trim().to_string()
    }
}

/// Reads `stderr` to its end: each chunk goes into `tail`, each line is logged at DEBUG. Sets
/// `done` at the end (EOF or a read error).
pub(crate) async fn drain<R>(
    mut stderr: R,
    command: String,
    tail: Arc<Mutex<StderrTail>>,
    done: watch::Sender<bool>,
) where
    R: AsyncRead + Unpin,
{
    let mut chunk = vec![0u8; 8 * 1024];
    let mut line: Vec<u8> = Vec::new();
    loop {
        let n = match stderr.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let data = &chunk[..n];
        if let Ok(mut tail) = tail.lock() {
            tail.push(data);
        }
        for piece in data.split_inclusive(|b| *b == b'\n') {
            let ends = piece.last() == Some(&b'\n');
            line.extend_from_slice(piece);
            if ends || line.len() >= LOG_LINE_MAX {
                log_line(&command, &line);
                line.clear();
            }
        }
    }
    if !line.is_empty() {
        log_line(&command, &line);
    }
    done.send_replace(true);
}

fn log_line(command: &str, line: &[u8]) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches(['\n', '\r']);
    tracing::debug!(target: "mcp_refclient::stderr", server = %command, "{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_size_is_within_the_rules_bounds() {
        const { assert!(TAIL_BYTES >= 2 * 1024 && TAIL_BYTES <= 8 * 1024) };
    }

    #[test]
    fn a_flood_keeps_only_the_last_bytes_and_the_last_line() {
        let mut tail = StderrTail::new(TAIL_BYTES, false);
        let filler = vec![b'x'; 1000];
        for i in 0..50_000 {
            tail.push(&filler);
            if i == 0 {
                tail.push(b"\nfirst line\n");
            }
            assert!(tail.len() <= TAIL_BYTES);
        }
        tail.push(b"\nfatal: the last line\n");
        assert_eq!(tail.len(), TAIL_BYTES);
        let text = tail.text();
        assert!(text.ends_with("fatal: the last line"));
        assert!(!text.contains("first line"));
    }

    #[test]
    fn a_chunk_larger_than_the_buffer_keeps_its_end() {
        let mut tail = StderrTail::new(8, false);
        tail.push(b"0123456789abcdef");
        assert_eq!(tail.text(), "89abcdef");
    }

    #[test]
    fn the_head_breakage_keeps_the_first_bytes() {
        let mut tail = StderrTail::new(TAIL_BYTES, true);
        tail.push(b"first line\n");
        for _ in 0..100 {
            tail.push(&[b'y'; 1000]);
        }
        tail.push(b"\nlast line\n");
        assert_eq!(tail.len(), TAIL_BYTES);
        assert!(tail.text().starts_with("first line"));
        assert!(!tail.text().contains("last line"));
    }

    #[test]
    fn invalid_utf8_and_a_cut_character_are_tolerated() {
        let mut tail = StderrTail::new(4, false);
        tail.push("aé€".as_bytes()); // 1 + 2 + 3 bytes: the cut leaves the tail of 'é'
        assert_eq!(tail.text(), "€");
        let mut raw = StderrTail::new(64, false);
        raw.push(b"bad \xff byte\n");
        assert_eq!(raw.text(), "bad \u{fffd} byte");
    }

    #[tokio::test]
    async fn drain_reads_to_the_end_and_signals_done() {
        let input: &[u8] = b"one\ntwo\n\xffthree";
        let tail = Arc::new(Mutex::new(StderrTail::new(TAIL_BYTES, false)));
        let (done, mut done_rx) = watch::channel(false);
        drain(input, "srv".into(), tail.clone(), done).await;
        assert!(*done_rx.borrow_and_update());
        assert_eq!(tail.lock().unwrap().text(), "one\ntwo\n\u{fffd}three");
    }
}
