//! Clients under test: the one seam every client goes through.
//!
//! The runner drives any MCP client through [`ClientUnderTest`]: the reference client is one
//! adapter ([`reference::ReferenceClient`], under each of its three profiles), a client in
//! another language is another ([`driver::DriverClient`], speaking the driver protocol over
//! a child process's stdin/stdout), and a Rust client author writes a third in their own
//! `tests/conformance.rs` and runs it with [`crate::harness::main`].
//!
//! A scenario that needs something the client did not declare in [`Described`] (a
//! transport, a capability) is *not applicable* to it, with the reason; never a pass.
//!
//! ```no_run
//! use mcp_conformance::cut::{Capability, ClientUnderTest, Described, Settings, StepError, StepResult, Target, TransportKind};
//! use serde_json::{json, Value};
//! use std::cell::RefCell;
//! use std::time::Duration;
//!
//! /// An adapter around a client that can only say hello (a stand-in for yours).
//! #[derive(Default)]
//! struct Adapter {
//!     connected: RefCell<bool>,
//! }
//!
//! impl ClientUnderTest for Adapter {
//!     fn describe(&self) -> Described {
//!         Described {
//!             name: "my-client".into(),
//!             version: "0.1.0".into(),
//!             transports: vec![TransportKind::Stdio],
//!             capabilities: vec![Capability::CallTimeout],
//!             profile: "strict".into(),
//!         }
//!     }
//!     async fn connect(&self, target: &Target, _settings: &Settings) -> StepResult {
//!         let Target::Stdio(stdio) = target else { return Err(StepError::new("stdio only")) };
//!         // my_client::Client::spawn(&stdio.command, &stdio.args).await …
//!         let _ = &stdio.command;
//!         *self.connected.borrow_mut() = true;
//!         Ok(json!({ "protocolVersion": "2025-11-25" }))
//!     }
//!     async fn list_tools(&self) -> StepResult {
//!         Ok(json!([]))
//!     }
//!     async fn call_tool(&self, name: &str, _arguments: Value, _timeout: Option<Duration>) -> StepResult {
//!         Err(StepError::new(format!("no tool {name}")))
//!     }
//!     async fn close(&self) -> StepResult {
//!         *self.connected.borrow_mut() = false;
//!         Ok(json!("closed"))
//!     }
//!     async fn drop_connection(&self) -> StepResult {
//!         Ok(json!(self.connected.replace(false)))
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     mcp_conformance::harness::main(Adapter::default, "tests/conformance-baseline.toml")
//! }
//! ```

pub mod driver;
pub(crate) mod host;
pub mod needs;
pub mod reference;
pub mod scripted_tokens;
pub mod sources;
pub(crate) mod spawn_lock;
pub(crate) mod tool_layer;

pub use crate::probe::ServerProbe;
pub use scripted_tokens::ScriptedTokens;

use crate::scenario::{Faults, OAuthClient, RedirectPolicy, TimeoutOverrides, Tokens};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// What a client says about itself: the report names it, and the runner judges it only on
/// the scenarios it can express and its profile promises.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Described {
    /// The client's name (`ts-sdk`), as reports show it.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The transports it can connect over.
    pub transports: Vec<TransportKind>,
    /// The optional capabilities it can express.
    #[serde(default)]
    pub capabilities: Vec<Capability>,
    /// The promises it claims: `strict` (the specification), `yoagent` or `kova` (a seed
    /// client's documented profile).
    #[serde(default = "strict")]
    pub profile: String,
}

fn strict() -> String {
    "strict".into()
}

impl Described {
    /// `name version` as reports show it.
    pub fn label(&self) -> String {
        if self.version.is_empty() {
            self.name.clone()
        } else {
            format!("{} {}", self.name, self.version)
        }
    }
}

/// A transport a client can connect over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TransportKind {
    /// A server launched as a child process, JSON lines on its stdin/stdout.
    Stdio,
    /// Streamable HTTP (http and https URLs).
    Http,
    /// The legacy HTTP+SSE transport (2024-11-05).
    LegacySse,
}

