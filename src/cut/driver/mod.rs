//! A client in any language, through a driver: a process started once per scenario that
//! speaks JSON lines on its stdin/stdout ([`protocol`]). Its stderr is the client's log.
//!
//! A driver that hangs, exits early or writes something that is not a protocol message is
//! that client's failure in that scenario ([`ClientUnderTest::client_fault`]), bounded by
//! the runner's step guard; its process group is killed once the scenario's facts are taken.

mod hello;
mod lines;
pub mod protocol;
pub mod serve;

use super::{
    ClientUnderTest, Described, ServerProbe, Settings, StepError, StepResult, Target, ToolLayerStep,
};
use protocol::{DriverStep, Reply, Request};
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::sync::oneshot;

use hello::{bounded, parse_hello, shown};
pub use hello::{probe, probe_in};

/// The longest line read from a driver (a reply carrying a large result fits; an endless
/// line does not grow memory without end). A longer line is the driver's fault.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// The most JSON values (array elements, object members) one line from a driver may hold:
/// parsed, each costs tens of bytes, so an 8 MiB `[0,0,…]` would take hundreds of megabytes
/// (and every report that keeps it as much again). A heavier reply is the driver's fault.
pub const MAX_REPLY_VALUES: usize = 50_000;

/// The deepest nesting of arrays and objects in one line from a driver (serde_json's own
/// recursion limit, stated here so the error names it).
pub const MAX_REPLY_DEPTH: usize = 128;

/// The most characters of a driver's error text kept (a report repeats it; the rest is cut
/// and marked): room for a client's kept stderr tail (a few KiB) with its context.
pub const MAX_ERROR_TEXT: usize = 64 * 1024;

/// The most characters of the name and of the version a driver's hello gives (every
/// scenario's result carries the label).
pub const MAX_LABEL: usize = 200;

/// How long a driver may take to exit once its stdin closes, before its group is killed.
const EXIT_BOUND: Duration = Duration::from_millis(500);

/// Why a driver could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// The command line is empty or badly quoted.
    #[error("invalid driver command `{0}`")]
    Command(String),
    /// The program could not be started.
    #[error("cannot start the driver `{program}`")]
    Start {
        /// The program.
        program: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The driver did not say hello as its first line.
    #[error("the driver did not say hello: {0}")]
    Hello(String),
}

/// Splits a driver command line as a shell would split words (`node driver.mjs --x 'a b'`).
pub fn split_command(command: &str) -> Result<Vec<String>, DriverError> {
    match shlex::split(command) {
        Some(words) if !words.is_empty() => Ok(words),
        _ => Err(DriverError::Command(command.to_string())),
    }
}

fn spawn(argv: &[String], dir: Option<&Path>) -> Result<Child, DriverError> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| DriverError::Command(String::new()))?;
    let mut command = Command::new(program);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        command.pre_exec(|| {
            // A safety net: should the runner die, its driver goes too.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // The driver is its client's host (`interrupt_host`): it takes a Ctrl+C as a
            // program in a terminal does, even where a shell started us with SIGINT ignored.
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    command.spawn().map_err(|source| DriverError::Start {
        program: program.clone(),
        source,
    })
}

/// Kills the driver's process group and reaps the driver.
fn kill_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: killpg with the group the driver leads (process_group(0)); no memory is touched.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
    let _ = child.wait();
}

/// A client under test behind a driver process.
pub struct DriverClient {
    argv: Vec<String>,
    described: Described,
    /// How long the driver may take to say hello.
    hello_within: Duration,
    running: RefCell<Option<Rc<Running>>>,
    /// The driver could not be started.
    start_fault: RefCell<Option<String>>,
    /// The folder the driver starts in; this process's own when `None`.
    dir: Option<PathBuf>,
}

/// A started driver.
struct Running {
    /// The driver's command line, as its faults name it.
    command: String,
    child: RefCell<Child>,
    stdin: tokio::sync::Mutex<Option<tokio::process::ChildStdin>>,
    pending: RefCell<HashMap<u64, oneshot::Sender<Result<Value, String>>>>,
    next_id: Cell<u64>,
    /// The driver broke the protocol: every step from now on fails with this.
    fault: RefCell<Option<String>>,
    /// The driver's stdout ended (not yet a fault, unless a step was waiting).
    ended: RefCell<Option<String>>,
    /// Told once the hello (or a fault) came.
    greeted: tokio::sync::Notify,
}

