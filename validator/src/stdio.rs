//! A raw stdio session with a server under validation: newline-delimited JSON-RPC on the
//! child's stdin/stdout, spoken directly so every byte the server writes is seen (the
//! reference client skips what it must tolerate; the validator has to judge it). Every wait
//! is bounded.

use super::log::{SessionLog, SharedLog};
use super::outcome::excerpt;
use super::target::Target;
pub use crate::exchange::{Exchange, Unanswered};
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// How much of the server's stderr is kept for error texts.
const STDERR_TAIL: usize = 2048;
/// The longest line read as a message; a longer one is refused (and counted) unread.
pub const MAX_LINE: usize = 4 << 20;
/// Messages read ahead of the checks; when they are full the server's writes wait.
const READ_AHEAD: usize = 16;
/// The most server requests (pings and others) a session answers; a flood is ignored past it.
const MAX_ANSWERS: usize = 64;
/// The most unrelated messages [`Session::collect_until_response`] keeps besides responses.
const KEPT_BEFORE: usize = 32;

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
    /// The server's pid, which is also its process group's id (kept after it is reaped).
    pid: Option<i32>,
    stdin: Option<ChildStdin>,
    incoming: mpsc::Receiver<Value>,
    answered: usize,
    /// Why the session stopped answering, once a wait ran out or the server left.
    pub stalled: Option<Unanswered>,
    log: SharedLog,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_done: Option<tokio::task::JoinHandle<()>>,
    next_id: i64,
    timeout: Duration,
    command: String,
    /// The client capabilities the handshake declares (none unless set before it); the
    /// server's requests for them get canned answers ([`crate::declared`]).
    pub declared: Value,
    /// How long the handshake may wait in all, once known (see [`Session::handshake`]).
    pub patience: Option<Arc<std::sync::OnceLock<Duration>>>,
    /// How long a first request may wait in all while [`Session::patience`] is not known
    /// yet: a probe started at the same time (as slow, on a busy machine) sets it
    /// once it is answered. `None`: nothing will set it, `--timeout` is all.
    pub patience_pending: Option<Duration>,
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
        // SAFETY: the closure runs in the child between fork and exec and only makes
        // async-signal-safe system calls: the server dies with the thread that started it.
        // A validator that exited between the fork and the prctl sent no death signal: the
        // parent is checked after it, so such a server never starts.
        let validator = std::process::id();
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                match u32::try_from(libc::getppid()) == Ok(validator) {
                    true => Ok(()),
                    false => Err(std::io::Error::other("the validator exited")),
                }
            });
        }
        super::timeline::event("spawn", label);
        let mut child = super::reaper::spawn_tracked(&mut cmd)
            .map_err(|e| format!("cannot start `{}`: {e}", excerpt(command)))?;
        let pid = child.id().and_then(|p| i32::try_from(p).ok());
        let log: SharedLog = Arc::new(Mutex::new(SessionLog::new(label)));
        let (tx, incoming) = mpsc::channel(READ_AHEAD);
        if let Some(stdout) = child.stdout.take() {
            tokio::spawn(read_stdout(stdout, tx, log.clone()));
        }
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let stderr_done = child
            .stderr
            .take()
            .map(|pipe| tokio::spawn(drain_stderr(pipe, stderr.clone())));
        Ok(Session {
            stdin: child.stdin.take(),
            child,
            pid,
            incoming,
            answered: 0,
            stalled: None,
            log,
            stderr,
            stderr_done,
            next_id: 0,
            timeout,
            command: target.describe(),
            declared: json!({}),
            patience: None,
            patience_pending: None,
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

    /// Writes one line (a newline is added), bounded by `--timeout`.
    pub async fn send_line(&mut self, line: &str) -> Result<(), String> {
        self.send_line_within(line, self.timeout).await
    }

    /// Writes one line (a newline is added), bounded by `bound`.
    async fn send_line_within(&mut self, line: &str, bound: Duration) -> Result<(), String> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err("stdin already closed".into());
        };
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let write = async {
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        };
        match tokio::time::timeout(bound, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => {
                let gone = self.gone().await;
                Err(format!("cannot write to the server ({e}): {gone}"))
            }
            Err(_) => Err(format!(
                "writing to the server blocked for {bound:?} (it does not read its stdin)"
            )),
        }
    }

    /// Sends a request and waits (bounded) for the response with its id. Server requests
    /// meanwhile are answered (`ping` with `{}`, those for declared client capabilities with
    /// canned answers, others with -32601); notifications are logged.
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
            self.lock_log()
                .methods
                .insert(id.to_string(), method.to_string());
        }
        if let Err(why) = self.send_line(&sent).await {
            return Exchange {
                sent,
                reply: Err(Unanswered::new(why)),
                unanswered_status: None,
            };
        }
        let reply = self.wait_for(|m| is_response_to(m, &id)).await;
        if super::timeline::enabled() {
            let method = message
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default();
            super::timeline::event("answered", &format!("{} {method}", self.lock_log().label));
        }
        Exchange {
            sent,
            reply,
            unanswered_status: None,
        }
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

    /// [`Session::request`], but a wait that only ran out of time goes on up to the
    /// patience ([`crate::patience`]): a server's first answer may come late on a busy machine.
    pub async fn request_patient(&mut self, method: &str, params: Option<Value>) -> Exchange {
        let started = Instant::now();
        let awaited = json!(self.next_id + 1);
        let mut exchange = self.request(method, params).await;
        self.wait_on(started, &awaited, &mut exchange).await;
        exchange
    }

    /// `initialize` offering `revision`, then (if it succeeded) `notifications/initialized`.
    pub async fn handshake(&mut self, revision: &str) -> Exchange {
        let params = json!({
            "protocolVersion": revision,
            "capabilities": self.declared,
            "clientInfo": {"name": "mcp-conformance-validate", "version": env!("CARGO_PKG_VERSION")},
        });
        let exchange = self.request_patient("initialize", Some(params)).await;
        if let Some(version) = exchange
            .result()
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
        {
            self.lock_log().revision = Some(version.to_string());
            // A server that answered and then exited keeps its answer: the next request
            // says it is gone.
            let _ = self.notify("notifications/initialized", None).await;
        }
        exchange
    }

    /// After a handshake request that only ran out of time (nothing at all came), waits on
    /// for the answer with id `awaited` until the patience ([`crate::patience`]) has passed
    /// since `started`; the exchange then holds the answer, or says how long was waited.
    async fn wait_on(&mut self, started: Instant, awaited: &Value, exchange: &mut Exchange) {
        let patience = self
            .patience
            .as_ref()
            .and_then(|p| p.get().copied())
            .or(self.patience_pending);
        let only_time = exchange.reply.as_ref().is_err_and(Unanswered::only_time);
        let Some(patience) = patience.filter(|p| only_time && *p > started.elapsed()) else {
            return;
        };
        let stalled = self.stalled.take();
        let more = patience.saturating_sub(started.elapsed());
        exchange.reply = match self.wait_within(more, |m| is_response_to(m, awaited)).await {
            Ok(answer) => Ok(answer),
            Err(why) => {
                // The whole wait is said, not only its second part.
                let besides = why.why.strip_prefix(&within(more)).map(str::to_string);
                let timed_out = besides.is_some();
                let why = match (why.only_time(), besides) {
                    (true, _) => Unanswered::ran_out(within(patience)),
                    (false, Some(besides)) => {
                        Unanswered::new(format!("{}{besides}", within(patience)))
                    }
                    (false, None) => why,
                };
                self.stalled = if timed_out {
                    Some(why.clone())
                } else {
                    self.stalled.take().or(stalled).or(Some(why.clone()))
                };
                Err(why)
            }
        };
    }

    /// Waits (bounded by wall time, however busy the stream) for a message matching
    /// `wanted`; every other message is handled as [`Session::request`] describes. Returns
    /// the message, or why none came (with what came instead).
    pub async fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Result<Value, Unanswered> {
        let mut before = Vec::new();
        self.collect(wanted, &mut before).await
    }

    /// Waits up to `bound` for a message matching `wanted`, handling others as
    /// [`Session::wait_for`] does; running out of time does not mark the session stalled (a
    /// slow tool call is not a session that stopped answering), the server leaving does.
    pub async fn wait_within(
        &mut self,
        bound: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> Result<Value, Unanswered> {
        let (timeout, stalled) = (self.timeout, self.stalled.clone());
        self.timeout = bound;
        let got = self.wait_for(wanted).await;
        self.timeout = timeout;
        if got
            .as_ref()
            .is_err_and(|why| why.why.starts_with(&within(bound)))
        {
            self.stalled = stalled;
        }
        got
    }

    /// Every response that arrives until a response with `id` does, and the first other
    /// messages (used as a fence: servers answer in order, so anything caused by earlier
    /// lines comes first).
    pub async fn collect_until_response(
        &mut self,
        id: &Value,
    ) -> (Vec<Value>, Result<Value, Unanswered>) {
        let mut before = Vec::new();
        let reply = self.collect(|m| is_response_to(m, id), &mut before).await;
        (before, reply)
    }

    async fn collect(
        &mut self,
        wanted: impl Fn(&Value) -> bool,
        before: &mut Vec<Value>,
    ) -> Result<Value, Unanswered> {
        let deadline = Instant::now() + self.timeout;
        let refused_at_start = self.lock_log().refused;
        let mut others = 0usize;
        let mut last_response: Option<Value> = None;
        loop {
            // Checked before every receive: a stream that always has a message ready would
            // otherwise never let the timeout fire.
            let left = deadline.saturating_duration_since(Instant::now());
            let next = if left.is_zero() {
                Err(())
            } else {
                tokio::time::timeout(left, self.incoming.recv())
                    .await
                    .map_err(|_| ())
            };
            match next {
                Err(()) => {
                    let figure = within(self.timeout);
                    let mut why = figure.clone();
                    if others > 0 {
                        why.push_str(&format!("; {others} other message(s) came"));
                        if let Some(response) = &last_response {
                            let id = response
                                .get("id")
                                .map_or_else(|| "none".to_string(), Value::to_string);
                            why.push_str(&format!(
                                ", the latest a response with id {id}, not the one awaited: {}",
                                excerpt(&response.to_string())
                            ));
                        }
                    }
                    let log = self.lock_log();
                    if log.refused > refused_at_start {
                        why.push_str(&log.refused_note());
                    }
                    drop(log);
                    // Only time ran out when nothing else came: no other message, no
                    // refused line.
                    let why = if why == figure {
                        Unanswered::ran_out(figure)
                    } else {
                        Unanswered::new(why)
                    };
                    self.stalled = Some(why.clone());
                    return Err(why);
                }
                Ok(None) => {
                    let gone = self.gone().await;
                    let note = self.lock_log().refused_note();
                    let why = Unanswered::new(format!("{gone}{note}"));
                    self.stalled = Some(why.clone());
                    return Err(why);
                }
                Ok(Some(message)) if wanted(&message) => return Ok(message),
                Ok(Some(message)) => {
                    others += 1;
                    self.answer_server_request(&message, deadline).await;
                    if is_response(&message) {
                        last_response = Some(message.clone());
                        if before.len() < KEPT_BEFORE * 2 {
                            before.push(message);
                        }
                    } else if before.len() < KEPT_BEFORE {
                        before.push(message);
                    }
                }
            }
        }
    }

    /// The method of the request this session sent earlier with `id`.
    pub fn method_of(&self, id: Option<&Value>) -> Option<String> {
        id.and_then(|id| self.lock_log().methods.get(&id.to_string()).cloned())
    }

    /// The next request id this session will use.
    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Closes stdin and waits up to `bound` for the server to exit; kills its whole
    /// process group after that (a child still holding the pipes included).
    pub async fn close(mut self, bound: Duration) -> Closed {
        self.note_cpu();
        self.stdin.take();
        let started = Instant::now();
        let outcome = match tokio::time::timeout(bound, self.child.wait()).await {
            Ok(Ok(status)) => Closed::Exited(started.elapsed(), status.to_string()),
            Ok(Err(e)) => Closed::Exited(started.elapsed(), format!("cannot be waited on: {e}")),
            Err(_) => Closed::Killed(started.elapsed()),
        };
        if super::timeline::enabled() {
            super::timeline::event("exited", &self.lock_log().label);
        }
        self.kill().await;
        outcome
    }

    /// Kills the server's process group (also after the server itself exited: what it left
    /// in its group goes too) and reaps the server (bounded).
    pub async fn kill(&mut self) {
        self.note_cpu();
        if let Some(pid) = self.pid {
            super::reaper::kill_group(pid);
        }
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        if super::timeline::enabled() {
            super::timeline::event("reaped", &self.lock_log().label);
        }
    }

    /// With the timeline on, the server's CPU so far (before it is closed or killed).
    fn note_cpu(&self) {
        if !super::timeline::enabled() {
            return;
        }
        if let Some(millis) = self.pid.and_then(super::timeline::process_cpu_millis) {
            super::timeline::event(
                "server-cpu",
                &format!("{} {millis} ms", self.lock_log().label),
            );
        }
    }

    /// Answers a server request (up to [`MAX_ANSWERS`] a session), the write bounded by
    /// what is left of the caller's wait.
    async fn answer_server_request(&mut self, message: &Value, deadline: Instant) {
        if message.get("id").is_none() || message.get("method").and_then(Value::as_str).is_none() {
            return;
        }
        if self.answered >= MAX_ANSWERS {
            return;
        }
        self.answered += 1;
        let reply = crate::declared::answer(message, &self.declared);
        let left = deadline.saturating_duration_since(Instant::now());
        if !left.is_zero() {
            let _ = self.send_line_within(&reply.to_string(), left).await;
        }
    }

    /// Why the server stopped talking: its exit status and the end of its stderr (each
    /// waited for briefly).
    async fn gone(&mut self) -> String {
        let status = match tokio::time::timeout(Duration::from_millis(500), self.child.wait()).await
        {
            Ok(Ok(status)) => format!("exited with {status}"),
            _ => "closed its stdout".to_string(),
        };
        if let Some(done) = self.stderr_done.take() {
            let _ = tokio::time::timeout(Duration::from_millis(500), done).await;
        }
        format!(
            "the server `{}` {status}{}",
            excerpt(&self.command),
            self.stderr_note()
        )
    }

    fn stderr_note(&self) -> String {
        let tail = self
            .stderr
            .lock()
            .map(|t| String::from_utf8_lossy(&t).into_owned())
            .unwrap_or_default();
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
    message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some())
}

