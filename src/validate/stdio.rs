//! A raw stdio session with a server under validation: newline-delimited JSON-RPC on the
//! child's stdin/stdout, spoken directly so every byte the server writes is seen (the
//! reference client skips what it must tolerate; the validator has to judge it). Every wait
//! is bounded.

use super::log::{SessionLog, SharedLog};
use super::outcome::excerpt;
use super::target::Target;
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// How much of the server's stderr is kept for error texts.
const STDERR_TAIL: usize = 2048;

/// One request and what came back.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The line sent.
    pub sent: String,
    /// The response message, or why none came within the bound.
    pub reply: Result<Value, String>,
}

impl Exchange {
    /// The `result` of a successful response.
    pub fn result(&self) -> Option<&Value> {
        self.reply.as_ref().ok().and_then(|m| m.get("result"))
    }

    /// The `error.code` of an error response.
    pub fn error_code(&self) -> Option<i64> {
        self.reply.as_ref().ok().and_then(|m| m.get("error")).and_then(|e| e.get("code")).and_then(Value::as_i64)
    }

    /// What came back, as text for a report: the message, or why nothing did.
    pub fn received(&self) -> String {
        match &self.reply {
            Ok(message) => message.to_string(),
            Err(why) => format!("no response: {why}"),
        }
    }
}

/// How a session ended when its stdin was closed.
#[derive(Clone, Debug)]
pub enum Closed {
    /// The server exited on its own after this long, with this status.
    Exited(Duration, String),
    /// It was still running at the bound and was killed.
    Killed(Duration),
}

/// A running server and the session's bookkeeping.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: mpsc::UnboundedReceiver<Value>,
    log: SharedLog,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: Option<tokio::task::JoinHandle<()>>,
    next_id: i64,
    timeout: Duration,
    command: String,
}

