//! What the validator saw in each session: every line the server wrote and the method of
//! each request sent, so the aggregate checks (wire schema, clean stdout) judge them all.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One line the server wrote on stdout (or one message body over HTTP).
#[derive(Clone, Debug)]
pub struct Seen {
    /// The line as written (lossy UTF-8, without the newline).
    pub line: String,
    /// The JSON object it parsed as, if it did.
    pub message: Option<Value>,
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
    /// Everything the server wrote, in order.
    pub seen: Vec<Seen>,
}

impl SessionLog {
    /// An empty log for the session opened by `label`.
    pub fn new(label: &str) -> SessionLog {
        SessionLog { label: label.to_string(), ..SessionLog::default() }
    }
}

/// A log shared between the session and its reader task.
pub type SharedLog = Arc<Mutex<SessionLog>>;