/// Whether `message` is the response to the request with `id`.
pub fn is_response_to(message: &Value, id: &Value) -> bool {
    is_response(message) && message.get("id") == Some(id)
}

async fn read_stdout(stdout: tokio::process::ChildStdout, tx: mpsc::Sender<Value>, log: SharedLog) {
    let mut reader = BufReader::with_capacity(64 << 10, stdout);
    let mut line = Vec::new();
    let mut length = 0usize;
    let mut first = true;
    loop {
        let buf = match reader.fill_buf().await {
            Ok([]) | Err(_) => {
                if length > 0 {
                    let _ = take_line(&line, length, &tx, &log).await;
                }
                return;
            }
            Ok(buf) => buf,
        };
        if std::mem::take(&mut first) && super::timeline::enabled() {
            let label = log.lock().unwrap_or_else(|e| e.into_inner()).label.clone();
            super::timeline::event("first-byte", &label);
        }
        let end = buf.iter().position(|b| *b == b'\n');
        let chunk = &buf[..end.unwrap_or(buf.len())];
        // Past the limit only the start is kept (to be quoted); the rest is counted.
        let room = if length + chunk.len() <= MAX_LINE {
            chunk.len()
        } else {
            super::log::QUOTED_LINE.saturating_sub(line.len())
        };
        line.extend_from_slice(&chunk[..room.min(chunk.len())]);
        let was_over = length > MAX_LINE;
        length += chunk.len();
        if length > MAX_LINE && !was_over {
            // Refused as soon as it is over the limit: a line that never ends is seen too.
            let text = String::from_utf8_lossy(&line);
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .refused(&text, format!("a line over the {MAX_LINE}-byte limit"));
        }
        let used = end.map_or(buf.len(), |at| at + 1);
        reader.consume(used);
        if end.is_some() {
            if !take_line(&line, length, &tx, &log).await {
                return;
            }
            line.clear();
            length = 0;
        }
    }
}

