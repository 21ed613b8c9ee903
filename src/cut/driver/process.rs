//! A started driver process, watched by threads of its own (its stdout's replies, its
//! stderr's log, the lines written to its stdin): it outlives any one scenario's runtime, so
//! that a reusable driver serves scenario after scenario.

use super::hello::{bounded, parse_bounded, parse_hello, shown};
use super::protocol::{DriverStep, Reply, Request};
use super::{lines, MAX_ERROR_TEXT, MAX_LINE, READER_STACK};
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write;
use std::process::Child;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{oneshot, watch};

/// How long a driver may take to exit once its stdin closes, before its group is killed.
const EXIT_BOUND: Duration = Duration::from_millis(500);

/// A reply's value, or the error text the driver (or its fault) gave.
pub(super) type Answer = Result<Value, String>;

/// What the reader thread and the steps share.
#[derive(Default)]
struct State {
    pending: HashMap<u64, oneshot::Sender<Answer>>,
    /// The driver broke the protocol: every step from now on fails with this.
    fault: Option<String>,
    /// The driver's stdout ended (not yet a fault, unless a step was waiting).
    ended: Option<String>,
}

/// A started driver.
pub(super) struct DriverProcess {
    /// The driver's command line, as its faults name it.
    pub command: String,
    /// The driver's pid, which is also its process group's id.
    pub pid: u32,
    child: Mutex<Child>,
    /// Lines for its stdin; dropping it closes the driver's stdin.
    writer: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    state: Mutex<State>,
    next_id: Mutex<u64>,
    /// True once the hello (or a fault) came.
    greeted: watch::Sender<bool>,
    /// Where the driver's stderr goes: the log of the scenario it serves (none between).
    log: Mutex<Option<tracing::Dispatch>>,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl DriverProcess {
    /// Watches the started `child` (its pipes taken here).
    pub fn watch(command: String, mut child: Child) -> Result<Arc<Self>, (Child, String)> {
        let handles = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = handles else {
            return Err((child, "the driver has no stdin, stdout or stderr".into()));
        };
        let (send, receive) = mpsc::channel::<Vec<u8>>();
        let process = Arc::new(DriverProcess {
            command,
            pid: child.id(),
            child: Mutex::new(child),
            writer: Mutex::new(Some(send)),
            state: Mutex::new(State::default()),
            next_id: Mutex::new(1),
            greeted: watch::channel(false).0,
            log: Mutex::new(None),
        });
        let writing = Arc::downgrade(&process);
        std::thread::spawn(move || write_lines(stdin, receive, writing));
        let reading = process.clone();
        // Parsing a reply recurses once per level of its nesting. A thread that cannot start
        // panics here as `std::thread::spawn` would beside it.
        std::thread::Builder::new()
            .stack_size(READER_STACK)
            .spawn(move || read_replies(&reading, stdout))
            .expect("a thread to read the driver's replies");
        let logging = Arc::downgrade(&process);
        std::thread::spawn(move || log_stderr(stderr, logging));
        Ok(process)
    }

    /// Waits, up to `within`, for the hello; false when it did not come.
    pub async fn greeted(&self, within: Duration) -> bool {
        let mut greeted = self.greeted.subscribe();
        let came = tokio::time::timeout(within, greeted.wait_for(|g| *g)).await;
        came.is_ok()
    }

    /// Sends the driver's stderr to the log of the current thread's subscriber (the
    /// scenario's), or nowhere with `false`.
    pub fn log_here(&self, here: bool) {
        *locked(&self.log) = here.then(|| tracing::dispatcher::get_default(Clone::clone));
    }

    /// Sends one step; its answer comes on the receiver.
    pub fn request(&self, step: DriverStep) -> (u64, oneshot::Receiver<Answer>) {
        let id = self.next_id();
        let (send, receive) = oneshot::channel();
        let mut state = locked(&self.state);
        if let Some(fault) = state.fault.clone() {
            let _ = send.send(Err(fault));
            return (id, receive);
        }
        state.pending.insert(id, send);
        if let Some(ended) = state.ended.clone() {
            drop(state);
            self.fail(ended);
            return (id, receive);
        }
        drop(state);
        self.send(&Request { id, step });
        (id, receive)
    }

    /// Abandons the request `of` (its answer no longer matters): tells the driver to cancel.
    pub fn cancel(&self, of: u64) {
        if locked(&self.state).pending.remove(&of).is_none() {
            return;
        }
        let id = self.next_id();
        self.send(&Request {
            id,
            step: DriverStep::Cancel { of },
        });
    }

    /// Forgets every request still waiting (a scenario's, ended).
    pub fn forget_pending(&self) {
        locked(&self.state).pending.clear();
    }

    fn next_id(&self) -> u64 {
        let mut next = locked(&self.next_id);
        let id = *next;
        *next += 1;
        id
    }

    fn send(&self, request: &Request) {
        let mut line = serde_json::to_vec(request).unwrap_or_default();
        line.push(b'\n');
        let sent = match locked(&self.writer).as_ref() {
            Some(writer) => writer.send(line).is_ok(),
            None => false,
        };
        if !sent {
            self.fail("cannot write to the driver (it may have exited)".into());
        }
    }

    /// The driver broke the protocol: fail what waits, and every later step.
    pub fn fail(&self, fault: String) {
        let waiting: Vec<_> = {
            let mut state = locked(&self.state);
            state.fault.get_or_insert(fault.clone());
            state.pending.drain().map(|(_, w)| w).collect()
        };
        self.greeted.send_replace(true);
        for waiting in waiting {
            let _ = waiting.send(Err(fault.clone()));
        }
    }

    /// The fault, if the driver broke the protocol.
    pub fn fault(&self) -> Option<String> {
        locked(&self.state).fault.clone()
    }

    /// Whether the driver can serve another scenario: no fault, its output open, alive.
    pub fn healthy(&self) -> Result<(), String> {
        let state = locked(&self.state);
        if let Some(fault) = state.fault.clone().or(state.ended.clone()) {
            return Err(fault);
        }
        drop(state);
        match locked(&self.child).try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!("the driver exited ({status})")),
            Err(e) => Err(format!("cannot wait for the driver: {e}")),
        }
    }

    /// Whether the driver has exited, and how.
    pub fn try_wait(&self) -> Result<Option<std::process::ExitStatus>, String> {
        locked(&self.child)
            .try_wait()
            .map_err(|e| format!("cannot wait for the driver: {e}"))
    }

    /// Closes its stdin (asking it to exit), waits a little, then kills its group.
    pub fn stop(&self) {
        locked(&self.writer).take();
        let deadline = Instant::now() + EXIT_BOUND;
        while matches!(self.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.kill();
    }

    /// Kills the driver's process group and reaps the driver.
    pub fn kill(&self) {
        super::kill_group(&mut locked(&self.child));
    }
}