/// Something a client may or may not be able to express. A scenario that needs one the
/// client did not declare is not applicable to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// A timeout for one `tools/call` (`call_tool`'s `timeout`).
    CallTimeout,
    /// The client's own bounds set from `Settings::timeouts`.
    ConfigurableTimeouts,
    /// A call in flight can be cancelled (for a Rust adapter: dropping its future).
    Cancel,
    /// `exited()`: whether (and why) a stdio server went away, without a call.
    Exited,
    /// `reconnect()`: tear the connection down and establish it again.
    Reconnect,
    /// How many `notifications/tools/list_changed` the client counted.
    ListChangedCount,
    /// Headers the caller sets on every HTTP request.
    CustomHeaders,
    /// A token provider asked for a bearer token, and to refresh it on a 401.
    TokenProvider,
    /// A redirect policy (`same-origin`, `none`, `any`).
    RedirectPolicy,
    /// Trusting only given root certificates (https targets).
    TrustedRoots,
    /// A cap on a response body's size.
    BodyCap,
    /// Starting a stdio server in a process group of its own.
    ProcessGroup,
    /// A tool layer for an agent loop (a tool source: runs, turns, calls by prefixed name).
    ToolLayer,
    /// Running inside a host process that a scenario interrupts with SIGINT. A driver
    /// declaring it is that host: after a `connect`, the runner sends SIGINT to the driver's
    /// process group (a Ctrl+C in its terminal) and the driver ends as its program would.
    InterruptHost,
    /// Faults injected through the client's test hooks (the reference client's).
    FaultHooks,
    /// Speaking revision 2026-07-28 (stateless MCP: `server/discover`, `_meta`, no session)
    /// when a scenario asks for it (`Settings::revision`).
    Stateless,
    /// Dropping the connection without closing it ends it (`drop_connection`): a stdio
    /// server's input closes and the server goes, as when a Rust client is dropped. A
    /// client that can only forget a connection, leaving what it started running until its
    /// program exits (JavaScript has no destructor), does not declare it: the scenarios that
    /// look at what a drop ended are then not applicable to it.
    Drop,
    /// Sending any request or notification a scenario names (`request`, `notify` steps):
    /// the request's result as the server sent it.
    RawMessages,
    /// What the server said about itself when the connection opened (its `initialize` or
    /// `server/discover` result), as the client keeps it.
    ServerInfo,
    /// The process id of the stdio server the client runs (the current one after a
    /// reconnect).
    ServerPid,
    /// The Streamable HTTP session id the client holds.
    SessionId,
    /// The MCP authorization flow (OAuth 2.1) as a pre-registered client, on a 401 from an
    /// HTTP server (`HttpTarget::oauth`).
    Authorization,
    /// In the authorization flow, a client that holds no client id registers with the
    /// authorization server (dynamic client registration, RFC 7591; `OAuthClient::pre_registered`
    /// false).
    DynamicRegistration,
    /// In the authorization flow, a client whose id is the URL of its Client ID Metadata
    /// Document (`OAuthClient::client_metadata_url`).
    ClientIdMetadataDocument,
    /// A machine-to-machine client: its token from the client-credentials grant, no user agent
    /// (`OAuthClient::client_credentials`).
    ClientCredentials,
    /// In the authorization flow, a client that authenticates at the token endpoint with a
    /// JWT signed with its private key (`private_key_jwt`, RFC 7523 section 2.2;
    /// `OAuthClient::private_key_pem`).
    PrivateKeyJwt,
    /// The client can be set to offer an older protocol revision than its newest
    /// (`Settings::revision` other than 2026-07-28, which is `stateless`): where that revision's
    /// rules differ (the 2025-03-26 authorization fallbacks), only a client set to it is bound.
    PinnedRevision,
    /// The driver serves scenario after scenario: between two it answers `reset` once it
    /// holds no connection. Never needed by a scenario; it spares a start per scenario.
    Reusable,
}

impl Capability {
    /// The name as the driver protocol and reports spell it.
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    }
}

/// Where to connect.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// Launch a server as a child process.
    Stdio(StdioTarget),
    /// Reach a server over HTTP.
    Http(HttpTarget),
}

/// A stdio server to launch.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StdioTarget {
    /// The program.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Start it in a process group of its own (capability `process_group`).
    #[serde(default)]
    pub own_process_group: bool,
}

/// An HTTP server to reach.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpTarget {
    /// The endpoint URL (may hold a key: never quote it whole in an error).
    pub url: String,
    /// Speak the legacy HTTP+SSE transport rather than Streamable HTTP.
    #[serde(default)]
    pub legacy_sse: bool,
    /// Headers to set on every request, in order, as `[name, value]` (capability
    /// `custom_headers`; a name set again replaces its value).
    #[serde(default)]
    pub headers: Vec<[String; 2]>,
    /// The redirect policy (capability `redirect_policy`); the client's default when absent.
    #[serde(default)]
    pub redirects: Option<RedirectPolicy>,
    /// A scripted token provider (capability `token_provider`).
    #[serde(default)]
    pub tokens: Option<Tokens>,
    /// The only root certificates to trust, PEM (capability `trusted_roots`).
    #[serde(default)]
    pub trusted_roots_pem: Vec<String>,
    /// The cap on a response body, in bytes (capability `body_cap`).
    #[serde(default)]
    pub max_body_bytes: Option<usize>,
    /// The authorization flow as a pre-registered client (capability `authorization`): on
    /// a 401, discover the authorization server, authorize and retry with the token. The
    /// user-agent step plays no browser: open the authorization URL and follow the
    /// authorization server's redirects to the redirect URI, without requesting that, and
    /// hand the client that redirect's parameters (a driver does it; for the reference
    /// client, `FollowRedirects`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<Box<OAuthClient>>,
}

