//! The scenario format: one TOML file per scenario, read top to bottom.
//!
//! ```toml
//! rules = ["stdio.banner.skipped"]
//! requirement = "A line on stdout that is not JSON (a banner, a debug print) is skipped and logged at WARN"
//! profiles = ["strict", "yoagent"]
//!
//! [server]
//! steps = [{ banner = { lines = ["my-server v1.0 starting"] } }, { handshake = {} }]
//!
//! [client]
//! steps = [{ connect = {} }, { close = {} }]
//!
//! [expect]
//! steps = [{ step = 1, ok = true }]
//! logs = [{ level = "WARN", contains = "my-server v1.0 starting" }]
//! ```

mod expectations;

pub use expectations::*;

use mcp_mock_servers::script::Script;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One scenario.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The ids of the rules this scenario checks (see `mcp-conformance list`).
    pub rules: Vec<String>,
    /// The requirement, quoted from the seed or the specification.
    pub requirement: String,
    /// The profiles the scenario applies to; every profile when absent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<String>,
    /// The scripted server.
    pub server: Script,
    /// The client's configuration and steps.
    pub client: ClientPart,
    /// What must hold once the steps have run.
    pub expect: Expectations,
}

/// The client under test: its configuration and what it is asked to do.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientPart {
    /// Bounds overriding the profile's, in milliseconds.
    #[serde(default)]
    pub timeouts: TimeoutOverrides,
    /// Run the server in a process group of its own.
    #[serde(default)]
    pub own_process_group: bool,
    /// Extra environment variables for the server.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Launch this command instead of the scripted server (for a command that does not exist).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Faults the wire cannot cause, injected through the client's test hooks.
    #[serde(default)]
    pub faults: Faults,
    /// The newest protocol revision the strict client offers: `2025-11-25` when absent (the
    /// handshake, no `server/discover` probe: scenarios about a handshake revision see only
    /// what they are about), `2026-07-28` for a stateless scenario (the probe first, with the
    /// fallback to `initialize`). Every rule the scenario names must apply at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// HTTP: how the client reaches the server (headers, redirects, tokens, URL).
    #[serde(default)]
    pub http: HttpClientPart,
    /// The steps, run in order.
    pub steps: Vec<ClientStep>,
}

/// Bounds overriding the profile's, in milliseconds.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeoutOverrides {
    /// The handshake bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake_ms: Option<u64>,
    /// The tool call bound; 0 means unbounded (`None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_ms: Option<u64>,
    /// The bound on other requests (`tools/list`); 0 means unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_ms: Option<u64>,
    /// The HTTP idle read bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_read_ms: Option<u64>,
    /// How long the exit text may wait for the last of stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_settle_ms: Option<u64>,
    /// The bounds only keep the run short; the scenario does not test them. A client that
    /// cannot set its bounds (no `configurable_timeouts`) is judged all the same, on its own
    /// bounds, the runner's step guard ending a step it never ends (`hung`, its failure).
    /// Never for a scenario whose rule is about one of these bounds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub safety_only: bool,
}

/// How an HTTP client is set up.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpClientPart {
    /// Headers the caller sets, in order, as `[name, value]` pairs (a name set again
    /// replaces its value).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<[String; 2]>,
    /// The redirect policy: `same-origin` (the default), `none` or `any`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirects: Option<RedirectPolicy>,
    /// A scripted token provider: `token()` gives `token`, each `refresh()` the next of
    /// `refreshed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// The URL to connect to instead of the mock's own; `${primary}`, `${second}` and
    /// `${plain}` stand for the listeners' origins (`${primary}/sk-live-4f9a8b7c/mcp`), and
    /// `${port}` for the primary port (`http://someuser123:pw@127.0.0.1:${port}/mcp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Trust the certificate the https mock generated (true by default; false proves the
    /// client never skips verification).
    #[serde(default = "yes")]
    pub trust_mock_certificate: bool,
    /// The cap on a response body, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_body_bytes: Option<usize>,
    /// The authorization flow (capability `authorization`): the client authorizes itself
    /// on a 401 as a pre-registered client, the runner playing the user agent (it follows
    /// the authorization server's redirect to the redirect URI without a browser).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthClient>,
}

