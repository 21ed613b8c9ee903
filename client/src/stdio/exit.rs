//! Why a server is gone, and the text `exited()` and a failed call give for it.
//!
//! The text settles once: the first look at an exit composes it with the stderr seen so far;
//! once stderr has ended (or `exit_settle` has passed) it is composed a last time and frozen.
//! So a poller sees at most two texts.

use std::process::ExitStatus;
use std::time::Instant;

/// Why the server is gone.
#[derive(Debug)]
pub(crate) enum ExitReason {
    /// The process exited (reaped) with this status.
    Exited(ExitStatus),
    /// Its stdout closed while the process lived on (a wrapper); it was killed.
    OutputClosed,
    /// A write to its stdin failed: it no longer reads its input.
    NoLongerReads(String),
    /// Waiting on the child failed.
    Unwaitable(String),
    /// Stopped by `close()`.
    Closed,
}

/// The facts that go into an exit text besides the reason.
pub(crate) struct Facts<'a> {
    /// The command, as given.
    pub command: &'a str,
    /// The kept stderr, trimmed.
    pub stderr: &'a str,
    /// The last stdout line that was not JSON, cut to a readable length.
    pub last_stdout: Option<&'a str>,
}

/// Composes the exit text, without the "Connection closed: " a failed call puts before it.
pub(crate) fn compose(reason: &ExitReason, facts: &Facts<'_>) -> String {
    let command = facts.command;
    let mut text = match reason {
        ExitReason::Closed => return format!("MCP server '{command}' was closed"),
        ExitReason::Exited(status) => format!("MCP server '{command}' exited with {status}"),
        ExitReason::OutputClosed => format!("MCP server '{command}' closed its output"),
        ExitReason::NoLongerReads(cause) => {
            format!("MCP server '{command}' no longer reads its input ({cause})")
        }
        ExitReason::Unwaitable(cause) => {
            format!("MCP server '{command}' cannot be waited on: {cause}")
        }
    };
    let stderr = if facts.stderr.is_empty() {
        "(none)"
    } else {
        facts.stderr
    };
    text.push_str("; last stderr: ");
    text.push_str(stderr);
    if let Some(line) = facts.last_stdout {
        text.push_str("; last stdout line: ");
        text.push_str(line);
    }
    text
}

/// What is known about the server's end.
#[derive(Debug, Default)]
pub(crate) struct ExitState {
    reason: Option<ExitReason>,
    seen_at: Option<Instant>,
    first_text: Option<String>,
    settled: Option<String>,
}

impl ExitState {
    /// Whether an end was seen.
    pub(crate) fn is_known(&self) -> bool {
        self.reason.is_some()
    }

    /// Why the server is gone, once seen.
    pub(crate) fn reason(&self) -> Option<&ExitReason> {
        self.reason.as_ref()
    }

    /// When the end was first seen.
    pub(crate) fn seen_at(&self) -> Option<Instant> {
        self.seen_at
    }

    /// Records why the server is gone; the first reason seen stays. Returns whether this one
    /// was recorded.
    pub(crate) fn record(&mut self, reason: ExitReason) -> bool {
        if self.reason.is_some() {
            return false;
        }
        self.reason = Some(reason);
        self.seen_at = Some(Instant::now());
        true
    }

    /// Records a `close()`: it overrides whatever was seen before, and its text is final.
    pub(crate) fn close(&mut self, command: &str) {
        let facts = Facts {
            command,
            stderr: "",
            last_stdout: None,
        };
        self.settled = Some(compose(&ExitReason::Closed, &facts));
        self.reason = Some(ExitReason::Closed);
        self.seen_at.get_or_insert_with(Instant::now);
    }

    /// The frozen text, once settled.
    pub(crate) fn settled(&self) -> Option<&str> {
        self.settled.as_deref()
    }

    /// The text to show now, if an end is known. With `settle`, the text is composed a last
    /// time and frozen; without, the first text shown stays until then.
    pub(crate) fn text(&mut self, facts: &Facts<'_>, settle: bool) -> Option<String> {
        if let Some(text) = &self.settled {
            return Some(text.clone());
        }
        let reason = self.reason.as_ref()?;
        if settle || matches!(reason, ExitReason::Closed) {
            let text = compose(reason, facts);
            self.settled = Some(text.clone());
            return Some(text);
        }
        Some(
            self.first_text
                .get_or_insert_with(|| compose(reason, facts))
                .clone(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(stderr: &'a str, last_stdout: Option<&'a str>) -> Facts<'a> {
        Facts {
            command: "my-server",
            stderr,
            last_stdout,
        }
    }

    #[cfg(unix)]
    fn status(code: i32) -> ExitStatus {
        use std::os::unix::process::ExitStatusExt;
        ExitStatus::from_raw(code << 8)
    }

    #[cfg(unix)]
    #[test]
    fn an_exit_names_command_status_and_stderr() {
        let text = compose(&ExitReason::Exited(status(3)), &facts("boom", None));
        assert_eq!(
            text,
            "MCP server 'my-server' exited with exit status: 3; last stderr: boom"
        );
        let text = compose(
            &ExitReason::Exited(status(0)),
            &facts("", Some("Listening on stdio")),
        );
        assert_eq!(text, "MCP server 'my-server' exited with exit status: 0; last stderr: (none); last stdout line: Listening on stdio");
    }

    #[cfg(unix)]
    #[test]
    fn a_signal_reads_as_the_signal() {
        use std::os::unix::process::ExitStatusExt;
        let text = compose(
            &ExitReason::Exited(ExitStatus::from_raw(9)),
            &facts("", None),
        );
        assert!(
            text.starts_with("MCP server 'my-server' exited with signal: 9 (SIGKILL)"),
            "{text}"
        );
    }

    #[test]
    fn a_closed_server_is_not_a_crash() {
        let mut state = ExitState::default();
        state.close("my-server");
        assert_eq!(state.settled(), Some("MCP server 'my-server' was closed"));
        assert_eq!(
            state.text(&facts("late", None), false).as_deref(),
            Some("MCP server 'my-server' was closed")
        );
    }

    #[test]
    fn the_text_changes_at_most_once() {
        let mut state = ExitState::default();
        assert_eq!(state.text(&facts("a", None), false), None);
        assert!(state.record(ExitReason::OutputClosed));
        assert!(!state.record(ExitReason::Unwaitable("x".into())));
        let first = state.text(&facts("a", None), false).unwrap();
        assert_eq!(state.text(&facts("a b", None), false).unwrap(), first);
        let last = state.text(&facts("a b c", None), true).unwrap();
        assert_eq!(
            last,
            "MCP server 'my-server' closed its output; last stderr: a b c"
        );
        assert_eq!(state.text(&facts("more", None), false).unwrap(), last);
        assert_eq!(state.text(&facts("more", None), true).unwrap(), last);
    }
}
