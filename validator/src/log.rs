//! What the validator saw in each session, bounded: the first messages the server wrote
//! (for the wire-schema check), counts of everything, and the first and last lines that were
//! not JSON-RPC messages (for the clean-stdout check and for saying what came instead of an
//! answer). A server that floods gets counted, not stored.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The most messages a session keeps for the wire-schema check.
pub const KEPT_MESSAGES: usize = 2000;
/// The most bytes of kept lines per session (the messages stop being kept past it).
pub const KEPT_BYTES: usize = 2 << 20;
/// How much of a refused line is kept to be quoted.
pub const QUOTED_LINE: usize = 1024;

/// A line that was not a JSON-RPC message, and why.
#[derive(Clone, Debug)]
pub struct Refused {
    /// The line, cut to [`QUOTED_LINE`] bytes.
    pub line: String,
    /// Why it was refused (the parser's error, `not a JSON object`, `longer than …`).
    pub why: String,
}

/// One session's record.
#[derive(Clone, Debug, Default)]
pub struct SessionLog {
    /// Which check opened the session (`server.ping`, `negotiates 2024-11-05`, …).
    pub label: String,
    /// The protocol revision the server answered in `initialize`.
    pub revision: Option<String>,
    /// The method of each request sent, by its id as JSON text.
    pub methods: HashMap<String, String>,
    /// The messages kept, in order (at most [`KEPT_MESSAGES`] and [`KEPT_BYTES`]).
    pub seen: Vec<Value>,
    /// Every line or message the server wrote, kept or not.
    pub lines: usize,
    /// Messages not kept (over the bounds): not judged by the schema check.
    pub dropped: usize,
    /// How many lines were not JSON-RPC messages.
    pub refused: usize,
    /// The first of them.
    pub first_refused: Option<Refused>,
    /// The latest of them.
    pub last_refused: Option<Refused>,
    kept_bytes: usize,
}

impl SessionLog {
    /// An empty log for the session opened by `label`.
    pub fn new(label: &str) -> SessionLog {
        SessionLog {
            label: label.to_string(),
            ..SessionLog::default()
        }
    }

    /// Records a message (kept while under the bounds, counted always).
    pub fn message(&mut self, line: &str, message: &Value) {
        self.lines += 1;
        if self.seen.len() >= KEPT_MESSAGES || self.kept_bytes + line.len() > KEPT_BYTES {
            self.dropped += 1;
            return;
        }
        self.kept_bytes += line.len();
        self.seen.push(message.clone());
    }

    /// Records a line that is not a JSON-RPC message, and why.
    pub fn refused(&mut self, line: &str, why: impl Into<String>) {
        self.lines += 1;
        self.refused += 1;
        let refused = Refused {
            line: crate::text::cut(line, QUOTED_LINE),
            why: why.into(),
        };
        if self.first_refused.is_none() {
            self.first_refused = Some(refused.clone());
        }
        self.last_refused = Some(refused);
    }

    /// What the server wrote that the validator could not take as a message, for an error
    /// text that would otherwise only say "nothing came" (empty when nothing was refused).
    pub fn refused_note(&self) -> String {
        match &self.last_refused {
            None => String::new(),
            Some(last) => format!(
                "; the server wrote {} line(s) that are not JSON-RPC messages, the latest refused ({}): {}",
                self.refused,
                last.why,
                super::outcome::excerpt(&last.line)
            ),
        }
    }
}

/// A log shared between the session and its reader task.
pub type SharedLog = Arc<Mutex<SessionLog>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_counted_not_kept() {
        let mut log = SessionLog::new("x");
        let message = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message"});
        for _ in 0..KEPT_MESSAGES + 5 {
            log.message("{}", &message);
        }
        for i in 0..3 {
            log.refused(&format!("junk {i} {}", "x".repeat(2000)), "not JSON");
        }
        assert_eq!(
            (log.seen.len(), log.dropped, log.lines, log.refused),
            (KEPT_MESSAGES, 5, KEPT_MESSAGES + 8, 3)
        );
        assert!(log.first_refused.unwrap().line.starts_with("junk 0"));
        assert!(log.last_refused.as_ref().unwrap().line.len() < QUOTED_LINE + 40);
    }
}
