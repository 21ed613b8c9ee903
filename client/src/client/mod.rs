//! [`McpClient`]: the handshake and the MCP methods over a connected transport, and the
//! kova profile's resilience: reconnect-and-retry on a dead transport, connect retry, the
//! tools cache.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::{Failed, Fate};
use crate::http::legacy::LegacyTransport;
use crate::http::streamable::StreamableTransport;
use crate::jsonrpc::{ErrorObject, Params, RawResult};
use crate::stateless::{self as modern, ProbeFailure, ResultKind};
use crate::stdio::{fmt_duration, StdioTransport};
use crate::tool::{CallToolResult, Tool, ToolsPage};
use crate::{
    Breakage, ClientConfig, HttpServer, McpError, Profile, StdioServer, SUPPORTED_PROTOCOL_VERSIONS,
};

/// More pages than this in one listing is taken for a server looping on its cursor.
const MAX_PAGES: usize = 10_000;

/// The connection an [`McpClient`] speaks over.
enum Transport {
    Stdio(StdioTransport),
    Http(Box<StreamableTransport>),
    LegacySse(LegacyTransport),
}

impl Transport {
    /// Sends a request and reads its answer, saying on failure whether the transport is dead
    /// and whether the request may have reached the server. The legacy transport never says it
    /// is dead (it is not reconnected by itself).
    async fn request_fated(
        &self,
        method: &str,
        params: Option<Value>,
        bound: Option<Duration>,
    ) -> Result<Result<Value, ErrorObject>, Failed> {
        match self {
            Transport::Stdio(t) => t.request_fated(method, params, bound).await,
            Transport::Http(t) => t.request_fated(method, params, bound).await,
            Transport::LegacySse(t) => t
                .request(method, params, bound)
                .await
                .map_err(Failed::alive),
        }
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        match self {
            Transport::Stdio(t) => t.notify(method, params).await,
            Transport::Http(t) => t.notify(method, params).await,
            Transport::LegacySse(t) => t.notify(method, params).await,
        }
    }

    async fn notify_fated(&self, method: &str, params: Option<Value>) -> Result<(), Failed> {
        match self {
            Transport::Stdio(t) => t.notify_fated(method, params).await,
            Transport::Http(t) => t.notify_fated(method, params).await,
            Transport::LegacySse(t) => t.notify(method, params).await.map_err(Failed::alive),
        }
    }

    fn list_changes(&self) -> u64 {
        match self {
            Transport::Stdio(t) => t.list_changes(),
            Transport::Http(t) => t.list_changes(),
            Transport::LegacySse(t) => t.list_changes(),
        }
    }

    async fn close(&self) {
        match self {
            Transport::Stdio(t) => t.close().await,
            Transport::Http(t) => t.close().await,
            Transport::LegacySse(t) => t.close().await,
        }
    }

    /// The protocol version offered in `initialize`.
    fn offered_version(&self, profile: Profile) -> &'static str {
        match (self, profile) {
            (Transport::Stdio(_), _) => profile.stdio_protocol_version(),
            (Transport::Http(_), Profile::Strict) => crate::LATEST_PROTOCOL_VERSION,
            (Transport::Http(_), Profile::Kova) => "2025-06-18",
            (Transport::Http(_), Profile::Yoagent) | (Transport::LegacySse(_), _) => "2024-11-05",
        }
    }

    /// 2026-07-28 from now on (`Some`), or a handshake revision again (`None`).
    fn stateless(&self, version: Option<&str>) {
        if let Transport::Http(t) = self {
            t.stateless(version);
        }
    }

    /// The handshake settled on `version`.
    fn negotiated(&self, version: &str) {
        if let Transport::Http(t) = self {
            t.negotiated(version);
        }
    }

    /// The bound of a tool call: over stdio the override or the client's call bound; over
    /// HTTP none in yoagent (the idle timeout only), the override in strict, the override
    /// or the call bound in kova.
    fn call_bound(&self, config: &ClientConfig, timeout: Option<Duration>) -> Option<Duration> {
        let timeout = timeout.filter(|_| {
            !config
                .hooks
                .broken
                .contains(&Breakage::PerCallTimeoutIgnored)
        });
        match (self, config.profile) {
            (Transport::Stdio(_), _) | (_, Profile::Kova) => timeout.or(config.timeouts().call),
            (_, Profile::Strict) => timeout,
            (_, Profile::Yoagent) => None,
        }
    }

    /// The bound of any other request: over HTTP only kova has one.
    fn list_bound(&self, config: &ClientConfig) -> Option<Duration> {
        match (self, config.profile) {
            (Transport::Stdio(_), _) => config.timeouts().list,
            (_, Profile::Kova) if !config.hooks.broken.contains(&Breakage::NoListBoundOverHttp) => {
                config.timeouts().list
            }
            _ => None,
        }
    }

    /// What names the server in handshake errors.
    fn name(&self) -> String {
        match self {
            Transport::Stdio(t) => format!("server '{}'", t.command()),
            Transport::Http(t) => t.origin().to_string(),
            Transport::LegacySse(t) => t.origin().to_string(),
        }
    }
}

