//! The normalized transcript of a run: what a snapshot pins.
//!
//! Wire messages both ways in the order the server saw them (`→` client to server, `←`
//! server to client), the client's step results, WARN and ERROR log lines, and process
//! facts. What varies between runs is redacted by name here and nowhere else: `[TMP]`,
//! `[PID]`, the mock's path. Nothing is sorted: the wire's order is the finding.

use super::outcome::Outcome;
use crate::text::cut;
use mcp_mock_servers::wire_log::{summarize, Record};
use std::fmt::Write;

/// Renders one run's transcript.
pub fn render(outcome: &Outcome) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "── profile {} ──", outcome.profile.name());
    if let Some(fault) = &outcome.harness_fault {
        let _ = writeln!(out, "harness fault: {}", outcome.redact(fault));
    }
    out.push_str("wire:\n");
    let pids = pid_names(&outcome.wire);
    // The request just logged is a form, logged whole and shown summarized.
    let mut form = false;
    for record in &outcome.wire {
        let line = match record {
            Record::Started { launch, pid, .. } => {
                format!("  · {} started (launch {launch})", pids.name(*pid))
            }
            Record::Spawned { pid, parent } => {
                format!("  · {} spawned {}", pids.name(*parent), pids.name(*pid))
            }
            Record::Received {
                message: serde_json::Value::String(text),
            } if form => {
                let summary = without_cut_secret(outcome, &summarize(text.as_bytes(), text.len()));
                format!(
                    "  → {}",
                    cut(&serde_json::Value::String(summary).to_string(), 400)
                )
            }
            Record::Received { message } => format!("  → {}", cut(&message.to_string(), 400)),
            Record::Sent { message } => format!("  ← {}", cut(&message.to_string(), 400)),
            Record::Wrote { stream, summary } => format!("  ← {stream}: {}", cut(summary, 200)),
            // Whether these made it to the log before a kill varies run to run.
            Record::Step { .. } | Record::Completed {} => continue,
            Record::Mismatch {
                index,
                expected,
                received,
            } => {
                format!(
                    "  ! step {} expected {expected}, received {}",
                    index + 1,
                    cut(&received.to_string(), 300)
                )
            }
            Record::Unfinished { expected } => {
                format!("  ! input closed while awaiting {expected}")
            }
            Record::Exiting { code } => format!("  · exiting with code {code}"),
            Record::ClientClosed { .. } => "  · the client closed the stream".to_string(),
            Record::Incidental { method } => {
                format!("  · incidental {method}: answered with a default")
            }
            Record::Listening { .. } => "  · listening".to_string(),
            Record::HttpRequest {
                origin,
                method,
                path,
                headers,
                ..
            } => {
                form = headers.iter().any(|(n, v)| {
                    n == "content-type" && v.starts_with("application/x-www-form-urlencoded")
                });
                format!("  → {method} {path} ({origin}) {}", shown_headers(headers))
            }
            Record::HttpResponse {
                status,
                headers,
                summary,
                ..
            } => {
                // A JSON-RPC body is shown on its own `←` line (the `Sent` record that follows).
                let is_message = serde_json::from_str::<serde_json::Value>(summary)
                    .is_ok_and(|v| v.get("jsonrpc").is_some());
                let body = if is_message || summary.is_empty() {
                    String::new()
                } else {
                    format!(" {}", cut(&without_cut_secret(outcome, summary), 200))
                };
                format!("  ← {status} {}{body}", shown_headers(headers))
            }
        };
        out.push_str(&outcome.redact(&line));
        out.push('\n');
    }
    out.push_str("client:\n");
    for step in &outcome.steps {
        let result = match &step.result {
            Ok(value) => format!(
                "ok {}",
                shown(outcome, &without_metrics(value).to_string(), 600)
            ),
            Err(e) => format!("error [{}]: {}", e.kind, shown(outcome, &e.text, 600)),
        };
        let _ = writeln!(out, "  {} {} → {}", step.number, step.label, result);
    }
    let warnings: Vec<_> = outcome
        .logs
        .iter()
        .filter(|e| e.level == "WARN" || e.level == "ERROR")
        .collect();
    if !warnings.is_empty() {
        out.push_str("logs:\n");
        for event in warnings {
            let _ = writeln!(
                out,
                "  {} {}: {}",
                event.level,
                event.target,
                shown(outcome, &event.message, 300)
            );
        }
    }
    if !outcome.processes.is_empty() {
        out.push_str("processes after the steps:\n");
        for fact in &outcome.processes {
            let state = if fact.alive_after_steps {
                "alive"
            } else {
                "gone"
            };
            let _ = writeln!(out, "  {} {}: {state}", fact.role, pids.name(fact.pid));
        }
    }
    escape_controls(&pids.redact(&out))
}

