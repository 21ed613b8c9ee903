//! What the stdio transport and its background tasks share: the child, its input, the calls
//! waiting for their responses and what is known about the server's end.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::process::Child;
use tokio::sync::watch;

use super::exit::{ExitReason, ExitState, Facts};
use super::stderr::StderrTail;
use super::{lock, queue_line, Conn, Delivery, Input, WAIT_POLL, WRITE_BUFFER_KEPT};
use crate::jsonrpc::{ids_match, ErrorObject, Notification, RawResult};
use crate::{Breakage, McpError, Profile, TestHooks, Timeouts};

/// What the transport and its background tasks share.
pub(crate) struct Shared {
    /// The command, as given.
    pub(crate) command: String,
    pub(crate) profile: Profile,
    pub(super) hooks: TestHooks,
    pub(super) timeouts: Timeouts,
    pub(super) own_group: bool,
    pub(super) pid: Option<u32>,
    /// The server's input (see [`Input`]).
    pub(super) stdin: tokio::sync::Mutex<Input>,
    /// The child, used only for `try_wait` and `kill` (never held across an await).
    pub(super) child: Mutex<Option<Child>>,
    pub(super) conn: Mutex<Conn>,
    /// Wakes the sweeper when a call's first event comes before the one it sleeps until.
    pub(super) sweep: tokio::sync::Notify,
    /// Whether a call is waiting for its response (gates the yoagent reader).
    pub(crate) awaiting: watch::Sender<bool>,
    pub(super) list_changed: AtomicU64,
    pub(super) last_not_json: Mutex<Option<String>>,
    pub(super) stderr_tail: Arc<Mutex<StderrTail>>,
    pub(super) stderr_done: watch::Sender<bool>,
    pub(super) exit: Mutex<ExitState>,
    pub(super) group_killed: AtomicBool,
    /// How many stdout lines were read (only `HandshakeTimerRestarts` looks).
    pub(crate) lines_read: AtomicU64,
}

impl Shared {
    /// yoagent: tells the gated reader whether a call waits for its response.
    pub(super) fn set_awaiting(&self, busy: bool) {
        if self.profile.reads_only_during_calls() {
            self.awaiting.send_replace(busy);
        }
    }

    /// Whether the test hooks break `rule`.
    pub(crate) fn broken(&self, rule: Breakage) -> bool {
        self.hooks.broken.contains(&rule)
    }

    /// Whether this path (`close`, drop, exit seen) kills the group: `switch` turns it off.
    pub(super) fn group_kill(&self, switch: Breakage) -> bool {
        self.own_group && !self.broken(switch)
    }

    /// Kills the server: its whole group with its own process group, else the command.
    /// `switch` is the test switch that turns off this path's group kill.
    pub(super) fn kill(&self, switch: Breakage) {
        if let Some(pid) = self.pid {
            if self.group_kill(switch) && !self.group_killed.swap(true, Ordering::SeqCst) {
                super::process_group::kill_group(
                    pid,
                    self.broken(Breakage::GroupTerminatedPolitely),
                );
            }
        }
        if let Some(child) = lock(&self.child).as_mut() {
            if let Ok(None) = child.try_wait() {
                let _ = child.start_kill();
            }
        }
    }

    /// A command that exited on its own takes its group with it (what it backgrounded).
    pub(super) fn on_exit_seen(&self) {
        if let Some(pid) = self.pid {
            if self.group_kill(Breakage::NoGroupKillOnExit)
                && !self.group_killed.swap(true, Ordering::SeqCst)
            {
                super::process_group::kill_group(
                    pid,
                    self.broken(Breakage::GroupTerminatedPolitely),
                );
            }
        }
    }

    /// Polls the child once. `Ok(None)` while it runs.
    pub(super) fn try_wait(&self) -> Result<Option<std::process::ExitStatus>, std::io::Error> {
        if self.hooks.unwaitable_child {
            return Err(std::io::Error::from_raw_os_error(libc::ECHILD));
        }
        match lock(&self.child).as_mut() {
            Some(child) => child.try_wait(),
            None => Err(std::io::Error::other("the child was already reaped")),
        }
    }

    /// Looks at the child once and records its end if it has gone.
    pub(super) fn poll_exit(&self) {
        if lock(&self.exit).is_known() {
            return;
        }
        let reason = match self.try_wait() {
            Ok(None) => return,
            Ok(Some(status)) => ExitReason::Exited(status),
            Err(_) if self.broken(Breakage::UnwaitableTakenAsRunning) => return,
            Err(e) => ExitReason::Unwaitable(e.to_string()),
        };
        let launcher_exit = matches!(reason, ExitReason::Exited(_));
        let recorded = lock(&self.exit).record(reason);
        if recorded && launcher_exit {
            self.on_exit_seen();
        }
    }

    pub(super) fn stderr_text(&self) -> String {
        lock(&self.stderr_tail).text()
    }

