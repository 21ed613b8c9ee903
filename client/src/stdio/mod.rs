//! The stdio transport: a spawned server, spoken to over its stdin and stdout.
//!
//! One background task reads stdout ([`reader`]), one drains stderr ([`stderr`]). Each call
//! registers the id it sends and waits for the reader to route the response carrying that
//! id to it. Under `strict` several calls are in flight at once; yoagent and kova queue them
//! through a FIFO mutex, one on the wire at a time. The calls' deadlines (and their look at
//! the child) are kept by one more task, the [`sweeper`], not by a timer per call; a
//! response's result is handed over as its line, read by the caller into what it needs.
//! What is known about the server's end lives in [`exit::ExitState`] behind a `std` mutex,
//! so `exited()` answers at once and never waits behind a call.

mod exit;
mod process_group;
mod reader;
mod shared;
mod spawn;
mod stderr;
mod sweeper;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use tokio::process::ChildStdin;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use crate::error::{Failed, Fate};
use crate::jsonrpc::{ErrorObject, Notification, Params, RawResult, RequestRef};
use crate::{Breakage, ClientConfig, McpError, StdioServer};
use exit::ExitState;
use shared::PendingGuard;
pub(crate) use shared::Shared;
use stderr::{StderrTail, TAIL_BYTES};

/// How often the child is polled while waiting for it to exit.
const WAIT_POLL: Duration = Duration::from_millis(5);

/// How often a call in flight looks whether the command exited, the first look one period
/// after it was sent (so a call answered sooner never polls the child).
const EXIT_POLL: Duration = Duration::from_millis(50);

/// The largest write buffer kept between messages.
const WRITE_BUFFER_KEPT: usize = 16_384; // 16 KiB

/// How long `close()` waits to reap a killed server.
const REAP_BOUND: Duration = Duration::from_secs(2);

/// Locks a `std` mutex, whether or not a panicking thread poisoned it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The test-only `WriteUnbounded` deadline: the bound restarted once the write is done.
fn deadline_after_write(sent: Instant, bound: Duration) -> Instant {
    sent + bound
}

/// The params of a timed-out call's `notifications/cancelled` (stdio and Streamable HTTP):
/// the call's own id — or, for a breakage under test, none or the `latest` request sent —
/// and the bound as the reason.
pub(crate) fn cancelled_params(
    id: &Value,
    latest: i64,
    bound: Duration,
    broken: impl Fn(Breakage) -> bool,
) -> Value {
    let request_id = if broken(Breakage::CancelledWithoutRequestId) {
        Value::Null
    } else if broken(Breakage::CancelsLatestRequest) {
        Value::from(latest)
    } else {
        id.clone()
    };
    let reason = format!("timed out after {}", fmt_duration(bound));
    serde_json::json!({ "requestId": request_id, "reason": reason })
}

/// Formats a bound for error text: `100ms`, `60s`, `1.5s`.
pub(crate) fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        format!("{d:?}")
    } else if ms < 1000 || ms % 100 != 0 {
        format!("{ms}ms")
    } else {
        // Whole seconds print without a fraction (`60s`).
        format!("{}s", ms as f64 / 1000.0)
    }
}

/// The error of a call that ran out of time.
fn timed_out(method: &str, bound: Duration) -> McpError {
    McpError::Timeout(format!(
        "MCP call '{method}' timed out after {}; the server may still carry it out",
        fmt_duration(bound)
    ))
}

/// What the reader hands the waiting call.
enum Delivery {
    /// The response carrying its id: the result (read only by the caller) or the error object.
    Response(Result<RawResult, ErrorObject>),
    /// The call failed (the server is gone, or a fatal line with `BannerFatal`).
    Failed(McpError),
    /// The call's deadline passed (the sweeper took its entry out).
    TimedOut,
}

/// The call waiting for its response.
struct Pending {
    id: Value,
    tx: oneshot::Sender<Delivery>,
    /// When the call times out (`None`: never, or not yet sent).
    deadline: Option<Instant>,
    /// When the call, still waiting, next looks at the child (`None` until sent).
    look_at: Option<Instant>,
}