/// A pre-registered OAuth client: what the client under test is configured with.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct OAuthClient {
    /// The client id (the mock's default, `mcp-conformance-client`, unless given).
    #[serde(default = "default_client_id")]
    pub client_id: String,
    /// Whether the client holds a client id for the server (true by default); false: it
    /// holds none, `client_id` and `client_secret` are unused, and it registers with the
    /// authorization server (dynamic client registration, RFC 7591).
    #[serde(default = "yes")]
    pub pre_registered: bool,
    /// Machine to machine: the client asks for its token with the client-credentials grant
    /// (the OAuth Client Credentials extension) and its pre-registered credentials, no user
    /// agent involved.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_credentials: bool,
    /// The HTTPS URL of the client's metadata document (a Client ID Metadata Document), its
    /// client id where the authorization server supports such documents and no client id
    /// is pre-registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// The client secret of a confidential client; none for a public client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The client's EC P-256 private key, PEM PKCS#8 (`-----BEGIN PRIVATE KEY-----`), for
    /// `private_key_jwt` (RFC 7523 section 2.2; capability `private_key_jwt`): the client
    /// authenticates at the token endpoint with an ES256 assertion signed with it. A secret
    /// of the scenario: no output may show it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_pem: Option<String>,
    /// The registered redirect URI (`http://127.0.0.1/callback` unless given); the runner,
    /// as the user agent, stops at it without requesting it.
    #[serde(default = "default_redirect_uri")]
    pub redirect_uri: String,
}

fn default_client_id() -> String {
    "mcp-conformance-client".into()
}

fn default_redirect_uri() -> String {
    "http://127.0.0.1/callback".into()
}

impl Default for HttpClientPart {
    /// As an absent `[client.http]` table reads: the mock's certificate trusted.
    fn default() -> Self {
        HttpClientPart {
            headers: Vec::new(),
            redirects: None,
            tokens: None,
            url: None,
            trust_mock_certificate: true,
            max_body_bytes: None,
            oauth: None,
        }
    }
}

/// A redirect policy.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum RedirectPolicy {
    /// Follow redirects within the URL's own origin only.
    SameOrigin,
    /// Refuse every redirect.
    None,
    /// Follow redirects anywhere.
    Any,
}

/// A scripted token provider.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tokens {
    /// The token `token()` gives at first.
    pub token: String,
    /// What each `refresh()` gives, in order; past the end, refresh fails.
    #[serde(default)]
    pub refreshed: Vec<String>,
    /// Each `token()` gives a new token: the current one with `-1`, `-2`, … appended, so a
    /// client that reuses a token it was given earlier is seen to.
    #[serde(default)]
    pub rotate: bool,
}

/// Faults injected through the reference client's test hooks.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Faults {
    /// Waiting on the child fails, as for a child that cannot be waited on.
    #[serde(default)]
    pub unwaitable_child: bool,
}

