//! The driver protocol's messages: JSON lines on the driver's stdin (requests from the
//! runner) and stdout (a hello, then replies by id). The checked-in schema
//! (`protocol/driver.schema.json`) is generated from these types; a test keeps it fresh.

use crate::cut::{Described, Settings, Target, ToolLayerStep};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The driver's first line: who it is and what it can express.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    /// The client's description.
    pub hello: Described,
}

/// A request from the runner: one step, answered by `id`. Several may be in flight.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct Request {
    /// The request's id, unique within the driver's life; the reply carries it.
    pub id: u64,
    /// The step.
    #[serde(flatten)]
    pub step: DriverStep,
}

/// One step, named by `step`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum DriverStep {
    /// Connect (launch the stdio server, or reach the HTTP one) and run the handshake;
    /// reply `{"protocolVersion": …}`.
    Connect {
        /// Where.
        target: Target,
        /// The scenario's settings.
        settings: Settings,
    },
    /// `tools/list`; reply with the tools.
    ListTools,
    /// `tools/call`; reply with the result.
    CallTool {
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: Value,
        /// A bound for this call only (capability `call_timeout`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
    /// Close the connection; the server and all it started must be gone.
    Close,
    /// Drop the connection without closing it; reply whether there was one. Sent after the
    /// last step of every scenario; the scenarios that look at what a drop ended (a stdio
    /// server gone after it) need capability `drop`.
    Drop,
    /// `exited()`: reply with the text, or `null` while the server lives (capability `exited`).
    Exited,
    /// Reply with the count of `notifications/tools/list_changed` (capability `list_changed_count`).
    ListChangedCount,
    /// Tear the connection down and establish it again (capability `reconnect`).
    Reconnect,
    /// Abandon the request `of` (capability `cancel`): its reply no longer matters.
    Cancel {
        /// The id of the request to cancel.
        of: u64,
    },
    /// A tool-layer step (capability `tool_layer`).
    ToolLayer {
        /// The step.
        layer: ToolLayerStep,
    },
    /// Send the request the scenario names; reply with its result as the server sent it
    /// (capability `raw_messages`).
    Request {
        /// The method.
        method: String,
        /// The params, when any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
    },
    /// Send the notification the scenario names (capability `raw_messages`).
    Notify {
        /// The method.
        method: String,
        /// The params, when any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
    },
    /// Reply with the server's `initialize` (or `server/discover`) result as the client keeps
    /// it (capability `server_info`).
    ServerInfo,
    /// Reply with the process id of the stdio server, or `null` (capability `server_pid`).
    ServerPid,
    /// Reply with the Streamable HTTP session id held, or `null` (capability `session_id`).
    SessionId,
    /// A scenario ended (capability `reusable`): abandon every step still running, close or
    /// drop every connection held (a stdio server and all it started must be gone) and reply
    /// once clean; the next scenario's steps follow on the same process.
    Reset,
}

/// A reply from the driver.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// The id of the request it answers.
    pub id: u64,
    /// Whether the step succeeded.
    pub ok: bool,
    /// The value, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// The client's error text, raw, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Every message of the protocol, either way: what the schema describes.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Message {
    /// Driver → runner, first line.
    Hello(Hello),
    /// Runner → driver.
    Request(Request),
    /// Driver → runner.
    Reply(Reply),
}

/// The JSON schema of the protocol, as checked in at `protocol/driver.schema.json`.
pub fn json_schema() -> String {
    crate::schema_text::<Message>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_as_the_readme_shows_it() {
        let line =
            r#"{"id": 2, "step": "call_tool", "name": "echo", "arguments": {}, "timeout_ms": 100}"#;
        let request: Request = serde_json::from_str(line).unwrap();
        assert!(
            matches!(request.step, DriverStep::CallTool { ref name, timeout_ms: Some(100), .. } if name == "echo")
        );
        let line = r#"{"id": 1, "step": "connect", "target": {"stdio": {"command": "srv", "args": ["-v"]}}, "settings": {"timeouts": {"call_ms": 150}}}"#;
        let request: Request = serde_json::from_str(line).unwrap();
        assert!(
            matches!(request.step, DriverStep::Connect { target: Target::Stdio(ref s), .. } if s.command == "srv")
        );
        let reply: Reply = serde_json::from_str(
            r#"{"id": 2, "ok": false, "error": "request timed out after 100 ms"}"#,
        )
        .unwrap();
        assert_eq!(
            (reply.ok, reply.error.as_deref()),
            (false, Some("request timed out after 100 ms"))
        );
    }
}
