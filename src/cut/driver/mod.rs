//! A client in any language, through a driver: a process that speaks JSON lines on its
//! stdin/stdout ([`protocol`]), started once per scenario, or once for many when it declares
//! `reusable` ([`pool`]). Its stderr is the client's log.
//!
//! A driver that hangs, exits early or writes something that is not a protocol message is
//! that client's failure in that scenario ([`ClientUnderTest::client_fault`]), bounded by
//! the runner's step guard; its process group is killed once the scenario's facts are taken
//! (or, reused, it is reset and checked clean).

mod hello;
mod lines;
pub mod pool;
mod process;
pub mod protocol;
pub mod serve;

use super::{
    ClientUnderTest, Described, ServerProbe, Settings, StepError, StepResult, Target, ToolLayerStep,
};
pub use pool::DriverPool;
use process::DriverProcess;
use protocol::DriverStep;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

pub use hello::{probe, probe_in};

/// The longest line read from a driver (a reply carrying a large result fits; an endless
/// line does not grow memory without end). A longer line is the driver's fault.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// The most JSON values (array elements, object members) one line from a driver may hold:
/// parsed, each costs tens of bytes, so an 8 MiB `[0,0,…]` would take hundreds of megabytes
/// (and every report that keeps it as much again). A heavier reply is the driver's fault.
pub const MAX_REPLY_VALUES: usize = 50_000;

/// The deepest nesting of arrays and objects in one line from a driver: far past what any
/// scenario sends (`stdio/response-nested-too-deep-skipped`: 200 levels, a valid response a
/// client may well read and hand back), so the protocol carries whatever JSON the client
/// received; the bound is weighed before parsing, which then goes without serde_json's own
/// limit of 128 (on a reader thread with [`READER_STACK`] of stack).
pub const MAX_REPLY_DEPTH: usize = 1_000;

/// The stack of the thread that reads and parses a driver's replies: room for a reply
/// [`MAX_REPLY_DEPTH`] levels deep (parsing recurses once per level).
pub const READER_STACK: usize = 16 * 1024 * 1024;

/// The most characters of a driver's error text kept (a report repeats it; the rest is cut
/// and marked): room for a client's kept stderr tail (a few KiB) with its context.
pub const MAX_ERROR_TEXT: usize = 64 * 1024;

/// The most characters of the name and of the version a driver's hello gives (every
/// scenario's result carries the label).
pub const MAX_LABEL: usize = 200;

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

/// A spawn asked of the keeper thread, and where its child goes.
type SpawnOrder = (
    Vec<String>,
    Option<PathBuf>,
    std::sync::mpsc::Sender<Result<Child, DriverError>>,
);

/// Starts a driver from a thread that lives as long as this process: its parent-death
/// signal fires when the thread that started it ends, and a reused driver outlives the
/// worker thread whose scenario first needed it.
fn spawn(argv: &[String], dir: Option<&Path>) -> Result<Child, DriverError> {
    static KEEPER: std::sync::OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<SpawnOrder>>> =
        std::sync::OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (orders, received) = std::sync::mpsc::channel::<SpawnOrder>();
        std::thread::spawn(move || {
            for (argv, dir, reply) in received {
                // Between the fork and the exec the driver holds a copy of every descriptor
                // of this process: not while a scenario needs one gone.
                let spawning = crate::cut::spawn_lock::spawning();
                let started = spawn_here(&argv, dir.as_deref());
                drop(spawning);
                let _ = reply.send(started);
            }
        });
        std::sync::Mutex::new(orders)
    });
    let (reply, child) = std::sync::mpsc::channel();
    let sent = keeper.lock().unwrap_or_else(|e| e.into_inner()).send((
        argv.to_vec(),
        dir.map(Path::to_path_buf),
        reply,
    ));
    let lost = || DriverError::Start {
        program: argv.first().cloned().unwrap_or_default(),
        source: std::io::Error::other("the thread that starts drivers is gone"),
    };
    sent.map_err(|_| lost())?;
    child.recv().map_err(|_| lost())?
}

fn spawn_here(argv: &[String], dir: Option<&Path>) -> Result<Child, DriverError> {
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
            // A safety net: should the runner die, its driver goes too (the keeper thread
            // that started it lives as long as the runner).
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
    process: RefCell<Option<Arc<DriverProcess>>>,
    /// The driver could not be started.
    start_fault: RefCell<Option<String>>,
    /// The folder the driver starts in; this process's own when `None`.
    dir: Option<PathBuf>,
    /// Where a reusable driver's process comes from and goes back to.
    pool: Option<Arc<DriverPool>>,
    /// The scenario's facts are about the driver process: it gets one of its own.
    fresh: bool,
}