/// Where the server is, kept so the client can reach it again.
#[derive(Clone)]
enum Target {
    Stdio(StdioServer),
    Http(HttpServer),
    LegacySse(HttpServer),
}

impl Target {
    /// What names the server in log lines: the command as given, or the origin.
    fn name(&self) -> String {
        match self {
            Target::Stdio(server) => format!("server '{}'", server.command),
            Target::Http(server) | Target::LegacySse(server) => url::Url::parse(&server.url)
                .map(|u| crate::redact::origin_of(&u))
                .unwrap_or_else(|_| "[invalid url]".into()),
        }
    }
}

/// One established connection: the transport and what its handshake (or `server/discover`)
/// settled.
struct Connection {
    transport: Transport,
    protocol_version: String,
    /// 2026-07-28 is spoken: `_meta` on every request, `resultType` read, no session.
    stateless: bool,
    server_info: Value,
    /// Counts the connections of a client (1 for the first), so a listing that raced a
    /// reconnect is not cached.
    generation: u64,
}

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

/// The `HandshakeTimerRestarts` breakage: `bound` counted afresh from every stdout line.
async fn restarting_timeout<F: std::future::Future>(
    bound: Duration,
    transport: &Transport,
    work: F,
) -> Option<F::Output> {
    let lines = || match transport {
        Transport::Stdio(t) => t.lines_read(),
        _ => 0,
    };
    tokio::pin!(work);
    let mut seen = lines();
    let mut deadline = tokio::time::Instant::now() + bound;
    loop {
        tokio::select! {
            out = &mut work => return Some(out),
            _ = tokio::time::sleep(Duration::from_millis(5)) => {
                if lines() != seen {
                    seen = lines();
                    deadline = tokio::time::Instant::now() + bound;
                }
                if tokio::time::Instant::now() >= deadline {
                    return None;
                }
            }
        }
    }
}