impl Pending {
    /// The earliest of its deadline and its next look.
    fn next_event(&self) -> Option<Instant> {
        match (self.deadline, self.look_at) {
            (Some(d), Some(l)) => Some(d.min(l)),
            (d, l) => d.or(l),
        }
    }
}

/// The state of the connection, kept under one lock so a call and the reader agree.
#[derive(Default)]
struct Conn {
    /// The calls in flight, oldest first (at most one unless the profile multiplexes).
    pending: Vec<Pending>,
    /// Set once the connection is gone: the error text every later call gets.
    dead: Option<String>,
    /// `BannerFatal`: a non-JSON line seen while no call was in flight fails the next one.
    poison: Option<String>,
    /// What the sweeper sleeps until (`None`: nothing to sweep, it waits to be woken).
    sweep_at: Option<Instant>,
}

/// The most bytes of earlier messages left unwritten (a server that stopped reading) before
/// a write fails instead of adding to them: memory stays bounded however many calls time out.
const MAX_UNWRITTEN: usize = 8 * 1024 * 1024;

/// The server's input.
struct Input {
    /// `None` once closed.
    pipe: Option<ChildStdin>,
    /// What is still to be written: the rest of a line whose write was cut short, then the
    /// lines after it, written first. Kept between messages (a message costs no allocation).
    unwritten: Vec<u8>,
}