impl DriverClient {
    /// A driver started with `argv` for each scenario, which described itself as
    /// `described` (see [`probe`]) and says hello within `hello_within`.
    pub fn new(argv: Vec<String>, described: Described, hello_within: Duration) -> Self {
        DriverClient {
            argv,
            described,
            hello_within,
            process: RefCell::new(None),
            start_fault: RefCell::new(None),
            dir: None,
            pool: None,
            fresh: false,
        }
    }

    /// The same driver, started in `dir` (a matrix row's commands run in the rows' folder).
    pub fn in_dir(mut self, dir: PathBuf) -> Self {
        self.dir = Some(dir);
        self
    }

    fn process(&self) -> Result<Arc<DriverProcess>, StepError> {
        if let Some(process) = self.process.borrow().as_ref() {
            return Ok(process.clone());
        }
        // Started once: a second start could come inside the scenario's place beside the
        // others, where a fork must not wait for the lock it holds.
        if let Some(fault) = self.start_fault.borrow().as_ref() {
            return Err(StepError::new(fault.clone()));
        }
        let pooled = match &self.pool {
            Some(pool) if !self.fresh => pool.take_idle(),
            _ => None,
        };
        let process = match pooled {
            Some(process) => process,
            None => {
                let child = spawn(&self.argv, self.dir.as_deref())
                    .map_err(|e| StepError::new(crate::error_chain(&e)))?;
                if let Some(pool) = &self.pool {
                    pool.started(self.fresh);
                }
                let command = crate::text::cut(&self.argv.join(" "), MAX_LABEL);
                DriverProcess::watch(command, child).map_err(|(mut child, why)| {
                    kill_group(&mut child);
                    StepError::new(why)
                })?
            }
        };
        *self.process.borrow_mut() = Some(process.clone());
        Ok(process)
    }

    /// The driver's process, started or taken from the pool if need be; a start that failed
    /// is kept as the client's fault.
    fn started(&self) -> Option<Arc<DriverProcess>> {
        self.process()
            .map_err(|e| *self.start_fault.borrow_mut() = Some(e.text))
            .ok()
    }

    /// Sends one step and waits for its reply. Dropped before the reply (a cancelled
    /// call), it tells the driver to cancel.
    async fn send_step(&self, step: DriverStep) -> StepResult {
        let process = self.process()?;
        let (id, answer) = process.request(step);
        let guard = CancelOnDrop {
            process: process.clone(),
            id,
            armed: true,
        };
        let answer = answer.await;
        let mut guard = guard;
        // Answered: nothing to cancel.
        guard.armed = false;
        match answer {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(text)) => Err(StepError::new(text)),
            Err(_) => Err(StepError::new(
                process
                    .fault()
                    .unwrap_or_else(|| "the driver went away".into()),
            )),
        }
    }
}

/// Tells the driver to cancel a request whose future was dropped before its reply.
struct CancelOnDrop {
    process: Arc<DriverProcess>,
    id: u64,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.process.cancel(self.id);
        }
    }
}

impl ClientUnderTest for DriverClient {
    fn describe(&self) -> Described {
        self.described.clone()
    }

    fn prepare(&self) {
        let _ = self.started();
    }

    fn forks_here(&self) -> bool {
        false
    }

    async fn ready(&self) {
        let Some(process) = self.started() else {
            return;
        };
        process.log_here(true);
        if !process.greeted(self.hello_within).await {
            process.fail(format!(
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
        if self.process.borrow().is_none() {
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
        let process = self.process()?;
        let ended = async {
            let deadline = tokio::time::Instant::now() + crate::cut::host::HOST_BOUND;
            loop {
                match process.try_wait() {
                    Ok(Some(status)) => return Ok(status),
                    Ok(None) if tokio::time::Instant::now() < deadline => {}
                    Ok(None) => return Err("the driver outlived SIGINT".to_string()),
                    Err(e) => return Err(e),
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        let reported =
            crate::cut::host::interrupt_group(process.pid, &[], &server.log_path, ended).await;
        // Its end was the step's: no later step, nor the runner's closing drop, talks to it.
        if let Some(process) = self.process.borrow_mut().take() {
            process.kill();
        }
        // A driver that outlives the signal is its client's failure, not the harness's.
        reported.map_err(|e| StepError::new(e.text))
    }

    fn client_fault(&self) -> Option<String> {
        let fault = self.process.borrow().as_ref().and_then(|p| p.fault());
        fault.or_else(|| self.start_fault.borrow().clone())
    }

    fn release(&self, started: &[u32], failed: bool) -> Option<String> {
        let process = self.process.borrow_mut().take()?;
        match &self.pool {
            Some(pool) if !self.fresh => pool.give_back(process, started, failed),
            _ => {
                process.log_here(false);
                process.stop();
                None
            }
        }
    }

    fn finish(&self) {
        if let Some(process) = self.process.borrow_mut().take() {
            process.log_here(false);
            process.stop();
        }
    }
}

impl Drop for DriverClient {
    fn drop(&mut self) {
        self.finish();
    }
}