/// One client step. Each is a table with one key naming the step.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClientStep {
    /// Launch the server and run the handshake.
    Connect(Empty),
    /// `tools/list`.
    ListTools(Empty),
    /// `tools/call`.
    CallTool(CallTool),
    /// `close()`.
    Close(Empty),
    /// Drop the client without closing it.
    Drop(Empty),
    /// Read `exited()` once.
    Exited(Empty),
    /// Poll `exited()` every `every_ms` for `for_ms`, keeping each distinct text with its time.
    PollExited(PollExited),
    /// Wait until `exited()` reports the server gone, bounded by `within_ms`.
    WaitExited(WaitExited),
    /// Read how many `notifications/tools/list_changed` the client counted.
    ListChanged(Empty),
    /// Wait until the client has counted at least `count` list changes, bounded by
    /// `within_ms` (what arrives on a stream the client reads in the background); the count.
    WaitListChanged(WaitListChanged),
    /// Start a step in the background under a name; `join` waits for it.
    Spawn(Spawn),
    /// Wait for a spawned step and take its result as this step's.
    Join(Join),
    /// Connect from a host subprocess in a session of its own, send SIGINT to the host's
    /// process group (a Ctrl+C in its terminal), and report what became of the server.
    InterruptHost(Empty),
    /// Abort a spawned step, as when its run is cancelled.
    Cancel(Join),
    /// Build a tool source over the connected client (yoagent's McpToolSource).
    ToolSource(ToolSourceStep),
    /// A run begins: the source lists the server's tools.
    BeginRun(Empty),
    /// A turn: before the next model request, the source relists if the server announced a
    /// change, and withdraws the tools of a server that exited.
    NextTurn(Empty),
    /// Call a tool through the source by the name the model sees (`srv__echo`).
    CallAdapter(CallTool),
    /// Build a tool set (several servers' tools in one list, `ToolSet`) from the connected
    /// client's tools, listed once per entry and added under that entry's server name and
    /// prefix, in order; its value: every tool with its server, or the refusal of a name
    /// offered twice.
    ToolSet(ToolSetStep),
    /// Call a tool through the tool set by the name the model sees.
    CallSet(CallTool),
    /// Wait until the server has received a message, bounded.
    AwaitReceived(AwaitReceived),
    /// `reconnect()`: tear the connection down, establish it again (respawn or a new HTTP
    /// session, handshake) and clear the tools cache.
    Reconnect(Empty),
    /// Wait until a launch of the stdio server has begun a step of its script (so every
    /// step before it has played, e.g. a `stop_reading`), bounded.
    AwaitStep(AwaitStep),
    /// Wait until the server has played its script to the end, bounded (what an HTTP
    /// server's `await_close` waits on happens behind the client's calls: a close, a drop);
    /// fails when the script stopped short (a mismatch) or the bound passed first.
    AwaitPlayed(AwaitPlayed),
    /// Look at every process the server reported so far, here and before anything is
    /// dropped: all gone (a bounded wait for each to go), or some still alive (looked at
    /// once). The step fails, naming the processes, when it does not hold.
    Processes(ProcessesStep),
    /// Send any request the scenario names (`{ method = "ping" }`) and take its result as the
    /// server sent it (capability `raw_messages`).
    Request(RawMessage),
    /// Send any notification the scenario names (capability `raw_messages`).
    Notify(RawMessage),
    /// Read what the client keeps of what the server said about itself when the connection
    /// opened: its `initialize` result (at 2026-07-28 its `server/discover` result), with
    /// `serverInfo` and `capabilities` (capability `server_info`).
    ServerInfo(Empty),
    /// Read the process id the client gives for its stdio server and name the launch of the
    /// server it belongs to; the step fails when no launch of the server reported that pid
    /// (capability `server_pid`).
    ServerProcess(Empty),
    /// Read the Streamable HTTP session id the client holds now, `null` for none (capability
    /// `session_id`).
    SessionId(Empty),
}

/// A request or notification the scenario names.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMessage {
    /// The method.
    pub method: String,
    /// The params, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

/// What must be true of the server's processes at a step.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessesStep {
    /// Every process gone (`true`), or some still alive (`false`, a documented limitation).
    pub gone: bool,
    /// How long the processes get to go (`gone = true` only).
    #[serde(default = "default_processes_ms")]
    pub within_ms: u64,
}

fn default_processes_ms() -> u64 {
    2_000
}

/// An empty step body: `{}`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

/// Building a tool source.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSourceStep {
    /// The server's name, as logs name it.
    #[serde(default = "default_source_name")]
    pub name: String,
    /// The prefix: tools appear as `prefix__name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Whether the transport reports notifications (false stands for a custom transport that
    /// cannot).
    #[serde(default = "yes")]
    pub reports_notifications: bool,
}

/// A tool set built from the connected client's tools.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSetStep {
    /// The servers to add, in order: the connected client each time, under these names.
    pub servers: Vec<ToolSetServer>,
}

/// One server of a tool set.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSetServer {
    /// Its name in the set (the collision error names it).
    pub name: String,
    /// The prefix: its tools appear as `prefix__name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
}

fn default_source_name() -> String {
    "server".into()
}

/// A tool call.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallTool {
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// A bound for this call only, overriding the client's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Adds an argument `pad` of this many `x` characters: a request larger than a pipe's
    /// buffer (64 KiB), whose write blocks while the server does not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pad_bytes: Option<usize>,
}

impl CallTool {
    /// The arguments sent: [`CallTool::arguments`], with `pad` when [`CallTool::pad_bytes`] is set.
    pub fn sent_arguments(&self) -> Value {
        let mut arguments = self.arguments.clone();
        if let (Some(bytes), Value::Object(map)) = (self.pad_bytes, &mut arguments) {
            map.insert("pad".into(), Value::String("x".repeat(bytes)));
        }
        arguments
    }
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// Polling `exited()`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PollExited {
    /// The polling period.
    pub every_ms: u64,
    /// How long to poll.
    pub for_ms: u64,
}

/// Waiting for counted list changes.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitListChanged {
    /// How many, at least.
    pub count: u64,
    /// The bound.
    pub within_ms: u64,
}

