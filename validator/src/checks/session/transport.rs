//! What a transport does beyond [`Rpc`] for the 2026-07-28 checks: a message sent as given
//! (no `_meta` added; over HTTP with the request headers changed as a check asks), and a
//! `subscriptions/listen` opened until its first message.

use super::peer::Basics;
use super::Rpc;
use crate::http::{standard_headers, HttpSession, Posted, Until};
use crate::stdio::{is_response_to, Exchange, Session, Unanswered};
use hyper::Method;
use serde_json::{json, Value};
use std::future::Future;

/// The `_meta` key tagging a subscription's notifications.
pub const SUBSCRIPTION_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// The notification that acknowledges a `subscriptions/listen`.
pub const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// How a check changes the request headers a client sends (over HTTP).
pub type HeaderEdit = dyn Fn(Vec<(String, String)>) -> Vec<(String, String)> + Send + Sync;

/// What a transport does beyond [`Rpc`] for this revision's own checks.
pub trait Transport: Rpc + Basics {
    /// Sends `message` as given (no `_meta` added) and waits for its answer; over HTTP with
    /// the request headers as a client sends them, changed by `headers`, and the HTTP status.
    fn raw(
        &mut self,
        message: Value,
        headers: &HeaderEdit,
    ) -> impl Future<Output = (Exchange, Option<u16>)> + Send;

    /// Opens `subscriptions/listen` (the request given) and returns the first message tagged
    /// with its id (or a response to it, or an acknowledgement), or why none came.
    fn listen(
        &mut self,
        message: Value,
    ) -> impl Future<Output = (String, Result<Value, Unanswered>)> + Send;
}

impl Transport for Session {
    async fn raw(&mut self, message: Value, _headers: &HeaderEdit) -> (Exchange, Option<u16>) {
        (self.request_raw(message).await, None)
    }

    async fn listen(&mut self, message: Value) -> (String, Result<Value, Unanswered>) {
        let sent = message.to_string();
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        self.log()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .methods
            .insert(id.to_string(), "subscriptions/listen".into());
        if let Err(why) = self.send_line(&sent).await {
            return (sent, Err(Unanswered::new(why)));
        }
        let first = self.wait_for(|m| belongs_to(m, &id)).await;
        // Ends the subscription (stdio has no stream of its own to close).
        let cancel = json!({"requestId": id, "reason": "mcp-conformance: the acknowledgement was all it wanted"});
        let _ = self.notify("notifications/cancelled", Some(cancel)).await;
        (sent, first)
    }
}

impl Transport for HttpSession {
    async fn raw(&mut self, message: Value, headers: &HeaderEdit) -> (Exchange, Option<u16>) {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        if let Some(method) = message.get("method").and_then(Value::as_str) {
            self.log()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .methods
                .insert(id.to_string(), method.to_string());
        }
        let mut standard = self.headers();
        standard.extend(standard_headers(&message));
        let sent = message.to_string();
        let posted = self
            .send(
                Method::POST,
                headers(standard),
                Some(sent.clone().into_bytes()),
                Until::Response(id.clone()),
            )
            .await;
        let reply = answer(&posted, &id);
        (
            Exchange {
                sent: posted.sent.clone(),
                unanswered_status: posted.unanswered_status(&reply),
                reply,
            },
            posted.status(),
        )
    }

    async fn listen(&mut self, message: Value) -> (String, Result<Value, Unanswered>) {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        self.log()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .methods
            .insert(id.to_string(), "subscriptions/listen".into());
        let mut headers = self.headers();
        headers.extend(standard_headers(&message));
        let body = message.to_string().into_bytes();
        // The stream is closed once the acknowledgement is read: that ends the subscription.
        let posted = self
            .send(
                Method::POST,
                headers,
                Some(body),
                Until::Notification(ACKNOWLEDGED.into()),
            )
            .await;
        let first = match &posted.reply {
            Ok(reply) => reply
                .messages
                .iter()
                .find(|m| belongs_to(m, &id))
                .cloned()
                .ok_or_else(|| {
                    Unanswered::new(format!(
                        "nothing for the subscription: {}",
                        reply.describe()
                    ))
                }),
            Err(e) => Err(Unanswered {
                why: format!("no response: {e}"),
                ran_out: e.ran_out(),
            }),
        };
        (posted.sent, first)
    }
}

/// The JSON-RPC response with `id` in a POST's answer, or why there is none.
fn answer(posted: &Posted, id: &Value) -> Result<Value, Unanswered> {
    match &posted.reply {
        Ok(reply) => reply
            .response_to(id)
            .cloned()
            .ok_or_else(|| posted.unanswered(id)),
        Err(e) => Err(Unanswered {
            why: format!("no response: {e}"),
            ran_out: e.ran_out(),
        }),
    }
}

/// Whether a message belongs to the subscription opened with `id`: tagged with it, its
/// acknowledgement (whatever it is tagged with), or the response to the request.
fn belongs_to(message: &Value, id: &Value) -> bool {
    message
        .pointer("/params/_meta")
        .and_then(|m| m.get(SUBSCRIPTION_KEY))
        == Some(id)
        || message.get("method").and_then(Value::as_str) == Some(ACKNOWLEDGED)
        || is_response_to(message, id)
}