/// Opens a connection to `target`: spawn or connect, then the bounded handshake. On
/// failure whatever was started is stopped.
async fn open(
    target: &Target,
    config: &ClientConfig,
    generation: u64,
) -> Result<Connection, Failed> {
    let transport = match target {
        Target::Stdio(server) => Transport::Stdio(StdioTransport::spawn(server, config)?),
        Target::Http(server) => {
            Transport::Http(Box::new(StreamableTransport::new(server, config)?))
        }
        Target::LegacySse(server) => {
            let transport = Transport::LegacySse(LegacyTransport::connect(server, config).await?);
            if config.profile == Profile::Kova {
                let protocol_version = "2024-11-05".to_string();
                return Ok(Connection {
                    transport,
                    protocol_version,
                    stateless: false,
                    server_info: Value::Null,
                    generation,
                });
            }
            transport
        }
    };
    let handshake = establish(&transport, config);
    let restarts = config
        .hooks
        .broken
        .contains(&Breakage::HandshakeTimerRestarts);
    let outcome = match config.timeouts().handshake {
        Some(bound) if restarts => match restarting_timeout(bound, &transport, handshake).await {
            Some(outcome) => outcome,
            None => Err(Failed::alive(McpError::Timeout(format!(
                "MCP handshake timed out after {}",
                fmt_duration(bound)
            )))),
        },
        Some(bound) => match tokio::time::timeout(bound, handshake).await {
            Ok(outcome) => outcome,
            Err(_) => Err(Failed::alive(McpError::Timeout(format!(
                "MCP handshake with {} timed out after {}",
                transport.name(),
                fmt_duration(bound)
            )))),
        },
        None => handshake.await,
    };
    match outcome {
        Ok((protocol_version, server_info)) => {
            let stateless = crate::STATELESS_PROTOCOL_VERSIONS.contains(&protocol_version.as_str());
            if let (true, Transport::Http(t)) = (stateless, &transport) {
                // The GET stream's successor: list changes, for a server that announces them.
                if server_info.pointer("/capabilities/tools/listChanged")
                    == Some(&Value::Bool(true))
                {
                    let filter = json!({ "notifications": { "toolsListChanged": true } });
                    t.listen(modern::with_meta(Some(filter), &protocol_version, config));
                }
            }
            Ok(Connection {
                transport,
                protocol_version,
                stateless,
                server_info,
                generation,
            })
        }
        Err(failed) => {
            transport.close().await;
            Err(failed)
        }
    }
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
            Err(failed) if config.profile.retries_connect() && transient(&failed) => {
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
        *lock(&self.tools) = None;
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
        if !self.config.profile.reconnects() || !dead || self.closed.load(Ordering::SeqCst) {
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
        let caches = self.config.profile.caches_tools() && !self.broken(Breakage::NoToolsCache);
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
    /// for unbounded); `Some(d)` overrides it for this call only. Over HTTP, yoagent has no
    /// whole-call bound (the idle timeout only), strict only the override, kova both. A
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
                        outcome.map_err(|e| rpc(Err(e)).unwrap_err().into())
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

/// Every page of `tools/list` the profile reads.
async fn list_all(connection: &Connection, config: &ClientConfig) -> Result<Vec<Tool>, Failed> {
    let transport = &connection.transport;
    let invalid = |text: String| {
        if config
            .hooks
            .broken
            .contains(&Breakage::InvalidResultAsTransport)
        {
            McpError::Transport(text)
        } else {
            McpError::Protocol(text)
        }
    };
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let bound = transport.list_bound(config);
    for _ in 0..MAX_PAGES {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let result = exchange(connection, config, "tools/list", params, bound).await?;
        let page: ToolsPage = serde_json::from_value(result)
            .map_err(|e| invalid(format!("invalid tools/list result: {e}")))?;
        tools.extend(page.tools);
        match page.next_cursor {
            Some(next) if config.profile.paginates() => {
                if cursor.as_deref() == Some(next.as_str()) {
                    return Err(McpError::Protocol(format!(
                        "tools/list returned its own cursor '{next}' again"
                    ))
                    .into());
                }
                cursor = Some(next);
            }
            _ => return Ok(tools),
        }
    }
    Err(McpError::Protocol(format!("tools/list did not end within {MAX_PAGES} pages")).into())
}

/// Turns a JSON-RPC error response into [`McpError::JsonRpc`], code and message kept.
fn rpc(outcome: Result<Value, ErrorObject>) -> Result<Value, McpError> {
    outcome.map_err(|e| McpError::JsonRpc {
        code: e.code,
        message: e.message,
        data: e.data,
    })
}

/// One request and its result. At 2026-07-28: `_meta` added, `resultType` read (absent is
/// complete), an `input_required` result retried as a new request with `requestState`
/// echoed (bounded rounds), an unsupported-version error made clear.
async fn exchange(
    connection: &Connection,
    config: &ClientConfig,
    method: &str,
    params: Option<Value>,
    bound: Option<Duration>,
) -> Result<Value, Failed> {
    let transport = &connection.transport;
    if !connection.stateless {
        return Ok(rpc(transport.request_fated(method, params, bound).await?)?);
    }
    let version = connection.protocol_version.as_str();
    let mut params = params.unwrap_or_else(|| json!({}));
    for _ in 0..modern::MAX_INPUT_ROUNDS {
        let sent = match config.hooks.broken.contains(&Breakage::NoRequestMeta) {
            true => params.clone(),
            false => modern::with_meta(Some(params.clone()), version, config),
        };
        let result = match transport.request_fated(method, Some(sent), bound).await? {
            Ok(result) => result,
            Err(e) if e.code.0 == modern::UNSUPPORTED_VERSION => {
                return Err(modern::unsupported_version(version, e.data.as_ref()).into())
            }
            Err(e) => return Err(rpc(Err(e)).unwrap_err().into()),
        };
        match modern::result_kind(method, &result)? {
            ResultKind::Complete => return Ok(result),
            ResultKind::InputRequired if matches!(method, "tools/call" | "prompts/get" | "resources/read") => {
                params = modern::input_retry(method, &params, &result)?;
            }
            ResultKind::InputRequired => {
                return Err(McpError::Protocol(format!(
                    "'{method}' was answered input_required, which only tools/call, prompts/get and resources/read may be"
                ))
                .into())
            }
        }
    }
    Err(McpError::Protocol(format!(
        "'{method}' still asked for input after {} rounds; given up",
        modern::MAX_INPUT_ROUNDS
    ))
    .into())
}

/// How long the `server/discover` probe waits before taking a silent server for an older
/// one (spec: "the probe returns a non-modern error or times out"): half the handshake
/// bound, at most this.
const PROBE_BOUND: Duration = Duration::from_secs(10);

/// Opens the connection: strict probes `server/discover` and speaks 2026-07-28 with a
/// server that lists it, falling back to `initialize` on one that does not know the probe;
/// otherwise (and on the fallback) the handshake.
async fn establish(
    transport: &Transport,
    config: &ClientConfig,
) -> Result<(String, Value), Failed> {
    let Some(offered) = config
        .stateless_revision()
        .filter(|_| !matches!(transport, Transport::LegacySse(_)))
    else {
        return handshake(transport, config, None).await;
    };
    transport.stateless(Some(offered));
    let params = match config.hooks.broken.contains(&Breakage::NoRequestMeta) {
        true => json!({}),
        false => modern::with_meta(None, offered, config),
    };
    let bound = config
        .timeouts()
        .handshake
        .map_or(PROBE_BOUND, |b| (b / 2).min(PROBE_BOUND));
    let probe = match tokio::time::timeout(
        bound,
        transport.request_fated("server/discover", Some(params), None),
    )
    .await
    {
        Ok(Ok(outcome)) => rpc(outcome),
        // Over HTTP a 4xx (a modern error's JSON-RPC body, or an older server's refusal) fails
        // the request itself; what it says decides below.
        Ok(Err(failed)) => Err(failed.error),
        Err(_) => Err(McpError::Timeout(format!(
            "server/discover not answered within {}",
            fmt_duration(bound)
        ))),
    };
    let failure = match probe {
        Ok(result) => return discovered(transport, config, offered, result).await,
        Err(error) => error,
    };
    if let McpError::JsonRpc { code, data, .. } = &failure {
        if code.0 == modern::UNSUPPORTED_VERSION {
            let legacy = mutual_legacy(data.as_ref().and_then(|d| d.get("supported")));
            return match legacy {
                Some(version) => fall_back(transport, config, &failure, Some(version)).await,
                None => Err(modern::unsupported_version(offered, data.as_ref()).into()),
            };
        }
    }
    match modern::classify_probe_failure(&failure) {
        ProbeFailure::Legacy if !config.hooks.broken.contains(&Breakage::NoLegacyFallback) => {
            fall_back(transport, config, &failure, None).await
        }
        ProbeFailure::Modern
            if config
                .hooks
                .broken
                .contains(&Breakage::FallbackOnModernError) =>
        {
            fall_back(transport, config, &failure, None).await
        }
        ProbeFailure::Legacy | ProbeFailure::Modern | ProbeFailure::Fatal => Err(failure.into()),
    }
}

/// A `server/discover` result: the newest version both speak, statelessly; a server that
/// lists only handshake revisions is spoken to with `initialize`.
async fn discovered(
    transport: &Transport,
    config: &ClientConfig,
    offered: &str,
    result: Value,
) -> Result<(String, Value), Failed> {
    modern::result_kind("server/discover", &result)?;
    let Some(versions) = result.get("supportedVersions").and_then(Value::as_array) else {
        // Not a DiscoverResult: a server that answers any method alike, not a modern one.
        let why =
            McpError::Protocol("the server/discover result has no supportedVersions list".into());
        return fall_back(transport, config, &why, None).await;
    };
    let listed: Vec<&str> = versions.iter().filter_map(Value::as_str).collect();
    let stateless = crate::STATELESS_PROTOCOL_VERSIONS
        .into_iter()
        .filter(|v| *v <= offered)
        .rev()
        .find(|v| listed.contains(v));
    if let Some(version) = stateless {
        transport.stateless(Some(version));
        return Ok((version.to_string(), result));
    }
    match mutual_legacy(result.get("supportedVersions")) {
        Some(version) => {
            let why =
                McpError::Protocol(format!("server/discover lists {} only", listed.join(", ")));
            fall_back(transport, config, &why, Some(version)).await
        }
        None => Err(McpError::Protocol(format!(
            "the server supports {}, none of which this client speaks ({}, {})",
            listed
                .iter()
                .map(|v| format!("'{}'", v.escape_debug()))
                .collect::<Vec<_>>()
                .join(", "),
            crate::STATELESS_PROTOCOL_VERSIONS.join(", "),
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        ))
        .into()),
    }
}

/// The newest handshake revision in a server's `supported` list that the client speaks.
fn mutual_legacy(supported: Option<&Value>) -> Option<&'static str> {
    let listed: Vec<&str> = supported?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    SUPPORTED_PROTOCOL_VERSIONS
        .into_iter()
        .rev()
        .find(|v| listed.contains(v))
}

/// The server is taken for an older one (`why`): `initialize` at `version` (the newest
/// handshake revision by default).
async fn fall_back(
    transport: &Transport,
    config: &ClientConfig,
    why: &McpError,
    version: Option<&'static str>,
) -> Result<(String, Value), Failed> {
    tracing::info!(
        target: "mcp_refclient",
        "{} does not speak {} ({}); falling back to initialize",
        transport.name(),
        crate::STATELESS_PROTOCOL_VERSION,
        why.full_text()
    );
    transport.stateless(None);
    handshake(
        transport,
        config,
        Some(version.unwrap_or(crate::LATEST_PROTOCOL_VERSION)),
    )
    .await
}

/// `initialize` (offering `offer`, else the profile's version), the version check, then
/// `notifications/initialized`.
async fn handshake(
    transport: &Transport,
    config: &ClientConfig,
    offer: Option<&str>,
) -> Result<(String, Value), Failed> {
    let params = json!({
        "protocolVersion": match transport {
            _ if offer.is_some() => offer.unwrap_or_default(),
            Transport::Http(_) if config.hooks.broken.contains(&Breakage::HttpOffersLatest) => crate::LATEST_PROTOCOL_VERSION,
            _ => transport.offered_version(config.profile),
        },
        "capabilities": {},
        "clientInfo": {
            "name": config.client_name.as_deref().unwrap_or(env!("CARGO_PKG_NAME")),
            "version": env!("CARGO_PKG_VERSION"),
        },
    });
    let result = rpc(transport
        .request_fated("initialize", Some(params), None)
        .await?)?;
    let version = match result.get("protocolVersion") {
        Some(Value::String(version)) => version.clone(),
        Some(other) => {
            return Err(McpError::Protocol(format!(
                "initialize result has a protocolVersion that is not a string: {other}"
            ))
            .into())
        }
        None => {
            return Err(
                McpError::Protocol("initialize result has no protocolVersion".into()).into(),
            )
        }
    };
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&version.as_str()) {
        return Err(McpError::Protocol(format!(
            "server answered protocol version '{version}', which this client does not support ({}); disconnected",
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        ))
        .into());
    }
    transport.negotiated(&version);
    transport
        .notify_fated("notifications/initialized", None)
        .await?;
    Ok((version, result))
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