/// Logs one line and passes it on when it is a message; false when no one listens.
async fn take_line(line: &[u8], length: usize, tx: &mpsc::Sender<Value>, log: &SharedLog) -> bool {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches('\r');
    let lock = || log.lock().unwrap_or_else(|e| e.into_inner());
    if length > MAX_LINE {
        return true; // refused when it went over the limit
    }
    if let Err(why) = super::weight::check(text.as_bytes()) {
        lock().refused(text, why);
        return true;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(message) if message.is_object() => {
            lock().message(text, &message);
            tx.send(message).await.is_ok()
        }
        Ok(_) => {
            lock().refused(text, "JSON, but not an object");
            true
        }
        Err(e) => {
            lock().refused(text, format!("not JSON: {e}"));
            true
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

/// How a wait of `bound` that ended with nothing is said.
pub fn within(bound: Duration) -> String {
    format!("nothing within {bound:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Failure;

    fn server(script: &str) -> Target {
        Target::Stdio {
            command: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: Vec::new(),
        }
    }

    /// Only a wait that saw nothing at all ran out of time; one that saw another message, a
    /// refused line or the server leave says so, and a failure quoting it is judged. The
    /// words play no part: a server that writes "nothing within" on its stderr is not a
    /// timeout.
    #[tokio::test]
    async fn only_a_wait_that_saw_nothing_ran_out_of_time() {
        let bound = Duration::from_millis(300);
        let cases = [
            ("cat > /dev/null", Some("nothing within 300ms")),
            (
                r#"read l; echo '{"jsonrpc":"2.0","method":"notifications/message"}'; cat > /dev/null"#,
                None,
            ),
            ("read l; echo 'not json'; cat > /dev/null", None),
            ("read l; echo 'nothing within 1s' >&2; exit 3", None),
        ];
        for (script, figure) in cases {
            let mut session = Session::spawn(&server(script), "timing", bound).unwrap();
            let exchange = session.request("ping", None).await;
            assert_eq!(
                exchange.ran_out().as_deref(),
                figure,
                "{script}: {exchange:?}"
            );
            let failure = Failure::new("a ping answered", "no answer").reply(&exchange);
            assert_eq!(failure.ran_out_of_time().as_deref(), figure, "{script}");
            session.kill().await;
        }
    }
}