impl DriverClient {
    /// A driver started with `argv` for each scenario, which described itself as
    /// `described` (see [`probe`]) and says hello within `hello_within`.
    pub fn new(argv: Vec<String>, described: Described, hello_within: Duration) -> Self {
        DriverClient {
            argv,
            described,
            hello_within,
            running: RefCell::new(None),
            start_fault: RefCell::new(None),
            dir: None,
        }
    }

    /// The same driver, started in `dir` (a matrix row's commands run in the rows' folder).
    pub fn in_dir(mut self, dir: PathBuf) -> Self {
        self.dir = Some(dir);
        self
    }

    fn running(&self) -> Result<Rc<Running>, StepError> {
        if let Some(running) = self.running.borrow().as_ref() {
            return Ok(running.clone());
        }
        let mut child = spawn(&self.argv, self.dir.as_deref())
            .map_err(|e| StepError::new(crate::error_chain(&e)))?;
        let handles = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (Some(stdin), Some(stdout), Some(stderr)) = handles else {
            kill_group(&mut child);
            return Err(StepError::new("the driver has no stdin, stdout or stderr"));
        };
        let io =
            |e: std::io::Error| StepError::new(format!("cannot watch the driver's pipes: {e}"));
        let stdin = tokio::process::ChildStdin::from_std(stdin).map_err(io)?;
        let stdout = tokio::process::ChildStdout::from_std(stdout).map_err(io)?;
        let stderr = tokio::process::ChildStderr::from_std(stderr).map_err(io)?;
        let running = Rc::new(Running {
            command: crate::text::cut(&self.argv.join(" "), MAX_LABEL),
            child: RefCell::new(child),
            stdin: tokio::sync::Mutex::new(Some(stdin)),
            pending: RefCell::new(HashMap::new()),
            next_id: Cell::new(1),
            fault: RefCell::new(None),
            ended: RefCell::new(None),
            greeted: tokio::sync::Notify::new(),
        });
        tokio::task::spawn_local(read_replies(running.clone(), stdout));
        tokio::task::spawn_local(log_stderr(stderr));
        *self.running.borrow_mut() = Some(running.clone());
        Ok(running)
    }

    /// Sends one step and waits for its reply. Dropped before the reply (a cancelled
    /// call), it tells the driver to cancel.
    async fn send_step(&self, step: DriverStep) -> StepResult {
        let running = self.running()?;
        if let Some(fault) = running.fault.borrow().clone() {
            return Err(StepError::new(fault));
        }
        let id = running.next_id.get();
        running.next_id.set(id + 1);
        let (send, receive) = oneshot::channel();
        running.pending.borrow_mut().insert(id, send);
        let guard = CancelOnDrop {
            running: running.clone(),
            id,
            armed: true,
        };
        let ended = running.ended.borrow().clone();
        if let Some(ended) = ended {
            running.fail(ended);
        } else {
            running.send(&Request { id, step }).await;
        }
        let reply = receive.await;
        let mut guard = guard;
        // Answered: nothing to cancel.
        guard.armed = false;
        match reply {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(text)) => Err(StepError::new(text)),
            Err(_) => Err(StepError::new(
                running
                    .fault
                    .borrow()
                    .clone()
                    .unwrap_or_else(|| "the driver went away".into()),
            )),
        }
    }
}

impl Running {
    async fn send(self: &Rc<Self>, request: &Request) {
        let mut line = serde_json::to_vec(request).unwrap_or_default();
        line.push(b'\n');
        let mut stdin = self.stdin.lock().await;
        let written = match stdin.as_mut() {
            Some(stdin) => match stdin.write_all(&line).await {
                Ok(()) => stdin.flush().await,
                Err(e) => Err(e),
            },
            None => Ok(()),
        };
        if let Err(e) = written {
            self.fail(format!(
                "cannot write to the driver (it may have exited): {e}"
            ));
        }
    }

    /// The driver broke the protocol: fail what waits, and every later step.
    fn fail(&self, fault: String) {
        self.fault.borrow_mut().get_or_insert(fault.clone());
        self.greeted.notify_one();
        for (_, waiting) in self.pending.borrow_mut().drain() {
            let _ = waiting.send(Err(fault.clone()));
        }
    }

