//! The transport a client speaks over, where its server is, and one established connection.

use std::time::Duration;

use serde_json::Value;

use crate::error::Failed;
use crate::http::legacy::LegacyTransport;
use crate::http::streamable::StreamableTransport;
use crate::jsonrpc::ErrorObject;
use crate::stdio::StdioTransport;
use crate::{Breakage, ClientConfig, HttpServer, McpError, Profile, StdioServer};

/// The connection an [`McpClient`] speaks over.
pub(super) enum Transport {
    Stdio(StdioTransport),
    Http(Box<StreamableTransport>),
    LegacySse(LegacyTransport),
}

impl Transport {
    /// Sends a request and reads its answer, saying on failure whether the transport is dead
    /// and whether the request may have reached the server. The legacy transport never says it
    /// is dead (it is not reconnected by itself).
    pub(super) async fn request_fated(
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

    pub(super) async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        match self {
            Transport::Stdio(t) => t.notify(method, params).await,
            Transport::Http(t) => t.notify(method, params).await,
            Transport::LegacySse(t) => t.notify(method, params).await,
        }
    }

    pub(super) async fn notify_fated(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), Failed> {
        match self {
            Transport::Stdio(t) => t.notify_fated(method, params).await,
            Transport::Http(t) => t.notify_fated(method, params).await,
            Transport::LegacySse(t) => t.notify(method, params).await.map_err(Failed::alive),
        }
    }

    pub(super) fn list_changes(&self) -> u64 {
        match self {
            Transport::Stdio(t) => t.list_changes(),
            Transport::Http(t) => t.list_changes(),
            Transport::LegacySse(t) => t.list_changes(),
        }
    }

    pub(super) async fn close(&self) {
        match self {
            Transport::Stdio(t) => t.close().await,
            Transport::Http(t) => t.close().await,
            Transport::LegacySse(t) => t.close().await,
        }
    }

    /// The protocol version offered in `initialize`.
    pub(super) fn offered_version(&self, profile: Profile) -> &'static str {
        match (self, profile) {
            (Transport::Stdio(_), _) => profile.stdio_protocol_version(),
            (Transport::Http(_), Profile::Strict) => crate::LATEST_PROTOCOL_VERSION,
            (Transport::Http(_), Profile::Kova) => "2025-06-18",
            (Transport::Http(_), Profile::Yoagent) | (Transport::LegacySse(_), _) => "2024-11-05",
        }
    }

    /// 2026-07-28 from now on (`Some`), or a handshake revision again (`None`).
    pub(super) fn stateless(&self, version: Option<&str>) {
        if let Transport::Http(t) = self {
            t.stateless(version);
        }
    }

    /// The handshake settled on `version`.
    pub(super) fn negotiated(&self, version: &str) {
        if let Transport::Http(t) = self {
            t.negotiated(version);
        }
    }

    /// The bound of a tool call: over stdio the override or the client's call bound; over
    /// HTTP the override in strict and yoagent (yoagent's own is its tool adapter's,
    /// `McpToolAdapter::with_call_timeout`, on any transport; without one, the idle timeout
    /// only), the override or the call bound in kova.
    pub(super) fn call_bound(
        &self,
        config: &ClientConfig,
        timeout: Option<Duration>,
    ) -> Option<Duration> {
        let timeout = timeout.filter(|_| {
            !config
                .hooks
                .broken
                .contains(&Breakage::PerCallTimeoutIgnored)
        });
        match (self, config.profile) {
            (Transport::Stdio(_), _) | (_, Profile::Kova)
                if config
                    .hooks
                    .broken
                    .contains(&Breakage::UnboundedCallFallsBack) =>
            {
                timeout
                    .or(config.timeouts().call)
                    .or(config.timeouts().list)
            }
            (Transport::Stdio(_), _) | (_, Profile::Kova) => timeout.or(config.timeouts().call),
            (_, Profile::Strict | Profile::Yoagent) => timeout,
        }
    }

    /// The bound of any other request: over HTTP only kova has one.
    pub(super) fn list_bound(&self, config: &ClientConfig) -> Option<Duration> {
        match (self, config.profile) {
            (Transport::Stdio(_), _) => config.timeouts().list,
            (_, Profile::Kova) if !config.hooks.broken.contains(&Breakage::NoListBoundOverHttp) => {
                config.timeouts().list
            }
            _ => None,
        }
    }

    /// What names the server in handshake errors.
    pub(super) fn name(&self) -> String {
        match self {
            Transport::Stdio(t) => format!("server '{}'", t.command()),
            Transport::Http(t) => t.origin().to_string(),
            Transport::LegacySse(t) => t.origin().to_string(),
        }
    }
}

/// Where the server is, kept so the client can reach it again.
#[derive(Clone)]
pub(super) enum Target {
    Stdio(StdioServer),
    Http(HttpServer),
    LegacySse(HttpServer),
}

impl Target {
    /// What names the server in log lines: the command as given, or the origin.
    pub(super) fn name(&self) -> String {
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
pub(super) struct Connection {
    pub(super) transport: Transport,
    pub(super) protocol_version: String,
    /// 2026-07-28 is spoken: `_meta` on every request, `resultType` read, no session.
    pub(super) stateless: bool,
    pub(super) server_info: Value,
    /// Counts the connections of a client (1 for the first), so a listing that raced a
    /// reconnect is not cached.
    pub(super) generation: u64,
    /// The test switch `RequestStateCarriedOver`: the last `requestState` echoed.
    pub(super) carried_state: std::sync::Mutex<Option<Value>>,
}