    /// The exit text now, if the end is known; settles it once stderr ended or the settle
    /// time passed.
    pub(super) fn exit_text(&self, force_settle: bool) -> Option<String> {
        let stderr = match self.broken(Breakage::ExitedWithoutStderr) {
            true => String::new(),
            false => self.stderr_text(),
        };
        let last_stdout = lock(&self.last_not_json).clone();
        let facts = Facts {
            command: &self.command,
            stderr: &stderr,
            last_stdout: last_stdout.as_deref(),
        };
        let mut exit = lock(&self.exit);
        let settle = force_settle
            || *self.stderr_done.borrow()
            || exit
                .seen_at()
                .is_some_and(|at| at.elapsed() >= self.timeouts.exit_settle);
        exit.text(&facts, settle)
    }

    /// `exited()`: never blocks.
    pub(crate) fn exited(&self) -> Option<String> {
        if let Some(text) = lock(&self.exit).settled() {
            return Some(text.to_string());
        }
        self.poll_exit();
        self.exit_text(false)
    }

    /// Whether a server whose exit is known is still killed: one that cannot be waited on,
    /// yet closed its pipes, is of no more use.
    pub(super) fn unwaitable_to_kill(&self) -> bool {
        matches!(lock(&self.exit).reason(), Some(ExitReason::Unwaitable(_)))
            && !self.broken(Breakage::NoKillOnOutputClosed)
    }

    /// Once something says the server is going (its output closed, a write failed): finds
    /// out why, kills what is left, waits for the rest of stderr, and returns the settled
    /// text.
    pub(super) async fn settle_exit(&self, otherwise: ExitReason) -> String {
        let deadline = Instant::now() + self.timeouts.exit_settle;
        loop {
            self.poll_exit();
            if lock(&self.exit).is_known() {
                // A server that cannot be waited on, yet closed its pipes, is of no more use.
                if self.unwaitable_to_kill() {
                    self.kill(Breakage::NoKillOnOutputClosed);
                }
                break;
            }
            if Instant::now() >= deadline {
                // Output closed (or input refused) while the process lives on.
                if lock(&self.exit).record(otherwise)
                    && !self.broken(Breakage::NoKillOnOutputClosed)
                {
                    self.kill(Breakage::NoKillOnOutputClosed);
                }
                break;
            }
            tokio::time::sleep(WAIT_POLL).await;
        }
        let seen_at = lock(&self.exit).seen_at().unwrap_or_else(Instant::now);
        let mut done = self.stderr_done.subscribe();
        let _ = tokio::time::timeout_at(
            (seen_at + self.timeouts.exit_settle).into(),
            done.wait_for(|d| *d),
        )
        .await;
        self.exit_text(true)
            .unwrap_or_else(|| format!("MCP server '{}' is gone", self.command))
    }

    /// Marks the connection gone with `text` and fails every call in flight.
    pub(super) fn mark_dead(&self, text: String) -> String {
        let mut conn = lock(&self.conn);
        let text = conn.dead.get_or_insert(text).clone();
        for pending in conn.pending.drain(..) {
            let _ = pending
                .tx
                .send(Delivery::Failed(McpError::Transport(text.clone())));
        }
        self.set_awaiting(false);
        text
    }

    /// The reader saw the end of stdout.
    pub(crate) async fn output_closed(&self) {
        let text = self.settle_exit(ExitReason::OutputClosed).await;
        self.mark_dead(format!("Connection closed: {text}"));
    }

    /// A write failed: the server no longer reads its input (or has gone).
    pub(super) async fn write_failed(&self, cause: std::io::Error) -> McpError {
        if let Some(text) = lock(&self.conn).dead.clone() {
            return McpError::Transport(text);
        }
        tracing::debug!(target: "mcp_refclient", server = %self.command, "write failed: {cause}");
        let text = self
            .settle_exit(ExitReason::NoLongerReads(format!("write failed: {cause}")))
            .await;
        McpError::Transport(self.mark_dead(format!("Connection closed: {text}")))
    }

