//! [`McpClient`]: the handshake and the MCP methods over a connected transport, and the
//! kova profile's resilience: reconnect-and-retry on a dead transport, connect retry, the
//! tools cache.

mod exchange;
mod handshake;
mod transport;

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::{Failed, Fate};
use crate::jsonrpc::{Params, RawResult};
use crate::stdio::fmt_duration;
use crate::tool::{CallToolResult, Tool};
use crate::{Breakage, ClientConfig, HttpServer, McpError, StdioServer};

use exchange::{exchange, list_all};
use handshake::open;
use transport::{Connection, Target, Transport};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A connected MCP client. `Send + Sync`: every method takes `&self`, so it can be shared in
/// an `Arc` across concurrent steps; calls to one connection are in flight together under `strict`
/// (routed by id) and queue in order under yoagent and kova.
///
/// The connection can be replaced under the callers' feet: by [`reconnect`](Self::reconnect)
/// in every profile, and in the kova profile by a list or call that hits a dead transport.
pub struct McpClient {
    target: Target,
    config: ClientConfig,
    /// The connection in use (never locked across an await).
    current: RwLock<Arc<Connection>>,
    /// One reconnect at a time.
    reconnecting: tokio::sync::Mutex<()>,
    /// kova: the last `tools/list`, until the next reconnect.
    tools: Mutex<Option<Vec<Tool>>>,
    /// `close()` was called: nothing reconnects by itself any more.
    closed: AtomicBool,
    generations: AtomicU64,
    /// `list_changed` counted by connections replaced since.
    earlier_list_changes: AtomicU64,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let connection = self.connection();
        let mut f = f.debug_struct("McpClient");
        match &connection.transport {
            Transport::Stdio(t) => f.field("command", &t.command()),
            Transport::Http(t) => f.field("origin", &t.origin()),
            Transport::LegacySse(t) => f.field("legacy_sse_origin", &t.origin()),
        };
        f.field("profile", &self.config.profile)
            .field("protocol_version", &connection.protocol_version)
            .finish_non_exhaustive()
    }
}

/// Whether a failed connect is worth one more try (kova): the connection died or timed
/// out during the handshake, or the server answered 5xx. A command that cannot be spawned,
/// a 4xx (after the token provider's refresh), a JSON-RPC or protocol error are permanent.
fn transient(failed: &Failed) -> bool {
    failed.fate != Fate::Alive
        || matches!(failed.error, McpError::Timeout(_))
        || failed
            .error
            .http_status()
            .is_some_and(|status| status >= 500)
}

impl McpClient {
    /// Spawns the server and opens the connection (bounded by `timeouts().handshake`):
    /// strict probes `server/discover` and speaks 2026-07-28 with a server that lists it,
    /// else (and yoagent, kova) runs the `initialize` handshake. On any
    /// failure the server is stopped before the error is returned. kova: a transient failure
    /// (the server died or timed out during the handshake) is retried once after
    /// `timeouts().connect_retry_delay`; a command that cannot be spawned fails at once.
    pub async fn connect_stdio(
        server: StdioServer,
        config: ClientConfig,
    ) -> Result<McpClient, McpError> {
        McpClient::connect(Target::Stdio(server), config).await
    }

    /// Connects to a Streamable HTTP server and opens the connection (bounded by
    /// `timeouts().handshake`): strict first POSTs `server/discover` and speaks 2026-07-28
    /// with a server that lists it, falling back to `initialize` at 2025-11-25 on a 4xx
    /// without a modern error; the handshake offers 2024-11-05 (yoagent) or 2025-06-18 (kova). Nothing is sent before the URL and certificates are checked. kova: a
    /// refused or reset connection, a timeout or a 5xx is retried once; a 4xx is not.
    pub async fn connect_http(
        server: HttpServer,
        config: ClientConfig,
    ) -> Result<McpClient, McpError> {
        McpClient::connect(Target::Http(server), config).await
    }

    /// Connects to a legacy HTTP+SSE server (2024-11-05): opens the event stream, takes its
    /// `endpoint` event, and (strict and yoagent) runs the 2024-11-05 handshake; the kova
    /// profile skips the handshake, as Kova's `HttpSse` does.
    pub async fn connect_legacy_sse(
        server: HttpServer,
        config: ClientConfig,
    ) -> Result<McpClient, McpError> {
        McpClient::connect(Target::LegacySse(server), config).await
    }

