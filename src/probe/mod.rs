//! What the runner and a client under test can see of the scripted server: its wire log
//! (what it received, how far its script got) and its processes ([`procs`]).

pub mod procs;

use crate::text::cut;
use mcp_mock_servers::wire_log::{self, Record};
use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What the runner can see of the scripted server while a step runs.
#[derive(Clone, Debug)]
pub struct ServerProbe {
    pub(crate) log_path: PathBuf,
}

impl ServerProbe {
    /// How many `message`s (a method, or `response:<id>`) the server has received so far.
    pub fn received(&self, message: &str) -> usize {
        let wire = mcp_mock_servers::wire_log::read_wire_log(&self.log_path).unwrap_or_default();
        received_summary(&wire)
            .iter()
            .filter(|m| *m == message)
            .count()
    }
}

/// What the server received, in order: methods, and `response:<id>` for answers.
pub fn received_summary(wire: &[Record]) -> Vec<String> {
    let mut summary = Vec::new();
    for record in wire {
        match record {
            Record::Received { message } => {
                summary.push(match message.get("method").and_then(Value::as_str) {
                    Some(method) => method.to_string(),
                    None => match message.get("id") {
                        Some(id) => format!("response:{}", value_text(id)),
                        None => format!("other:{}", cut(&message.to_string(), 60)),
                    },
                })
            }
            // Outside the rule under test (answered by the script's incidental policy).
            Record::Incidental { method } if summary.last() == Some(method) => {
                summary.pop();
            }
            _ => {}
        }
    }
    summary
}

/// Whether the server received `message` (a method) `count` times and its script moved on
/// after that: began its next step, ended, or stopped. A server killed in between would
/// look as if it never finished the step, so steps that end the server wait for this.
pub(crate) fn moved_past(wire: &[Record], message: &str, count: usize) -> bool {
    let mut seen = 0;
    let Some(at) = wire.iter().position(|r| {
        let hit = matches!(r, Record::Received { message: m } if m.get("method").and_then(Value::as_str) == Some(message));
        seen += usize::from(hit);
        hit && seen == count
    }) else {
        return false;
    };
    wire[at..].iter().any(|r| {
        matches!(
            r,
            Record::Step { .. }
                | Record::Completed {}
                | Record::Mismatch { .. }
                | Record::Unfinished { .. }
                | Record::Exiting { .. }
        )
    })
}

/// Reads the server's wire log every 5 ms until `done` holds for it, bounded by `within`;
/// whether it did.
pub(crate) async fn until_wire_log(
    log_path: &std::path::Path,
    within: Duration,
    mut done: impl FnMut(&[wire_log::Record]) -> bool,
) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if done(&wire_log::read_wire_log(log_path).unwrap_or_default()) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A value as text (an id, or what `contains` reads): strings unquoted, anything else as
/// JSON.
pub(crate) fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