/// Waiting for `exited()`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitExited {
    /// The bound.
    pub within_ms: u64,
}

/// A step started in the background.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spawn {
    /// The name `join` refers to.
    pub name: String,
    /// The step to run.
    pub step: Box<ClientStep>,
}

/// A spawned step to wait for (`join`) or abort (`cancel`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Join {
    /// The spawned step's name.
    pub name: String,
}

/// Waiting for the server to receive something.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AwaitReceived {
    /// What to wait for, as `[expect] received` spells it: a method, or `response:<id>`
    /// for the client's answer to a server request.
    pub message: String,
    /// How many of them (1 by default).
    #[serde(default = "one")]
    pub count: usize,
    /// The bound.
    #[serde(default = "default_await_ms")]
    pub within_ms: u64,
}

fn one() -> usize {
    1
}

/// Waiting for the server to reach a step of its script.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AwaitStep {
    /// The step, numbered from 1 as the transcript numbers them.
    pub step: usize,
    /// Which launch of the server (1 for the first).
    #[serde(default = "first_launch")]
    pub launch: u32,
    /// The bound.
    #[serde(default = "default_await_ms")]
    pub within_ms: u64,
}

/// Waiting for the server to play its whole script.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AwaitPlayed {
    /// The bound.
    #[serde(default = "default_await_ms")]
    pub within_ms: u64,
}

fn first_launch() -> u32 {
    1
}

fn default_await_ms() -> u64 {
    5_000
}

impl Scenario {
    /// The revision the scenario runs at (see [`ClientPart::revision`]).
    pub fn revision(&self) -> &str {
        self.client
            .revision
            .as_deref()
            .unwrap_or(crate::rules::LAST_LEGACY_REVISION)
    }

    /// The messages the scenario is about: those its expectations name. They are never
    /// incidental traffic.
    pub fn named_messages(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for expect in std::iter::once(&self.expect).chain(self.expect.by_rule.values()) {
            names.extend(expect.received.iter().flatten().cloned());
            names.extend(expect.counts.keys().cloned());
            names.extend(
                expect
                    .received_includes
                    .iter()
                    .filter_map(|v| Some(v.get("method")?.as_str()?.to_string())),
            );
            let requests = expect
                .http_requests
                .iter()
                .chain(&expect.http_every_request);
            names.extend(requests.filter_map(|r| r.rpc_method.clone()));
        }
        names.extend(self.client.steps.iter().filter_map(|s| match s {
            ClientStep::AwaitReceived(wait) => Some(wait.message.clone()),
            _ => None,
        }));
        names
    }
}

fn yes() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The property names of a definition in the scenario schema.
    fn properties(definition: &str) -> Vec<String> {
        let schema: Value = serde_json::from_str(&crate::scenario::json_schema()).unwrap();
        let props = schema["definitions"][definition]["properties"]
            .as_object()
            .unwrap();
        props.keys().cloned().collect()
    }

    #[test]
    fn every_expectation_field_is_marked_portable_or_reference_only_once() {
        let mut fields: Vec<String> = properties("Expectations")
            .into_iter()
            .filter(|f| f != "steps")
            .collect();
        fields.extend(
            properties("StepExpect")
                .into_iter()
                .filter(|f| f != "step")
                .map(|f| format!("steps.{f}")),
        );
        fields.sort();
        let mut marked: Vec<String> = EXPECTATION_FIELDS
            .iter()
            .map(|(f, _)| f.to_string())
            .collect();
        marked.sort();
        assert_eq!(fields, marked);
    }

    #[test]
    fn the_portable_part_drops_kinds_logs_and_values_but_keeps_what_they_imply() {
        let expect: Expectations = toml::from_str(
            r#"
            steps = [{ step = 1, error = "timeout", contains = ["timed out"] }, { step = 2, value = { a = 1 } }]
            logs = [{ level = "WARN", contains = "banner" }]
            counts = { ping = 1 }
            "#,
        )
        .unwrap();
        let portable = expect.portable();
        assert!(portable.logs.is_empty());
        assert_eq!(portable.counts, expect.counts);
        assert_eq!(
            (portable.steps[0].error.as_deref(), portable.steps[0].ok),
            (None, Some(false))
        );
        assert_eq!(portable.steps[0].contains, ["timed out"]);
        assert_eq!(
            (portable.steps[1].value.as_ref(), portable.steps[1].ok),
            (None, Some(true))
        );
    }
}
