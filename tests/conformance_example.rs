//! A client author's `tests/conformance.rs`, written only against the public API: a small
//! naive stdio MCP client (not the reference client) and its adapter, run through
//! `mcp_conformance::harness::main` with a baseline of its known failures.
//!
//! `cargo test --test conformance_example` runs it; `-- stdio/` runs one folder.

use mcp_conformance::cut::{
    Capability, ClientUnderTest, Described, Settings, StepError, StepResult, Target, TransportKind,
};
use serde_json::{json, Value};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;

/// A minimal stdio MCP client: JSON lines, answers pings, declines other server requests.
struct Connection {
    stdin: tokio::sync::Mutex<ChildStdin>,
    pending: RefCell<HashMap<u64, oneshot::Sender<Value>>>,
    next_id: Cell<u64>,
    child: RefCell<Option<Child>>,
}

impl Connection {
    async fn spawn(
        command: &str,
        args: &[String],
        env: &[(String, String)],
    ) -> Result<Rc<Connection>, String> {
        let mut child = Command::new(command)
            .args(args)
            .envs(env.iter().cloned())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {command}: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let connection = Rc::new(Connection {
            stdin: tokio::sync::Mutex::new(stdin),
            pending: RefCell::new(HashMap::new()),
            next_id: Cell::new(1),
            child: RefCell::new(Some(child)),
        });
        let reader = Rc::downgrade(&connection);
        tokio::task::spawn_local(async move {
            let mut lines = tokio::io::BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let Some(connection) = reader.upgrade() else {
                    return;
                };
                // Lines that are not JSON (banners) are skipped.
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                connection.received(message).await;
            }
            if let Some(connection) = reader.upgrade() {
                connection.pending.borrow_mut().clear();
            }
        });
        Ok(connection)
    }

    async fn received(&self, message: Value) {
        match (
            message.get("method").and_then(Value::as_str),
            message.get("id"),
        ) {
            (Some("ping"), Some(id)) => {
                self.write(&json!({"jsonrpc": "2.0", "id": id, "result": {}}))
                    .await
            }
            (Some(_), Some(id)) => {
                let error = json!({"code": -32601, "message": "method not found"});
                self.write(&json!({"jsonrpc": "2.0", "id": id, "error": error}))
                    .await
            }
            (None, Some(id)) => {
                let waiting = id
                    .as_u64()
                    .and_then(|id| self.pending.borrow_mut().remove(&id));
                if let Some(waiting) = waiting {
                    let _ = waiting.send(message);
                }
            }
            _ => {}
        }
    }

    async fn write(&self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        let mut stdin = self.stdin.lock().await;
        let _ = stdin.write_all(line.as_bytes()).await;
        let _ = stdin.flush().await;
    }

    async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, String> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let (send, receive) = oneshot::channel();
        self.pending.borrow_mut().insert(id, send);
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = match timeout {
            Some(bound) => tokio::time::timeout(bound, receive)
                .await
                .map_err(|_| format!("{method} timed out after {} ms", bound.as_millis()))?,
            None => receive.await,
        };
        let answer =
            answer.map_err(|_| format!("connection closed: the server exited during {method}"))?;
        match answer.get("error") {
            Some(error) => Err(format!("{method} failed: {error}")),
            None => Ok(answer.get("result").cloned().unwrap_or(Value::Null)),
        }
    }
}

/// The adapter: the naive client as a client under test.
#[derive(Default)]
struct Adapter {
    connection: RefCell<Option<Rc<Connection>>>,
}

impl Adapter {
    fn connected(&self) -> Result<Rc<Connection>, StepError> {
        self.connection
            .borrow()
            .clone()
            .ok_or_else(|| StepError::new("not connected"))
    }
}

impl ClientUnderTest for Adapter {
    fn describe(&self) -> Described {
        Described {
            name: "naive-stdio-client".into(),
            version: "0.0.1".into(),
            transports: vec![TransportKind::Stdio],
            capabilities: vec![Capability::CallTimeout],
            profile: "strict".into(),
        }
    }

    async fn connect(&self, target: &Target, _settings: &Settings) -> StepResult {
        let Target::Stdio(stdio) = target else {
            return Err(StepError::new("stdio only"));
        };
        let env: Vec<(String, String)> = stdio
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let connection = Connection::spawn(&stdio.command, &stdio.args, &env)
            .await
            .map_err(StepError::new)?;
        let params = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "naive-stdio-client", "version": "0.0.1"},
        });
        let result = connection
            .request("initialize", params, None)
            .await
            .map_err(StepError::new)?;
        connection
            .write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        *self.connection.borrow_mut() = Some(connection);
        Ok(json!({"protocolVersion": result.get("protocolVersion")}))
    }

    async fn list_tools(&self) -> StepResult {
        let result = self
            .connected()?
            .request("tools/list", json!({}), None)
            .await
            .map_err(StepError::new)?;
        Ok(result.get("tools").cloned().unwrap_or(Value::Null))
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> StepResult {
        let params = json!({"name": name, "arguments": arguments});
        self.connected()?
            .request("tools/call", params, timeout)
            .await
            .map_err(StepError::new)
    }

    async fn close(&self) -> StepResult {
        let connection = self
            .connection
            .borrow_mut()
            .take()
            .ok_or_else(|| StepError::new("not connected"))?;
        let child = connection.child.borrow_mut().take();
        if let Some(mut child) = child {
            let _ = child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
        }
        Ok(json!("closed"))
    }

    async fn drop_connection(&self) -> StepResult {
        Ok(json!(self.connection.borrow_mut().take().is_some()))
    }
}

fn main() -> ExitCode {
    mcp_conformance::harness::main(Adapter::default, "tests/conformance_example-baseline.toml")
}