    /// Waits, bounded, for the driver to exit on its own.
    fn await_exit(&self) {
        let deadline = Instant::now() + EXIT_BOUND;
        while matches!(self.child.borrow_mut().try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Tells the driver to cancel a request whose future was dropped before its reply.
struct CancelOnDrop {
    running: Rc<Running>,
    id: u64,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if !self.armed || self.running.pending.borrow_mut().remove(&self.id).is_none() {
            return;
        }
        let running = self.running.clone();
        let of = self.id;
        let id = running.next_id.get();
        running.next_id.set(id + 1);
        tokio::task::spawn_local(async move {
            running
                .send(&Request {
                    id,
                    step: DriverStep::Cancel { of },
                })
                .await
        });
    }
}

async fn read_replies(running: Rc<Running>, stdout: tokio::process::ChildStdout) {
    let mut reader = tokio::io::BufReader::new(stdout);
    let mut greeted = false;
    loop {
        let line = match lines::read_line(&mut reader, MAX_LINE).await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                running.fail(format!("cannot read the driver's output: {e}"));
                return;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !greeted {
            greeted = true;
            if let Err(e) = parse_hello(&line) {
                running.fail(format!(
                    "the driver `{}`'s first line is not a hello: {e}",
                    running.command
                ));
                return;
            }
            running.greeted.notify_one();
            continue;
        }
        if let Err(e) = bounded(&line) {
            running.fail(format!("the driver `{}` wrote {e}", running.command));
            return;
        }
        match serde_json::from_slice::<Reply>(&line) {
            Ok(reply) => {
                let waiting = running.pending.borrow_mut().remove(&reply.id);
                let result = if reply.ok {
                    Ok(reply.value.unwrap_or(Value::Null))
                } else {
                    Err(reply.error.map_or_else(
                        || "(the driver gave no error text)".into(),
                        |text| crate::text::cut(&text, MAX_ERROR_TEXT),
                    ))
                };
                if let Some(waiting) = waiting {
                    let _ = waiting.send(result);
                }
            }
            Err(e) => {
                running.fail(format!(
                    "the driver wrote something that is not a reply ({e}): {}",
                    shown(&line)
                ));
                return;
            }
        }
    }
    let status = match running.child.borrow_mut().try_wait() {
        Ok(Some(status)) => status.to_string(),
        _ => "still running".into(),
    };
    let ended = format!("the driver closed its output ({status})");
    if running.pending.borrow().is_empty() {
        *running.ended.borrow_mut() = Some(ended);
    } else {
        running.fail(ended);
    }
}

/// The driver's stderr is the client's log: one INFO event per line, target `driver`.
async fn log_stderr(stderr: tokio::process::ChildStderr) {
    let mut reader = tokio::io::BufReader::new(stderr);
    while let Ok(Some(line)) = lines::read_line(&mut reader, 64 * 1024).await {
        tracing::info!(target: "driver", "{}", String::from_utf8_lossy(&line));
    }
}

impl ClientUnderTest for DriverClient {
    fn describe(&self) -> Described {
        self.described.clone()
    }

    async fn ready(&self) {
        let running = match self.running() {
            Ok(running) => running,
            Err(e) => {
                *self.start_fault.borrow_mut() = Some(e.text);
                return;
            }
        };
        if tokio::time::timeout(self.hello_within, running.greeted.notified())
            .await
            .is_err()
        {
            running.fail(format!(
                "the driver said no hello within {} ms",
                self.hello_within.as_millis()
            ));
        }
    }

    async fn connect(&self, target: &Target, settings: &Settings) -> StepResult {
        self.send_step(DriverStep::Connect {
            target: target.clone(),
            settings: settings.clone(),
        })
        .await
    }

    async fn list_tools(&self) -> StepResult {
        self.send_step(DriverStep::ListTools).await
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> StepResult {
        let timeout_ms = timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX));
        self.send_step(DriverStep::CallTool {
            name: name.into(),
            arguments,
            timeout_ms,
        })
        .await
    }

    async fn close(&self) -> StepResult {
        self.send_step(DriverStep::Close).await
    }

    async fn drop_connection(&self) -> StepResult {
        if self.running.borrow().is_none() {
            return Ok(json!(false));
        }
        self.send_step(DriverStep::Drop).await
    }

    async fn exited(&self) -> Result<Option<String>, StepError> {
        let value = self.send_step(DriverStep::Exited).await?;
        match value {
            Value::Null => Ok(None),
            Value::String(text) => Ok(Some(text)),
            other => Err(StepError::new(format!(
                "the driver answered `exited` with {other}, not a text or null"
            ))),
        }
    }

    async fn list_changed_count(&self) -> Result<u64, StepError> {
        let value = self.send_step(DriverStep::ListChangedCount).await?;
        value.as_u64().ok_or_else(|| {
            StepError::new(format!(
                "the driver answered `list_changed_count` with {value}, not a count"
            ))
        })
    }

    async fn reconnect(&self) -> StepResult {
        self.send_step(DriverStep::Reconnect).await
    }

    async fn tool_layer(&self, step: ToolLayerStep) -> StepResult {
        self.send_step(DriverStep::ToolLayer { layer: step }).await
    }

    async fn request(&self, method: &str, params: Option<Value>) -> StepResult {
        self.send_step(DriverStep::Request {
            method: method.into(),
            params,
        })
        .await
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> StepResult {
        self.send_step(DriverStep::Notify {
            method: method.into(),
            params,
        })
        .await
    }

    async fn server_info(&self) -> StepResult {
        self.send_step(DriverStep::ServerInfo).await
    }

    async fn server_pid(&self) -> Result<Option<u32>, StepError> {
        match self.send_step(DriverStep::ServerPid).await? {
            Value::Null => Ok(None),
            value => value
                .as_u64()
                .and_then(|pid| u32::try_from(pid).ok())
                .map(Some)
                .ok_or_else(|| {
                    StepError::new(format!(
                        "the driver answered `server_pid` with {value}, not a pid or null"
                    ))
                }),
        }
    }

    async fn session_id(&self) -> Result<Option<String>, StepError> {
        match self.send_step(DriverStep::SessionId).await? {
            Value::Null => Ok(None),
            Value::String(id) => Ok(Some(id)),
            other => Err(StepError::new(format!(
                "the driver answered `session_id` with {other}, not a text or null"
            ))),
        }
    }

    /// The driver process is its client's host: it connects (a `connect` step), then the
    /// runner sends SIGINT to the driver's process group, as a Ctrl+C in its terminal would,
    /// and reports what became of the driver and the server. The driver is gone after it.
    async fn interrupt_host(
        &self,
        target: &Target,
        settings: &Settings,
        server: &ServerProbe,
    ) -> StepResult {
        if !matches!(target, Target::Stdio(_)) {
            return Err(StepError::new("interrupt_host needs a stdio server"));
        }
        self.connect(target, settings).await?;
        let running = self.running()?;
        let group = running.child.borrow().id();
        let ended = async {
            let deadline = tokio::time::Instant::now() + crate::cut::host::HOST_BOUND;
            loop {
                match running.child.borrow_mut().try_wait() {
                    Ok(Some(status)) => return Ok(status),
                    Ok(None) if tokio::time::Instant::now() < deadline => {}
                    Ok(None) => return Err("the driver outlived SIGINT".to_string()),
                    Err(e) => return Err(format!("cannot wait for the driver: {e}")),
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        let reported = crate::cut::host::interrupt_group(group, &[], &server.log_path, ended).await;
        // Its end was the step's: no later step, nor the runner's closing drop, talks to it.
        if let Some(running) = self.running.borrow_mut().take() {
            kill_group(&mut running.child.borrow_mut());
        }
        // A driver that outlives the signal is its client's failure, not the harness's.
        reported.map_err(|e| StepError::new(e.text))
    }

    fn client_fault(&self) -> Option<String> {
        let fault = self
            .running
            .borrow()
            .as_ref()
            .and_then(|r| r.fault.borrow().clone());
        fault.or_else(|| self.start_fault.borrow().clone())
    }

    fn finish(&self) {
        let Some(running) = self.running.borrow_mut().take() else {
            return;
        };
        // Closing its stdin asks the driver to exit; what is left of its group goes after.
        if let Ok(mut stdin) = running.stdin.try_lock() {
            stdin.take();
        }
        running.await_exit();
        kill_group(&mut running.child.borrow_mut());
    }
}

impl Drop for DriverClient {
    fn drop(&mut self) {
        self.finish();
    }
}