/// The scenario's settings for the client.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Bounds overriding the client's own, in milliseconds (capability
    /// `configurable_timeouts`); 0 for `call_ms`/`list_ms` means unbounded.
    #[serde(default)]
    pub timeouts: TimeoutOverrides,
    /// Faults for the reference client's test hooks (capability `fault_hooks`).
    #[serde(default)]
    pub faults: Faults,
    /// The newest protocol revision to offer (`2026-07-28`: probe `server/discover` first and
    /// speak it statelessly, falling back to `initialize`); a handshake revision when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
}

/// A step of the tool layer (capability `tool_layer`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum ToolLayerStep {
    /// Build a tool source over the connected client.
    Build {
        /// The server's name, as logs name it.
        name: String,
        /// Tools appear as `prefix__name`.
        prefix: Option<String>,
        /// Whether the transport reports notifications.
        reports_notifications: bool,
    },
    /// A run begins: the source lists the server's tools.
    BeginRun,
    /// A turn: relist if the server announced a change; withdraw a gone server's tools.
    NextTurn,
    /// Call a tool by the name the model sees.
    Call {
        /// The prefixed name.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// Build a tool set: the connected client's tools added once per server, in order.
    Set {
        /// Each server's name in the set and its prefix.
        servers: Vec<crate::scenario::ToolSetServer>,
    },
    /// Call a tool through the tool set by the name the model sees.
    CallSet {
        /// The exposed name.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
}

/// What a step failed with: the client's own error text, raw (scenarios assert on it).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct StepError {
    /// The error text as the client produced it, causes included.
    pub text: String,
    /// A typed kind, where the client has one (the reference client's: `transport`,
    /// `timeout`, …); only the reference client is judged on it.
    pub kind: Option<String>,
}

impl StepError {
    /// An error with the client's text and no typed kind.
    pub fn new(text: impl Into<String>) -> Self {
        StepError {
            text: text.into(),
            kind: None,
        }
    }

    /// The error a default body returns: the adapter declared no such capability.
    pub fn unsupported(capability: Capability) -> Self {
        StepError::new(format!(
            "not supported: the client does not declare `{}`",
            capability.name()
        ))
    }
}

/// A step's value (the client's result, as JSON) or its error.
pub type StepResult = Result<Value, StepError>;

/// A client under test. Implement it for a small adapter around your client.
///
/// Every method takes `&self`: the runner runs steps concurrently (`spawn`/`join` keep
/// several calls in flight, `close` may come while a call waits), all on one thread, so
/// keep the connection in a `RefCell<Option<…>>` or a mutex and clone out what a call
/// needs before awaiting. Futures need not be `Send`.
///
/// Errors carry the client's own text ([`StepError::text`]): scenarios assert on it
/// (`contains`, `lacks`, no secret anywhere). Optional capabilities have default bodies that
/// say "not supported"; declare the ones you implement in [`Described::capabilities`].
#[allow(async_fn_in_trait)] // the runner polls every step on one thread: no `Send` bound wanted
pub trait ClientUnderTest {
    /// Name, version, transports, capabilities and profile.
    fn describe(&self) -> Described;

    /// Connects (launching a stdio server, or reaching an HTTP one) and runs the handshake.
    /// The value is conventionally `{"protocolVersion": "…"}`.
    async fn connect(&self, target: &Target, settings: &Settings) -> StepResult;

    /// `tools/list`; the value is the tools as JSON.
    async fn list_tools(&self) -> StepResult;

    /// `tools/call`, bounded by `timeout` when given (capability `call_timeout`); the value
    /// is the result as JSON.
    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> StepResult;

    /// Closes the connection: a stdio server and everything it started must be gone.
    async fn close(&self) -> StepResult;

    /// Drops the connection without closing it (what an application does by forgetting the
    /// client); the value says whether there was one. The runner also calls it after the
    /// last step. Scenarios that look at what a drop ended need capability `drop`.
    async fn drop_connection(&self) -> StepResult;