    async fn connect(target: Target, config: ClientConfig) -> Result<McpClient, McpError> {
        // On the heap: the connect path's state is large (every transport's handshake), and
        // a caller awaiting it on its own stack (`block_on` on a main thread) would keep
        // those stack pages resident for good.
        let connection = match Box::pin(open(&target, &config, 1)).await {
            Ok(connection) => connection,
            Err(failed)
                if config.profile.retries_connect()
                    && transient(&failed)
                    && !config.hooks.broken.contains(&Breakage::NoConnectRetry) =>
            {
                let delay = config.timeouts().connect_retry_delay;
                tracing::warn!(
                    target: "mcp_refclient",
                    "connecting to {} failed ({}); retrying once in {}",
                    target.name(),
                    failed.error.full_text(),
                    fmt_duration(delay)
                );
                tokio::time::sleep(delay).await;
                Box::pin(open(&target, &config, 1))
                    .await
                    .map_err(|f| f.error)?
            }
            Err(failed) => return Err(failed.error),
        };
        Ok(McpClient {
            target,
            config,
            current: RwLock::new(Arc::new(connection)),
            reconnecting: tokio::sync::Mutex::new(()),
            tools: Mutex::new(None),
            closed: AtomicBool::new(false),
            generations: AtomicU64::new(1),
            earlier_list_changes: AtomicU64::new(0),
        })
    }

    /// The connection in use.
    fn connection(&self) -> Arc<Connection> {
        self.current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn broken(&self, rule: Breakage) -> bool {
        self.config.hooks.broken.contains(&rule)
    }

    /// Tears the connection down and establishes it again from the stored server (respawn
    /// the command, or a new HTTP session), runs the handshake and clears the tools cache.
    /// Every profile; it also reopens a client that was closed. On failure the old
    /// connection stays closed and the error is returned.
    pub async fn reconnect(&self) -> Result<(), McpError> {
        let _turn = self.reconnecting.lock().await;
        let old = self.connection();
        self.replace(&old).await?;
        self.closed.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// kova, after `old` was found dead: reconnects, unless another call already did.
    async fn reconnect_after(&self, old: &Arc<Connection>) -> Result<(), McpError> {
        let _turn = self.reconnecting.lock().await;
        if !Arc::ptr_eq(&self.connection(), old) {
            return Ok(());
        }
        self.replace(old).await
    }

    /// Closes `old` (the server is gone before the new one starts), opens a new connection
    /// and puts it in use. The tools cache is cleared either way.
    async fn replace(&self, old: &Arc<Connection>) -> Result<(), McpError> {
        let kept = self
            .broken(Breakage::ReconnectKeepsCache)
            .then(|| lock(&self.tools).clone());
        *lock(&self.tools) = None;
        old.transport.close().await;
        let generation = self.generations.fetch_add(1, Ordering::SeqCst) + 1;
        let connection = Box::pin(open(&self.target, &self.config, generation))
            .await
            .map_err(|f| f.error)?;
        self.earlier_list_changes
            .fetch_add(old.transport.list_changes(), Ordering::SeqCst);
        *self
            .current
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(connection);
        *lock(&self.tools) = kept.flatten();
        Ok(())
    }

    /// Runs `op` on the connection; kova: if it failed on a dead transport, reconnects once
    /// and runs it again, except a call (`is_call`) the server may have received, which is
    /// reported as such instead of being sent twice. That call leaves the connection as it
    /// is (a crashed server stays visible to `exited()`): the next request that finds it
    /// dead reconnects, before anything was sent.
    async fn retrying<T, F, Fut>(&self, is_call: bool, mut op: F) -> Result<T, McpError>
    where
        F: FnMut(Arc<Connection>) -> Fut,
        Fut: Future<Output = Result<T, Failed>>,
    {
        let connection = self.connection();
        let failed = match op(connection.clone()).await {
            Ok(value) => return Ok(value),
            Err(failed) => failed,
        };
        let any_error = self.broken(Breakage::RetryAnyError);
        let dead = failed.fate != Fate::Alive || any_error;
        let reconnects =
            self.config.profile.reconnects() && !self.broken(Breakage::NoAutoReconnect);
        if !reconnects || !dead || self.closed.load(Ordering::SeqCst) {
            return Err(failed.error);
        }
        if is_call
            && failed.fate == Fate::DeadMaybeSent
            && !self.broken(Breakage::RetryDeliveredCalls)
        {
            return Err(McpError::Transport(format!(
                "{}; the call may have run on the server, so it was not sent again",
                failed.error.full_text()
            )));
        }
        tracing::warn!(
            target: "mcp_refclient",
            "the connection to {} is dead ({}); reconnecting once",
            self.target.name(),
            failed.error.full_text()
        );
        if let Err(error) = self.reconnect_after(&connection).await {
            return Err(McpError::Transport(format!(
                "{}; reconnecting failed: {}",
                failed.error.full_text(),
                error.full_text()
            )));
        }
        op(self.connection()).await.map_err(|f| f.error)
    }

    /// The protocol version the server answered.
    pub fn protocol_version(&self) -> String {
        self.connection().protocol_version.clone()
    }

    /// The server's `initialize` result, or at 2026-07-28 its `server/discover` result
    /// (serverInfo, capabilities…), as sent.
    pub fn server_info(&self) -> Value {
        self.connection().server_info.clone()
    }

    /// The configuration the client runs with.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// `tools/list`, bounded by `timeouts().list`; the strict profile follows `nextCursor`
    /// until the list ends, the others read one page. kova: answered from a cache until the
    /// next reconnect, and retried once over a new connection when the transport is dead.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, McpError> {
        let caches = (self.config.profile.caches_tools()
            || self.broken(Breakage::ToolsCachedEverywhere))
            && !self.broken(Breakage::NoToolsCache);
        if caches {
            if let Some(tools) = lock(&self.tools).as_ref() {
                return Ok(tools.clone());
            }
        }
        let (generation, tools) = self
            .retrying(false, |connection| async move {
                let tools = list_all(&connection, &self.config).await?;
                Ok((connection.generation, tools))
            })
            .await?;
        if caches && generation == self.connection().generation {
            *lock(&self.tools) = Some(tools.clone());
        }
        Ok(tools)
    }

    /// `tools/call`. `timeout`: `None` = the client's bound (`timeouts().call`, itself `None`
    /// for unbounded); `Some(d)` overrides it for this call only. Over HTTP, strict and
    /// yoagent have only the override (else the idle timeout), kova both. A
    /// result with `isError` is data, not an error. kova: on a dead transport the call is
    /// sent again over a new connection only if it never reached the server; otherwise the
    /// error says it may have run.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> Result<CallToolResult, McpError> {
        let arguments = &arguments;
        let typed = Params::Call { name, arguments };
        let result = self
            .retrying(true, |connection| async move {
                let bound = connection.transport.call_bound(&self.config, timeout);
                match &connection.transport {
                    // Over stdio at a handshake revision the parameters are written borrowed
                    // and the result read from its line straight into its type.
                    Transport::Stdio(t) if !connection.stateless => {
                        let outcome = t.request_raw("tools/call", Some(typed), bound).await?;
                        outcome.map_err(|e| exchange::rpc_error(&self.config, e).into())
                    }
                    _ => {
                        // A tree for the other transports (a copy of the arguments: the stdio
                        // path borrows them).
                        let params = json!({ "name": name, "arguments": arguments.clone() });
                        // Boxed: the HTTP transports' state would otherwise make every call's
                        // future (a task's memory, or its caller's stack) as large as theirs.
                        Box::pin(exchange(
                            &connection,
                            &self.config,
                            "tools/call",
                            Some(params),
                            bound,
                        ))
                        .await
                        .map(RawResult::Value)
                    }
                }
            })
            .await?;
        result
            .parse()
            .map_err(|e| McpError::Protocol(format!("invalid tools/call result: {e}")))
    }