fn write_lines(
    mut stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<Vec<u8>>,
    process: std::sync::Weak<DriverProcess>,
) {
    for line in lines {
        if let Err(e) = stdin.write_all(&line).and_then(|()| stdin.flush()) {
            if let Some(process) = process.upgrade() {
                process.fail(format!(
                    "cannot write to the driver (it may have exited): {e}"
                ));
            }
            return;
        }
    }
}

fn read_replies(process: &DriverProcess, stdout: std::process::ChildStdout) {
    let mut reader = std::io::BufReader::new(stdout);
    let mut greeted = false;
    loop {
        let line = match lines::read_line_blocking(&mut reader, MAX_LINE) {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                process.fail(format!("cannot read the driver's output: {e}"));
                return;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !greeted {
            greeted = true;
            if let Err(e) = parse_hello(&line) {
                process.fail(format!(
                    "the driver `{}`'s first line is not a hello: {e}",
                    process.command
                ));
                return;
            }
            process.greeted.send_replace(true);
            continue;
        }
        if let Err(e) = bounded(&line) {
            process.fail(format!("the driver `{}` wrote {e}", process.command));
            return;
        }
        match parse_bounded::<Reply>(&line) {
            Ok(reply) => {
                let waiting = locked(&process.state).pending.remove(&reply.id);
                let answer = if reply.ok {
                    Ok(reply.value.unwrap_or(Value::Null))
                } else {
                    Err(reply.error.map_or_else(
                        || "(the driver gave no error text)".into(),
                        |text| crate::text::cut(&text, MAX_ERROR_TEXT),
                    ))
                };
                if let Some(waiting) = waiting {
                    let _ = waiting.send(answer);
                }
            }
            Err(e) => {
                process.fail(format!(
                    "the driver wrote something that is not a reply ({e}): {}",
                    shown(&line)
                ));
                return;
            }
        }
    }
    let status = match process.try_wait() {
        Ok(Some(status)) => status.to_string(),
        _ => "still running".into(),
    };
    let ended = format!("the driver closed its output ({status})");
    let mut state = locked(&process.state);
    if state.pending.is_empty() {
        state.ended = Some(ended);
    } else {
        drop(state);
        process.fail(ended);
    }
}

/// The driver's stderr is the client's log: one INFO event per line, target `driver`, in
/// the log of the scenario the driver serves.
fn log_stderr(stderr: std::process::ChildStderr, process: std::sync::Weak<DriverProcess>) {
    let mut reader = std::io::BufReader::new(stderr);
    while let Ok(Some(line)) = lines::read_line_blocking(&mut reader, 64 * 1024) {
        let Some(process) = process.upgrade() else {
            return;
        };
        let log = locked(&process.log).clone();
        if let Some(log) = log {
            tracing::dispatcher::with_default(&log, || {
                tracing::info!(target: "driver", "{}", String::from_utf8_lossy(&line));
            });
        }
    }
}