    /// Writes one message as one line and flushes it. Cancel-safe: a write cut short (its
    /// call's bound ended, or its caller dropped it, while a server that does not read kept
    /// the pipe full) leaves the rest of its line to be written before anything else, so the
    /// server's input only ever gets whole lines.
    pub(super) async fn write_message<T: Serialize>(
        &self,
        message: &T,
    ) -> Result<(), std::io::Error> {
        let mut input = match self.stdin.try_lock() {
            Ok(input) => input,
            Err(_) => self.stdin.lock().await,
        };
        let Input { pipe, unwritten } = &mut *input;
        let Some(pipe) = pipe.as_mut() else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stdin is closed",
            ));
        };
        if self.broken(Breakage::CutLineForgotten) {
            unwritten.clear();
        }
        queue_line(unwritten, message)?;
        while !unwritten.is_empty() {
            // `write` is cancel-safe: what it wrote is drained only once it says how much.
            match pipe.write(unwritten).await? {
                0 => return Err(std::io::ErrorKind::WriteZero.into()),
                n => drop(unwritten.drain(..n)),
            }
        }
        // The buffer is kept between messages (no allocation per message), unless large.
        if unwritten.capacity() > WRITE_BUFFER_KEPT {
            *unwritten = Vec::new();
        }
        pipe.flush().await
    }

    /// Writes `message` as far as the pipe takes it now and leaves the rest to the next write,
    /// never waiting: a caller past its bound is not held by a server that does not read.
    /// If another write holds the pipe, a task of its own writes it after that one.
    pub(super) fn write_or_queue(shared: &Arc<Shared>, message: Notification) {
        let Ok(mut input) = shared.stdin.try_lock() else {
            let shared = Arc::clone(shared);
            tokio::spawn(async move {
                if let Err(e) = shared.write_message(&message).await {
                    tracing::debug!(target: "mcp_refclient", "sending {} failed: {e}", message.method);
                }
            });
            return;
        };
        let Input { pipe, unwritten } = &mut *input;
        let Some(pipe) = pipe.as_mut() else { return };
        if let Err(e) = queue_line(unwritten, &message) {
            tracing::debug!(target: "mcp_refclient", "sending {} failed: {e}", message.method);
            return;
        }
        // One poll, no waker to be woken: what the pipe does not take now stays unwritten.
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        while !unwritten.is_empty() {
            match std::pin::Pin::new(&mut *pipe).poll_write(&mut cx, unwritten) {
                std::task::Poll::Ready(Ok(n)) if n > 0 => drop(unwritten.drain(..n)),
                std::task::Poll::Ready(Err(e)) => {
                    tracing::debug!(target: "mcp_refclient", "sending {} failed: {e}", message.method);
                    return;
                }
                _ => return,
            }
        }
    }

    /// The reader answers a server request; a failed write is left to the reader's EOF.
    pub(crate) async fn answer<T: Serialize>(&self, message: &T) {
        if let Err(e) = self.write_message(message).await {
            tracing::debug!(target: "mcp_refclient", server = %self.command, "answering the server failed: {e}");
        }
    }

    /// The reader got a response: hands it to the call with that id, or drops it (a late
    /// answer to a call that timed out or was cancelled, or an id never sent).
    pub(crate) fn deliver(&self, id: Value, outcome: Result<RawResult, ErrorObject>) {
        let any_id = self.broken(Breakage::AnyIdAccepted);
        let as_written = self.broken(Breakage::IdsComparedAsWritten);
        let mut conn = lock(&self.conn);
        let Some(at) = conn.pending.iter().position(|p| {
            any_id
                || match as_written {
                    true => p.id == id,
                    false => ids_match(&p.id, &id),
                }
        }) else {
            drop(conn);
            tracing::debug!(target: "mcp_refclient", server = %self.command, "dropped a response for id {id}: no call waits for it");
            return;
        };
        let pending = conn.pending.remove(at);
        if conn.pending.is_empty() {
            self.set_awaiting(false);
        }
        drop(conn);
        let _ = pending.tx.send(Delivery::Response(outcome));
    }

    /// Test switch `NotificationFailsCall`: the oldest waiting call ends with `error`.
    pub(crate) fn fail_oldest(&self, error: McpError) {
        let mut conn = lock(&self.conn);
        if conn.pending.is_empty() {
            return;
        }
        let pending = conn.pending.remove(0);
        if conn.pending.is_empty() {
            self.set_awaiting(false);
        }
        drop(conn);
        let _ = pending.tx.send(Delivery::Failed(error));
    }

    /// The reader skipped a line that is not JSON (already cut to a readable length).
    pub(crate) fn not_json(&self, text: String) {
        *lock(&self.last_not_json) = Some(text.clone());
        if !self.broken(Breakage::BannerFatal) {
            return;
        }
        let message = format!("the server wrote a line that is not JSON: {text}");
        let mut conn = lock(&self.conn);
        if conn.pending.is_empty() {
            conn.poison = Some(message);
            return;
        }
        for pending in conn.pending.drain(..) {
            let _ = pending
                .tx
                .send(Delivery::Failed(McpError::Protocol(message.clone())));
        }
        self.set_awaiting(false);
    }

    /// The reader read `notifications/tools/list_changed`.
    pub(crate) fn count_list_changed(&self) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }
}

/// Clears the call's pending entry however the call ends (answered, timed out, cancelled),
/// so a late answer finds no one waiting and is dropped.
pub(super) struct PendingGuard<'a> {
    pub(super) shared: &'a Shared,
    pub(super) id: Value,
    /// The call got its delivery: whoever sent it already took the entry out.
    pub(super) delivered: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if self.delivered {
            return;
        }
        let mut conn = lock(&self.shared.conn);
        if self.shared.broken(Breakage::CancelPoisons) {
            conn.poison = Some("an earlier call was dropped mid-read".into());
        }
        conn.pending.retain(|p| p.id != self.id);
        if conn.pending.is_empty() {
            self.shared.set_awaiting(false);
        }
    }
}