    /// Any request, bounded like `tools/list`; the result as sent. Never retried.
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, McpError> {
        let connection = self.connection();
        let bound = connection.transport.list_bound(&self.config);
        exchange(&connection, &self.config, method, params, bound)
            .await
            .map_err(|f| f.error)
    }

    /// Any notification (no id, not awaited).
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        self.connection().transport.notify(method, params).await
    }

    /// Stops the server (its whole group with `own_process_group`) and reaps it; afterwards
    /// `exited()` reads "was closed" and nothing reconnects by itself. Idempotent; a call in
    /// flight fails as closed.
    pub async fn close(&self) -> Result<(), McpError> {
        self.closed.store(true, Ordering::SeqCst);
        self.connection().transport.close().await;
        Ok(())
    }

    /// `None` while the server runs; once it has gone, why (exit status and the last of its
    /// stderr). Never blocks, never waits behind a call. Always `None` over HTTP.
    pub fn exited(&self) -> Option<String> {
        match &self.connection().transport {
            Transport::Stdio(t) => t.exited(),
            Transport::Http(_) | Transport::LegacySse(_)
                if self.broken(Breakage::HttpExitedAfterClose)
                    && self.closed.load(Ordering::SeqCst) =>
            {
                Some("the MCP server was closed".into())
            }
            Transport::Http(_) | Transport::LegacySse(_) => None,
        }
    }

    /// How many `notifications/tools/list_changed` were read (over every connection).
    pub fn tools_list_changes(&self) -> u64 {
        self.earlier_list_changes.load(Ordering::SeqCst)
            + self.connection().transport.list_changes()
    }

    /// The server's process id (for tests); `None` over HTTP.
    pub fn server_pid(&self) -> Option<u32> {
        match &self.connection().transport {
            Transport::Stdio(_) if self.broken(Breakage::PidNotNamed) => None,
            Transport::Stdio(t) => t.pid(),
            Transport::Http(_) | Transport::LegacySse(_) => None,
        }
    }

    /// The Streamable HTTP session id held (for tests); `None` over other transports.
    pub fn session_id(&self) -> Option<String> {
        match &self.connection().transport {
            Transport::Http(t) => t.session_id(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_can_be_shared_across_tasks() {
        fn shareable<T: Send + Sync + 'static>() {}
        shareable::<McpClient>();
    }
}