impl Session {
    /// Starts the server. The error is a one-line reason (`cannot start …`).
    pub fn spawn(target: &Target, label: &str, timeout: Duration) -> Result<Session, String> {
        let Target::Stdio { command, args, env } = target else {
            return Err("not a stdio target".into());
        };
        let mut cmd = Command::new(command);
        cmd.args(args)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| format!("cannot start `{command}`: {e}"))?;
        let log: SharedLog = Arc::new(Mutex::new(SessionLog::new(label)));
        let (tx, incoming) = mpsc::unbounded_channel();
        if let Some(stdout) = child.stdout.take() {
            tokio::spawn(read_stdout(stdout, tx, log.clone()));
        }
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let stderr_done = child.stderr.take().map(|pipe| tokio::spawn(drain_stderr(pipe, stderr.clone())));
        Ok(Session {
            stdin: child.stdin.take(),
            child,
            incoming,
            log,
            stderr,
            stderr_done,
            next_id: 0,
            timeout,
            command: target.describe(),
        })
    }

    /// The session's log (every line the server wrote, the methods of our requests).
    pub fn log(&self) -> SharedLog {
        self.log.clone()
    }

    /// The per-operation bound.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Writes one line (a newline is added).
    pub async fn send_line(&mut self, line: &str) -> Result<(), String> {
        let Some(stdin) = self.stdin.as_mut() else { return Err("stdin already closed".into()) };
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let write = async {
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        };
        match tokio::time::timeout(self.timeout, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                let gone = self.gone().await;
                Err(format!("cannot write to the server ({e}): {gone}"))
            }
            Err(_) => Err(format!("writing to the server blocked for {:?}", self.timeout)),
        }
    }

    /// Sends a request and waits (bounded) for the response with its id. Server requests
    /// meanwhile are answered (`ping` with `{}`, others with -32601); notifications are logged.
    pub async fn request(&mut self, method: &str, params: Option<Value>) -> Exchange {
        self.next_id += 1;
        let id = json!(self.next_id);
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.request_raw(message).await
    }

    /// Sends a request message as given (its `id` and `method` are used to match the answer).
    pub async fn request_raw(&mut self, message: Value) -> Exchange {
        let sent = message.to_string();
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        if let Some(method) = message.get("method").and_then(Value::as_str) {
            self.lock_log().methods.insert(id.to_string(), method.to_string());
        }
        if let Err(why) = self.send_line(&sent).await {
            return Exchange { sent, reply: Err(why) };
        }
        let reply = self.wait_for(|m| is_response(m) && m.get("id") == Some(&id)).await;
        Exchange { sent, reply }
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> Result<String, String> {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        let line = message.to_string();
        self.send_line(&line).await.map(|()| line)
    }

    /// `initialize` offering `revision`, then (if it succeeded) `notifications/initialized`.
    pub async fn handshake(&mut self, revision: &str) -> Exchange {
        let params = json!({
            "protocolVersion": revision,
            "capabilities": {},
            "clientInfo": {"name": "mcp-conformance-validate", "version": env!("CARGO_PKG_VERSION")},
        });
        let exchange = self.request("initialize", Some(params)).await;
        if let Some(version) = exchange.result().and_then(|r| r.get("protocolVersion")).and_then(Value::as_str) {
            self.lock_log().revision = Some(version.to_string());
            if let Err(why) = self.notify("notifications/initialized", None).await {
                return Exchange { sent: exchange.sent, reply: Err(why) };
            }
        }
        exchange
    }

    /// Waits (bounded) for a message matching `wanted`; every other message is handled as
    /// [`Session::request`] describes. Returns the message, or why none came.
    pub async fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Result<Value, String> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.incoming.recv()).await {
                Err(_) => return Err(format!("nothing within {:?}", self.timeout)),
                Ok(None) => return Err(self.gone().await),
                Ok(Some(message)) if wanted(&message) => return Ok(message),
                Ok(Some(message)) => self.answer_server_request(&message).await,
            }
        }
    }

    /// Every message that arrives until a response with `id` does (used as a fence: servers
    /// answer in order, so anything caused by earlier lines comes first).
    pub async fn collect_until_response(&mut self, id: &Value) -> (Vec<Value>, Result<Value, String>) {
        let mut before = Vec::new();
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.incoming.recv()).await {
                Err(_) => return (before, Err(format!("nothing within {:?}", self.timeout))),
                Ok(None) => {
                    let why = self.gone().await;
                    return (before, Err(why));
                }
                Ok(Some(message)) if is_response(&message) && message.get("id") == Some(id) => {
                    return (before, Ok(message))
                }
                Ok(Some(message)) => {
                    self.answer_server_request(&message).await;
                    before.push(message);
                }
            }
        }
    }

    /// The next request id this session will use.
    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Closes stdin and waits up to `bound` for the server to exit; kills it (its whole
    /// process group) after that.
    pub async fn close(mut self, bound: Duration) -> Closed {
        self.stdin.take();
        let started = Instant::now();
        let outcome = match tokio::time::timeout(bound, self.child.wait()).await {
            Ok(Ok(status)) => Closed::Exited(started.elapsed(), status.to_string()),
            Ok(Err(e)) => Closed::Exited(started.elapsed(), format!("cannot be waited on: {e}")),
            Err(_) => Closed::Killed(started.elapsed()),
        };
        self.kill().await;
        outcome
    }

    /// Kills the server's process group and reaps it (bounded).
    pub async fn kill(&mut self) {
        if let Some(pid) = self.child.id().and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: killpg only sends a signal; the group is the one spawn() created.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
    }

    async fn answer_server_request(&mut self, message: &Value) {
        let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str)) else {
            return;
        };
        let reply = if method == "ping" {
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
        };
        let _ = self.send_line(&reply.to_string()).await;
    }

    /// Why the server stopped talking: its exit status and the end of its stderr (each
    /// waited for briefly).
    async fn gone(&mut self) -> String {
        let status = match tokio::time::timeout(Duration::from_millis(500), self.child.wait()).await {
            Ok(Ok(status)) => format!("exited with {status}"),
            _ => "closed its stdout".to_string(),
        };
        if let Some(done) = self.stderr_done.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), done).await;
        }
        format!("the server `{}` {status}{}", excerpt(&self.command), self.stderr_note())
    }

    fn stderr_note(&self) -> String {
        let tail = self.stderr.lock().map(|t| String::from_utf8_lossy(&t).into_owned()).unwrap_or_default();
        let last = tail.trim().lines().last().unwrap_or("").trim();
        if last.is_empty() {
            String::new()
        } else {
            format!("; stderr: {}", excerpt(last))
        }
    }

    fn lock_log(&self) -> std::sync::MutexGuard<'_, SessionLog> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A response: no method, an id, and a result or an error.
pub fn is_response(message: &Value) -> bool {
    message.get("method").is_none() && (message.get("result").is_some() || message.get("error").is_some())
}

async fn read_stdout(stdout: tokio::process::ChildStdout, tx: mpsc::UnboundedSender<Value>, log: SharedLog) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line).trim_end_matches(['\r', '\n']).to_string();
        let parsed: Option<Value> = serde_json::from_str(&text).ok().filter(Value::is_object);
        log.lock()
            .unwrap_or_else(|e| e.into_inner())
            .seen
            .push(super::log::Seen { line: text, message: parsed.clone() });
        if let Some(message) = parsed {
            if tx.send(message).is_err() {
                return;
            }
        }
    }
}

async fn drain_stderr(mut pipe: tokio::process::ChildStderr, tail: Arc<Mutex<Vec<u8>>>) {
    let mut buf = [0u8; 4096];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                tail.extend_from_slice(&buf[..n]);
                let excess = tail.len().saturating_sub(STDERR_TAIL);
                tail.drain(..excess);
            }
        }
    }
}