/// Control characters a server wrote (NUL, DEL, …) shown as `\u{..}`, so a transcript
/// stays text.
fn escape_controls(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Stable names for the pids of a run, in order of appearance (`[PID1]`, `[PID2]`, …).
struct PidNames {
    pids: Vec<u32>,
}

fn pid_names(wire: &[Record]) -> PidNames {
    let mut pids = Vec::new();
    for record in wire {
        if let Record::Started { pid, .. } | Record::Spawned { pid, .. } = record {
            if !pids.contains(pid) {
                pids.push(*pid);
            }
        }
    }
    PidNames { pids }
}

impl PidNames {
    fn name(&self, pid: u32) -> String {
        match self.pids.iter().position(|p| *p == pid) {
            Some(i) => format!("[PID{}]", i + 1),
            None => "[PID?]".into(),
        }
    }

    /// Replaces any pid still written as a number in messages (`"pid":1234`).
    fn redact(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (i, pid) in self.pids.iter().enumerate() {
            for pattern in [format!("\"pid\":{pid}"), format!("pid {pid}")] {
                text = text.replace(
                    &pattern,
                    &pattern.replace(&pid.to_string(), &format!("[PID{}]", i + 1)),
                );
            }
        }
        text
    }
}

/// A body summary the wire log cut short (`head … (N bytes)`) with the start of a secret
/// at the end of its head hidden: a secret cut in two is no longer found whole by
/// [`Outcome::redact`] (a long client assertion a server echoed).
fn without_cut_secret(outcome: &Outcome, summary: &str) -> String {
    let Some((head, tail)) = summary.rsplit_once(" … (") else {
        return summary.to_string();
    };
    let secrets = outcome.secrets.iter().map(|s| s.value.as_str());
    let head = mcp_refclient::redact::hide_cut_secret(
        head,
        secrets,
        mcp_refclient::redact::KEY_LIKE_CHARS,
    );
    format!("{head} … ({tail}")
}

/// A text of the run as a transcript shows it: redacted before it is cut, so where the cut
/// falls depends on neither the checkout's path nor a port's length, its stderr tail shortened,
/// at most `max` characters.
fn shown(outcome: &Outcome, text: &str, max: usize) -> String {
    cut(&shorten_stderr_tail(&outcome.redact(text)), max)
}

/// A long `last stderr: …` tail cut to its end: where a flood's window starts depends on
/// how the pipe was read, its last lines do not.
fn shorten_stderr_tail(line: &str) -> String {
    const MARK: &str = "last stderr: ";
    const KEEP: usize = 160;
    let Some(at) = line.find(MARK) else {
        return line.to_string();
    };
    let start = at + MARK.len();
    let rest = &line[start..];
    // Inside a JSON value the tail ends at the closing quote; in an error text, at the end.
    let end = if rest.ends_with("\"}") || rest.ends_with('"') {
        rest.rfind('"').unwrap_or(rest.len())
    } else {
        rest.len()
    };
    let tail = &rest[..end];
    if tail.chars().count() <= KEEP + 40 {
        return line.to_string();
    }
    let kept: String = tail
        .chars()
        .rev()
        .take(KEEP)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{}{MARK}…{kept}{}", &line[..at], &rest[end..])
}

/// Header names, with the values of the few that carry protocol state rather than
/// credentials (a snapshot never holds a header value a caller set).
fn shown_headers(headers: &[(String, String)]) -> String {
    const SHOWN: &[&str] = &[
        "content-type",
        "accept",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "location",
        "last-event-id",
    ];
    let parts: Vec<String> = headers
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "host" | "content-length" | "user-agent"))
        .map(|(name, value)| {
            if SHOWN.contains(&name.as_str()) {
                format!("{name}: {value}")
            } else {
                name.clone()
            }
        })
        .collect();
    format!("[{}]", parts.join("; "))
}

/// A step value without its `metrics` (timings and counts that vary run to run).
fn without_metrics(value: &serde_json::Value) -> serde_json::Value {
    let mut value = value.clone();
    if let Some(object) = value.as_object_mut() {
        object.remove("metrics");
    }
    value
}