/// Appends `message` as one line to what is still to be written, unless too much of it waits
/// already; nothing is appended when it cannot be serialized.
fn queue_line<T: Serialize>(unwritten: &mut Vec<u8>, message: &T) -> Result<(), std::io::Error> {
    if unwritten.len() > MAX_UNWRITTEN {
        let text = format!(
            "the server has not read {} bytes of earlier messages",
            unwritten.len()
        );
        return Err(std::io::Error::new(std::io::ErrorKind::WouldBlock, text));
    }
    let start = unwritten.len();
    if let Err(e) = serde_json::to_writer(&mut *unwritten, message) {
        unwritten.truncate(start);
        return Err(std::io::Error::other(e));
    }
    unwritten.push(b'\n');
    Ok(())
}
/// A running stdio server and the tasks reading it.
pub(crate) struct StdioTransport {
    shared: Arc<Shared>,
    calls: tokio::sync::Mutex<()>,
    next_id: AtomicI64,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl StdioTransport {
    /// Spawns the server and starts reading its stdout and stderr.
    pub(crate) fn spawn(server: &StdioServer, config: &ClientConfig) -> Result<Self, McpError> {
        let env_replaced = config.hooks.broken.contains(&Breakage::EnvReplaced);
        let mut child = spawn::spawn(server, env_replaced)?;
        let closed = |what: &str| {
            McpError::Transport(format!(
                "MCP server '{}': {what} is not piped",
                server.command
            ))
        };
        let stdin = child.stdin.take().ok_or_else(|| closed("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| closed("stdout"))?;
        let stderr = child.stderr.take().ok_or_else(|| closed("stderr"))?;
        let keep_head = config.hooks.broken.contains(&Breakage::StderrHeadKept);
        let shared = Arc::new(Shared {
            command: server.command.clone(),
            profile: config.profile,
            hooks: config.hooks.clone(),
            timeouts: config.timeouts(),
            own_group: server.own_process_group && cfg!(unix),
            pid: child.id(),
            stdin: tokio::sync::Mutex::new(Input {
                pipe: Some(stdin),
                unwritten: Vec::new(),
            }),
            child: Mutex::new(Some(child)),
            conn: Mutex::new(Conn::default()),
            sweep: tokio::sync::Notify::new(),
            awaiting: watch::channel(false).0,
            list_changed: AtomicU64::new(0),
            last_not_json: Mutex::new(None),
            stderr_tail: Arc::new(Mutex::new(StderrTail::new(TAIL_BYTES, keep_head))),
            stderr_done: watch::channel(false).0,
            exit: Mutex::new(ExitState::default()),
            group_killed: AtomicBool::new(false),
            lines_read: AtomicU64::new(0),
        });
        let stderr_task = match shared.broken(Breakage::StderrNotDrained) {
            // Held open, never read: a server that writes enough blocks on it.
            true => tokio::spawn(async move {
                std::future::pending::<()>().await;
                drop(stderr)
            }),
            false => tokio::spawn(stderr::drain(
                stderr,
                shared.command.clone(),
                shared.stderr_tail.clone(),
                shared.stderr_done.clone(),
            )),
        };
        let reader_task = tokio::spawn(reader::run(shared.clone(), stdout));
        let sweeper_task = tokio::spawn(sweeper::run(shared.clone()));
        Ok(StdioTransport {
            shared,
            calls: tokio::sync::Mutex::new(()),
            next_id: AtomicI64::new(1),
            tasks: Mutex::new(vec![reader_task, stderr_task, sweeper_task]),
        })
    }

    /// The command, as given.
    pub(crate) fn command(&self) -> &str {
        &self.shared.command
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.shared.pid
    }

    /// How many stdout lines were read.
    pub(crate) fn lines_read(&self) -> u64 {
        self.shared.lines_read.load(Ordering::SeqCst)
    }

    /// How many `notifications/tools/list_changed` were read.
    pub(crate) fn list_changes(&self) -> u64 {
        self.shared.list_changed.load(Ordering::SeqCst)
    }

    /// `exited()`: none while running, never blocks.
    pub(crate) fn exited(&self) -> Option<String> {
        if self.shared.broken(Breakage::ExitedWaitsForCalls) {
            self.broken_wait_for_calls();
        }
        self.shared.exited()
    }

    /// Test switch `ExitedWaitsForCalls`: `exited()` blocks while calls are in flight (up to
    /// 300 ms), as a client that looks at the child only once its calls end.
    fn broken_wait_for_calls(&self) {
        let until = Instant::now() + Duration::from_millis(300);
        while !lock(&self.shared.conn).pending.is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Sends a request and waits for the response with its id, bounded by `bound` counted
    /// from when the request is sent (under `strict` calls go out at once, several in
    /// flight; otherwise they queue in order), saying on failure whether the server is gone
    /// and whether the request was written to it: a write that failed, or a connection already
    /// dead, never delivered it; a server gone after the write may have received it.
    pub(crate) async fn request_fated(
        &self,
        method: &str,
        params: Option<Value>,
        bound: Option<Duration>,
    ) -> Result<Result<Value, ErrorObject>, Failed> {
        match self
            .request_raw(method, params.as_ref().map(Params::Tree), bound)
            .await?
        {
            Ok(result) => match result.into_value() {
                Ok(value) => Ok(Ok(value)),
                Err(e) => Err(Failed::alive(McpError::Protocol(format!(
                    "invalid '{method}' result: {e}"
                )))),
            },
            Err(error) => Ok(Err(error)),
        }
    }

    /// [`request_fated`](Self::request_fated) with borrowed parameters, the result left
    /// unread for the caller to read as it needs.
    pub(crate) async fn request_raw(
        &self,
        method: &str,
        params: Option<Params<'_>>,
        bound: Option<Duration>,
    ) -> Result<Result<RawResult, ErrorObject>, Failed> {
        let shared = &*self.shared;
        let queue_counts = shared.broken(Breakage::TimeoutIncludesQueue);
        // Read the clock only where a bound counts from it.
        let queued_at = queue_counts.then(Instant::now);
        let _turn = match bound {
            _ if shared.profile.multiplexes() && !shared.broken(Breakage::CallsQueued) => None,
            // The breakage: the bound runs while the call waits behind another.
            Some(bound) if queue_counts => {
                match tokio::time::timeout(bound, self.calls.lock()).await {
                    Ok(turn) => Some(turn),
                    Err(_) => return Err(Failed::alive(timed_out(method, bound))),
                }
            }
            _ => Some(self.calls.lock().await),
        };
        let id = Value::from(self.next_id.fetch_add(1, Ordering::SeqCst));
        let (tx, rx) = oneshot::channel();
        {
            let mut conn = lock(&shared.conn);
            if let Some(text) = &conn.dead {
                return Err(Failed::new(
                    McpError::Transport(text.clone()),
                    Fate::DeadUnsent,
                ));
            }
            if let Some(message) = conn.poison.take() {
                return Err(Failed::alive(McpError::Protocol(message)));
            }
            conn.pending.push(Pending {
                id: id.clone(),
                tx,
                deadline: None,
                look_at: None,
            });
        }
        let mut guard = PendingGuard {
            shared,
            id: id.clone(),
            delivered: false,
        };
        // The bound counts the write too: a server that stops reading its input is hung as
        // surely as one that never answers.
        let deadline = bound.map(|bound| queued_at.unwrap_or_else(Instant::now) + bound);
        let request = RequestRef::new(&id, method, params.as_ref());
        let write = shared.write_message(&request);
        let written = match deadline {
            Some(deadline) if !shared.broken(Breakage::WriteUnbounded) => {
                tokio::time::timeout_at(deadline.into(), write).await.ok()
            }
            _ => Some(write.await),
        };
        match written {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                drop(guard);
                // The line did not go out whole (its newline is its last byte): never delivered.
                return Err(Failed::new(shared.write_failed(e).await, Fate::DeadUnsent));
            }
            None => {
                drop(guard);
                return Err(self.timed_out(&id, method, bound.unwrap_or_default()));
            }
        }
        let sent = Instant::now();
        let deadline = match bound {
            Some(bound) if shared.broken(Breakage::WriteUnbounded) => {
                Some(deadline_after_write(sent, bound))
            }
            _ => deadline,
        };
        shared.set_awaiting(true);
        shared.arm(&id, sent, deadline);
        let delivery = rx.await;
        // Every sender of a delivery (the reader, `mark_dead`, `not_json`, the sweeper)
        // removed the entry.
        guard.delivered = delivery.is_ok();
        drop(guard);
        match delivery {
            Ok(Delivery::Response(outcome)) => Ok(outcome),
            // The server went after the request was written: it may have received it.
            Ok(Delivery::Failed(error @ McpError::Transport(_))) => {
                Err(Failed::new(error, Fate::DeadMaybeSent))
            }
            Ok(Delivery::Failed(error)) => Err(Failed::alive(error)),
            Err(_) => {
                let text = lock(&shared.conn).dead.clone();
                let error = McpError::Transport(text.unwrap_or_else(|| {
                    format!("Connection closed: MCP server '{}' is gone", shared.command)
                }));
                Err(Failed::new(error, Fate::DeadMaybeSent))
            }
            Ok(Delivery::TimedOut) => Err(self.timed_out(&id, method, bound.unwrap_or_default())),
        }
    }

    /// A call's bound ended: under `strict` the server is told (`notifications/cancelled`)
    /// without waiting on a server that does not read (see [`Shared::write_or_queue`]).
    fn timed_out(&self, id: &Value, method: &str, bound: Duration) -> Failed {
        let shared = &self.shared;
        if shared.profile.sends_cancelled() {
            let latest = self.next_id.load(Ordering::SeqCst) - 1;
            let params = cancelled_params(id, latest, bound, |b| shared.broken(b));
            Shared::write_or_queue(
                shared,
                Notification::new("notifications/cancelled", Some(params)),
            );
        }
        if shared.broken(Breakage::TimeoutWithoutMayHaveRun) {
            let text = format!(
                "MCP call '{method}' timed out after {}",
                fmt_duration(bound)
            );
            return Failed::alive(McpError::Timeout(text));
        }
        match shared.broken(Breakage::TimeoutAsTransport) {
            true => Failed::alive(McpError::Transport(timed_out(method, bound).to_string())),
            false => Failed::alive(timed_out(method, bound)),
        }
    }

    /// Sends a notification (no id, not awaited). A failed write is a transport error.
    pub(crate) async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        self.notify_fated(method, params).await.map_err(|f| f.error)
    }

    /// [`notify`](Self::notify), saying on failure that the server is gone. The write is
    /// bounded as a request that is not a call is (`timeouts().list`): a server that stopped
    /// reading with its pipe full cannot hold the caller forever; what the pipe did not take
    /// goes out before the next message (the write is cancel-safe).
    pub(crate) async fn notify_fated(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), Failed> {
        let shared = &*self.shared;
        if let Some(text) = lock(&shared.conn).dead.clone() {
            return Err(Failed::new(McpError::Transport(text), Fate::DeadUnsent));
        }
        // The switch spares the handshake's own notification: the caller's go out wrong.
        if shared.broken(Breakage::NotificationWithId) && method != "notifications/initialized" {
            let message = serde_json::json!({ "jsonrpc": "2.0", "id": 0, "method": method, "params": params });
            let written = shared.write_message(&message).await;
            return written.map_err(|e| Failed::alive(McpError::Transport(e.to_string())));
        }
        let message = Notification::new(method, params);
        let write = shared.write_message(&message);
        let written = match shared.timeouts.list {
            Some(bound) => match tokio::time::timeout(bound, write).await {
                Ok(written) => written,
                Err(_) => {
                    return Err(Failed::alive(McpError::Timeout(format!(
                        "MCP notification '{method}' could not be written within {}: the server does not read its input",
                        fmt_duration(bound)
                    ))))
                }
            },
            None => write.await,
        };
        match written {
            Ok(()) => Ok(()),
            Err(e) => Err(Failed::new(shared.write_failed(e).await, Fate::DeadUnsent)),
        }
    }

    /// Stops the server (its group with its own process group) and reaps it; idempotent.
    /// Does not wait behind a call in flight: that call fails as closed.
    pub(crate) async fn close(&self) {
        let shared = &*self.shared;
        lock(&shared.exit).close(&shared.command);
        shared.mark_dead(format!(
            "Connection closed: MCP server '{}' was closed",
            shared.command
        ));
        shared.kill(Breakage::NoGroupKillOnClose);
        if let Ok(mut stdin) = shared.stdin.try_lock() {
            stdin.pipe.take();
        }
        let child = lock(&shared.child).take();
        if let Some(mut child) = child {
            let _ = tokio::time::timeout(REAP_BOUND, child.wait()).await;
        }
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.shared.kill(Breakage::NoGroupKillOnDrop);
        for task in lock(&self.tasks).drain(..) {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_read_as_written() {
        assert_eq!(fmt_duration(Duration::from_millis(100)), "100ms");
        assert_eq!(fmt_duration(Duration::from_secs(60)), "60s");
        assert_eq!(fmt_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(fmt_duration(Duration::from_millis(1234)), "1234ms");
    }

    /// The bound is on what waits already: up to MAX_UNWRITTEN bytes a message is still
    /// added; past it the write fails and nothing is added.
    #[test]
    fn unwritten_bytes_are_bounded_at_the_limit() {
        let message = serde_json::json!({ "jsonrpc": "2.0", "method": "m" });
        let mut unwritten = vec![b' '; MAX_UNWRITTEN];
        queue_line(&mut unwritten, &message).expect("at the limit a message is still taken");
        let taken = unwritten.len();
        assert!(taken > MAX_UNWRITTEN);
        let refused = queue_line(&mut unwritten, &message).expect_err("past the limit");
        assert_eq!(refused.kind(), std::io::ErrorKind::WouldBlock);
        assert!(refused.to_string().contains("has not read"), "{refused}");
        assert_eq!(unwritten.len(), taken, "nothing added past the limit");
    }
}