    /// `exited()`: why the stdio server went away, if it did (capability `exited`).
    async fn exited(&self) -> Result<Option<String>, StepError> {
        Err(StepError::unsupported(Capability::Exited))
    }

    /// How many `notifications/tools/list_changed` were counted (capability
    /// `list_changed_count`).
    async fn list_changed_count(&self) -> Result<u64, StepError> {
        Err(StepError::unsupported(Capability::ListChangedCount))
    }

    /// Tears the connection down and establishes it again (capability `reconnect`).
    async fn reconnect(&self) -> StepResult {
        Err(StepError::unsupported(Capability::Reconnect))
    }

    /// A tool-layer step (capability `tool_layer`).
    async fn tool_layer(&self, step: ToolLayerStep) -> StepResult {
        let _ = step;
        Err(StepError::unsupported(Capability::ToolLayer))
    }

    /// Sends a request named by the scenario; the value is its result as the server sent it
    /// (capability `raw_messages`).
    async fn request(&self, method: &str, params: Option<Value>) -> StepResult {
        let _ = (method, params);
        Err(StepError::unsupported(Capability::RawMessages))
    }

    /// Sends a notification named by the scenario (capability `raw_messages`).
    async fn notify(&self, method: &str, params: Option<Value>) -> StepResult {
        let _ = (method, params);
        Err(StepError::unsupported(Capability::RawMessages))
    }

    /// The server's `initialize` (or `server/discover`) result as the client keeps it
    /// (capability `server_info`).
    async fn server_info(&self) -> StepResult {
        Err(StepError::unsupported(Capability::ServerInfo))
    }

    /// The process id of the stdio server the client runs, if any (capability `server_pid`).
    async fn server_pid(&self) -> Result<Option<u32>, StepError> {
        Err(StepError::unsupported(Capability::ServerPid))
    }

    /// The Streamable HTTP session id the client holds, if any (capability `session_id`).
    async fn session_id(&self) -> Result<Option<String>, StepError> {
        Err(StepError::unsupported(Capability::SessionId))
    }

    /// Connects from a host process in a session of its own, interrupts the host with
    /// SIGINT and reports `{"host": …, "server": …}` (capability `interrupt_host`).
    async fn interrupt_host(
        &self,
        target: &Target,
        settings: &Settings,
        server: &ServerProbe,
    ) -> StepResult {
        let _ = (target, settings, server);
        Err(StepError::unsupported(Capability::InterruptHost))
    }

    /// Called before the first step, outside any step's timing: start what the client
    /// needs (a driver process says hello here).
    async fn ready(&self) {}

    /// Called before the scenario takes its place beside the others (see
    /// [`spawn_lock`]), outside any step's timing: start the processes the client
    /// needs before its first step (a driver process).
    fn prepare(&self) {}

    /// Whether the client starts processes from this process while a scenario runs (a stdio
    /// server, a host): each such start holds a copy of every descriptor of this process
    /// until its exec, so such a scenario keeps away from one that needs a descriptor gone.
    /// A driver's servers are started by the driver, in a process of its own.
    fn forks_here(&self) -> bool {
        true
    }

    /// A fault of the client that no step shows (a driver that broke the protocol): it
    /// fails the scenario whatever the scenario expects.
    fn client_fault(&self) -> Option<String> {
        None
    }

    /// Called once the scenario's facts are taken (processes alive or gone): release
    /// whatever is left (a driver process, a runtime of your own).
    fn finish(&self) {}

    /// [`ClientUnderTest::finish`], told the processes the scenario's servers started and
    /// whether the client failed the scenario (a fault, a hang): a reusable driver that did
    /// not fail is reset and kept for the next scenario if none of them outlives the reset.
    /// Returns a note for the scenario's result when a process had to be replaced.
    fn release(&self, started: &[u32], failed: bool) -> Option<String> {
        let _ = (started, failed);
        self.finish();
        None
    }
}

/// Whether `described` can express `needed`, else why not.
pub fn can_express(described: &Described, needed: &needs::Needs) -> Result<(), String> {
    let mut missing: Vec<String> = Vec::new();
    for transport in &needed.transports {
        if !described.transports.contains(transport) {
            missing.push(format!(
                "transport `{}`",
                serde_json::to_value(transport)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default()
            ));
        }
    }
    for capability in &needed.capabilities {
        if !described.capabilities.contains(capability) {
            missing.push(format!("`{}`", capability.name()));
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "needs {} (not declared by {})",
            missing.join(", "),
            described.label()
        ))
    }
}
