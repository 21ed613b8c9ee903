//! Reading stdin line by line, with bounded memory and no read-ahead lost on handover.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;

/// A line longer than this is discarded (and reported as [`Line::Discarded`]).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

const CHUNK: usize = 64 * 1024;

/// What one read of a line gives.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line, without its `\n` (a last line without a newline counts too).
    Text(Vec<u8>),
    /// A line over [`MAX_LINE`] bytes was skipped; its length.
    Discarded(usize),
    /// stdin closed (or was closed by `stop_reading`).
    Eof,
}

/// The stdin reader. Its buffer holds what was read but not yet consumed, so a background
/// copy can be handed the rest ([`Input::pending`]).
#[derive(Debug)]
pub struct Input {
    buf: Vec<u8>,
    eof: bool,
    closed: bool,
}

impl Input {
    /// A reader of fd 0 that starts with `pending` bytes already read by a launcher.
    pub fn new(pending: Vec<u8>) -> Self {
        Self {
            buf: pending,
            eof: false,
            closed: false,
        }
    }

    /// Bytes read from stdin but not yet consumed.
    pub fn pending(&self) -> &[u8] {
        &self.buf
    }

    /// Stop reading for good: drop what is buffered and report EOF from now on.
    pub fn close(&mut self) {
        self.closed = true;
        self.buf.clear();
    }

    /// Whether [`Input::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The next line, blocking until it is complete or stdin closes.
    pub fn next_line(&mut self) -> Line {
        if self.closed {
            return Line::Eof;
        }
        let mut scanned = 0;
        let mut discarded = 0;
        loop {
            if let Some(pos) = self.buf[scanned..].iter().position(|b| *b == b'\n') {
                let end = scanned + pos;
                let line: Vec<u8> = self.buf.drain(..=end).take(end).collect();
                return if discarded > 0 {
                    Line::Discarded(discarded + line.len())
                } else {
                    Line::Text(line)
                };
            }
            scanned = self.buf.len();
            if self.buf.len() > MAX_LINE {
                discarded += self.buf.len();
                self.buf.clear();
                scanned = 0;
            }
            if self.eof {
                let rest = std::mem::take(&mut self.buf);
                return match (discarded, rest.is_empty()) {
                    (0, true) => Line::Eof,
                    (0, false) => Line::Text(rest),
                    (n, _) => Line::Discarded(n + rest.len()),
                };
            }
            self.fill();
        }
    }

    fn fill(&mut self) {
        // SAFETY: fd 0 stays open for the life of the process (stop_reading replaces it with
        // /dev/null rather than leaving it closed); ManuallyDrop never closes it.
        let mut stdin = ManuallyDrop::new(unsafe { File::from_raw_fd(0) });
        let start = self.buf.len();
        self.buf.resize(start + CHUNK, 0);
        loop {
            match stdin.read(&mut self.buf[start..]) {
                Ok(n) => {
                    self.buf.truncate(start + n);
                    if n == 0 {
                        self.eof = true;
                    }
                    return;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.buf.truncate(start);
                    self.eof = true;
                    return;
                }
            }
        }
    }
}
