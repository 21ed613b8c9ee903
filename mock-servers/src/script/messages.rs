//! Messages the server sends of its own accord: notifications, requests, error objects.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::one;

/// A JSON-RPC error object.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RpcErrorBody {
    /// The error code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// Optional data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// A notification to send.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Notify {
    /// The method, e.g. `notifications/message`.
    pub method: String,
    /// The params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// 2026-07-28: tag the notification with the id of the named request (a
    /// `subscriptions/listen` taken by an `expect` with this `name`) as
    /// `params._meta["io.modelcontextprotocol/subscriptionId"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription: Option<String>,
}

/// A request the server sends to the client.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerRequest {
    /// The id to send it with.
    pub id: Value,
    /// The method, e.g. `ping` or `sampling/createMessage`.
    pub method: String,
    /// The params.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Send it this many times, one right after the other (a flood of server requests; 1 by
    /// default): the first with `id`, the k-th with `id` and `-k` appended (`id` must then be
    /// a string: `"f"`, `"f-2"`, `"f-3"`, …).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub times: usize,
}

impl ServerRequest {
    /// The messages to send: `times` copies, each with its own id.
    pub fn messages(&self) -> Vec<Value> {
        (1..=self.times)
            .map(|k| {
                let id = match &self.id {
                    Value::String(id) if k > 1 => Value::String(format!("{id}-{k}")),
                    id => id.clone(),
                };
                crate::responder::message(Some(&id), &self.method, self.params.as_ref())
            })
            .collect()
    }
}

fn is_one(n: &usize) -> bool {
    *n == 1
}
