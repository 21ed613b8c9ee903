//! The wire log: what a scripted server saw and did, one JSON object per line, in order.
//!
//! Every process of one scripted server (a launcher and what it backgrounded, every
//! relaunch) appends to the same file, one `write` per record.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::WireLogError;

/// One record of the wire log.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum Record {
    /// A process of the server started.
    Started {
        /// Its pid.
        pid: u32,
        /// Its process group.
        pgid: u32,
        /// Which launch of the scenario this is (1 for the first).
        launch: u32,
    },
    /// The server started a descendant process.
    Spawned {
        /// The descendant's pid.
        pid: u32,
        /// The pid of the server process that started it.
        parent: u32,
    },
    /// A message received from the client (a line of stdin, parsed). Blank lines are logged
    /// as `""` and otherwise skipped; a line over 16 MiB is discarded and logged as a note.
    Received {
        /// The message as JSON, or a string when the line was not JSON.
        message: Value,
    },
    /// A JSON-RPC message the server sent.
    Sent {
        /// The message.
        message: Value,
    },
    /// Something the server wrote that is not a JSON-RPC message (banner, long line, stderr).
    Wrote {
        /// `stdout` or `stderr`.
        stream: String,
        /// What was written: the text itself (lossy UTF-8) when at most 200 characters,
        /// else its first 200 characters followed by ` … (N bytes)`.
        summary: String,
    },
    /// A script step began.
    Step {
        /// Its index in the played steps (0-based).
        index: usize,
        /// The step, as a short text (`expect tools/call`).
        describe: String,
    },
    /// The client's message did not match the step.
    Mismatch {
        /// The step index.
        index: usize,
        /// What the step expected.
        expected: String,
        /// What was received.
        received: Value,
    },
    /// stdin closed before the script's end.
    Unfinished {
        /// The first step not reached, described.
        expected: String,
    },
    /// Every step of the script was played (what follows is waiting for stdin to close).
    Completed {},
    /// The message just received is outside the rule under test (the script's `incidental`
    /// policy): it was answered with a default instead of being matched.
    Incidental {
        /// Its method.
        method: String,
    },
    /// The process is exiting on its own. Over HTTP (an `exit` or `crash` step): the
    /// listeners close and every connection is dropped.
    Exiting {
        /// The code.
        code: i32,
    },
    /// The HTTP mock is listening (logged first, in place of `Started`: it runs in-process).
    Listening {
        /// The URL the client is given: `http(s)://127.0.0.1:PORT/mcp`.
        primary: String,
        /// The same endpoint on the second origin: `http(s)://localhost:PORT2/mcp`.
        second: String,
        /// https only: the plain-HTTP listener, `http://127.0.0.1:PORT3/mcp`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        plain: Option<String>,
    },
    /// An HTTP request reached the mock (its JSON-RPC body follows as `Received`).
    HttpRequest {
        /// Its number, from 1, shared with its `HttpResponse`.
        seq: u64,
        /// The listener: `primary`, `second` or `plain`.
        origin: String,
        /// The method.
        method: String,
        /// The path and query.
        path: String,
        /// Every header in the order received, names lowercased.
        headers: Vec<(String, String)>,
        /// The body: its JSON, else its text (summarized past 200 characters; a form body of
        /// at most 8 KiB whole, for the credentials it carries), `null` when empty.
        body: Value,
    },
    /// The client closed the connection of a streamed response the server held open (an
    /// `await_close` step saw it).
    ClientClosed {
        /// The number of the request whose response it was.
        seq: u64,
    },
    /// The mock answered an HTTP request (the status line and headers went out).
    HttpResponse {
        /// The request's number.
        seq: u64,
        /// The status.
        status: u16,
        /// The headers set by the mock, names lowercased.
        headers: Vec<(String, String)>,
        /// The body, summarized: its text, `[sse stream]` for a streamed body, `` when empty.
        summary: String,
    },
}

/// How many characters of a write a [`Record::Wrote`] summary keeps.
pub const SUMMARY_CHARS: usize = 200;

/// Summarizes bytes written: the text itself (lossy UTF-8) when short, else its first
/// [`SUMMARY_CHARS`] characters and ` … (N bytes)` with `total` the full length.
pub fn summarize(bytes: &[u8], total: usize) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(SUMMARY_CHARS * 4)]);
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(SUMMARY_CHARS).collect();
    if chars.next().is_none() && total == bytes.len() {
        head
    } else {
        format!("{head} … ({total} bytes)")
    }
}

/// Reads a wire log. A last line without its newline that does not parse (a record being
/// written) is left out; any other line that does not parse is an error.
pub fn read_wire_log(path: impl AsRef<std::path::Path>) -> Result<Vec<Record>, WireLogError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| WireLogError::Read {
        path: path.to_owned(),
        source,
    })?;
    let complete = bytes.ends_with(b"\n");
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    let count = lines.len();
    let mut records = Vec::new();
    for (i, line) in lines.into_iter().enumerate() {
        let last = i + 1 == count;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(record) => records.push(record),
            Err(_) if last && !complete => {}
            Err(source) => {
                return Err(WireLogError::Parse {
                    path: path.to_owned(),
                    line: i + 1,
                    source,
                })
            }
        }
    }
    Ok(records)
}

/// Appends records to a wire log, one `write` per record; with no file, drops them.
#[derive(Debug, Default)]
pub struct LogWriter {
    file: Option<std::fs::File>,
}

impl LogWriter {
    /// Opens `path` for appending, creating it (and its folder) if needed.
    pub fn open(path: &std::path::Path) -> std::io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self { file: Some(file) })
    }

    /// A writer that drops every record.
    pub fn none() -> Self {
        Self::default()
    }

    /// Appends one record as one line. Failures are ignored: the log must never stop the
    /// server.
    pub fn append(&mut self, record: &Record) {
        use std::io::Write;
        if let Some(file) = &mut self.file {
            if let Ok(mut line) = serde_json::to_vec(record) {
                line.push(b'\n');
                let _ = file.write_all(&line);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_writes_are_kept_whole() {
        assert_eq!(summarize(b"hello", 5), "hello");
    }

    #[test]
    fn long_writes_are_cut_with_their_length() {
        let long = vec![b'x'; 1000];
        let summary = summarize(&long, 1000);
        assert_eq!(summary, format!("{} … (1000 bytes)", "x".repeat(200)));
    }

    #[test]
    fn a_partial_last_line_is_left_out() {
        let dir = std::env::temp_dir().join(format!("wire-log-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("wire.jsonl");
        std::fs::write(
            &path,
            "{\"record\":\"exiting\",\"code\":0}\n{\"record\":\"exi",
        )
        .unwrap();
        let records = read_wire_log(&path).unwrap();
        assert_eq!(records, vec![Record::Exiting { code: 0 }]);
        std::fs::write(
            &path,
            "{\"record\":\"exi\n{\"record\":\"exiting\",\"code\":0}\n",
        )
        .unwrap();
        assert!(read_wire_log(&path).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
