//! `server.stdio.*`: stdout carries only JSON-RPC, and the server exits when stdin closes.

use crate::log::SharedLog;
use crate::outcome::{Failure, Finding};
use crate::stdio::Closed;
use std::time::Duration;

/// nothing but JSON-RPC messages on stdout; logs go to stderr.
pub const CLEAN_STDOUT: &str = "server.stdio.clean-stdout";
/// exits within 5 s of stdin closing.
pub const EXITS_ON_CLOSE: &str = "server.stdio.exits-on-close";

/// How long a server may take to exit once its stdin is closed.
pub const EXIT_BOUND: Duration = Duration::from_secs(5);

/// Judges every line every session read.
pub fn judge_stdout(logs: &[SharedLog]) -> Finding {
    let mut lines = 0;
    for log in logs {
        let log = log.lock().unwrap_or_else(|e| e.into_inner());
        lines += log.lines;
        if let Some(bad) = &log.first_refused {
            return Finding::Fail(
                Failure::new(
                    "only JSON-RPC messages, one per line, on stdout",
                    format!(
                        "{} line(s) that are not JSON-RPC messages (session `{}`), the first: {}",
                        log.refused, log.label, bad.why
                    ),
                )
                .received(Some(&bad.line)),
            );
        }
    }
    Finding::pass_with(format!("{lines} line(s) in {} session(s)", logs.len()))
}

/// Judges how the probe session ended.
pub fn judge_exit(closed: &Closed) -> Finding {
    match closed {
        Closed::Exited(after, status) => {
            Finding::pass_with(format!("exited after {} ms ({status})", after.as_millis()))
        }
        Closed::Killed(after) if *after < EXIT_BOUND => Finding::skip(format!(
            "still running {} ms after stdin closed, when --timeout ended the wait (then killed); the rule allows {} s: use --timeout {}s or more to judge it",
            after.as_millis(),
            EXIT_BOUND.as_secs(),
            EXIT_BOUND.as_secs()
        )),
        Closed::Killed(after) => Finding::Fail(Failure::new(
            format!("the server exits within {} s of stdin closing", EXIT_BOUND.as_secs()),
            format!("still running {} ms after stdin closed (then killed)", after.as_millis()),
        )),
    }
}
