//! Calling the server's tools, all at once: each call with arguments built from the tool's
//! `inputSchema` and a progress token, and what came back (judged by `server.tools.*`,
//! `server.progress` and `server.cancellation`).

use crate::checks::session::peer::{request, Peer};
use crate::fixtures::arguments_for;
use crate::outcome::{Failure, Finding};
use crate::stdio::Exchange;
use serde_json::{json, Value};

/// One tool called, and what came back.
#[derive(Clone, Debug)]
pub struct Call {
    /// The tool as listed.
    pub tool: Value,
    /// The exchange.
    pub exchange: Exchange,
    /// The progress token the call carried.
    pub token: String,
}

impl Call {
    pub fn name(&self) -> &str {
        self.tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    pub fn fail(&self, expected: &str, actual: String) -> Finding {
        Finding::Fail(
            Failure::new(expected, actual)
                .sent(&self.exchange.sent)
                .reply(&self.exchange),
        )
    }
}

/// The tool calls in flight, with the tools and tokens they were sent with.
pub struct CallsInFlight<P: Peer> {
    tools: Vec<Value>,
    tokens: Vec<String>,
    in_flight: P::InFlight,
}

/// Calls every tool of `tools` at once, each with arguments from its `inputSchema` and a
/// progress token; [`collect`] gathers the answers (other checks may run meanwhile).
pub async fn start_calls<P: Peer>(peer: &mut P, tools: &[Value]) -> CallsInFlight<P> {
    let mut messages = Vec::new();
    let mut tokens = Vec::new();
    for tool in tools {
        let id = peer.fresh_id();
        let token = format!("mcp-conformance-progress-{id}");
        let arguments = arguments_for(tool.get("inputSchema").unwrap_or(&json!({})), 0);
        let params = json!({"name": tool["name"], "arguments": arguments, "_meta": {"progressToken": token}});
        messages.push(request(id, "tools/call", Some(params)));
        tokens.push(token);
    }
    let in_flight = peer.start(messages).await;
    CallsInFlight {
        tools: tools.to_vec(),
        tokens,
        in_flight,
    }
}

/// The answers of calls in flight, waited for until `deadline`.
pub async fn collect<P: Peer>(
    peer: &mut P,
    calls: CallsInFlight<P>,
    deadline: std::time::Instant,
) -> Vec<Call> {
    let exchanges = peer.finish(calls.in_flight, deadline).await;
    calls
        .tools
        .into_iter()
        .zip(exchanges)
        .zip(calls.tokens)
        .map(|((tool, exchange), token)| Call {
            tool,
            exchange,
            token,
        })
        .collect()
}
