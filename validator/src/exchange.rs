//! One request and what came back, over stdio or Streamable HTTP.

use serde_json::Value;

/// One request and what came back.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The line sent.
    pub sent: String,
    /// The response message, or why none came within the bound.
    pub reply: Result<Value, String>,
    /// Over HTTP, the status of a whole response that carried no JSON-RPC answer to the
    /// request (a `400` with an error of id `null`, say): the server was heard all the same.
    /// `None` over stdio, and for no response, a timed-out one or one cut at the size bound.
    pub unanswered_status: Option<u16>,
}

impl Exchange {
    /// The `result` of a successful response.
    pub fn result(&self) -> Option<&Value> {
        self.reply.as_ref().ok().and_then(|m| m.get("result"))
    }

    /// The `error.code` of an error response.
    pub fn error_code(&self) -> Option<i64> {
        self.reply
            .as_ref()
            .ok()
            .and_then(|m| m.get("error"))
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
    }

    /// Whether the server answered the request at all: a JSON-RPC response, or over HTTP a
    /// whole response without one.
    pub fn heard(&self) -> bool {
        self.reply.is_ok() || self.unanswered_status.is_some()
    }

    /// What came back, as text for a report: the message, or why nothing did.
    pub fn received(&self) -> String {
        match &self.reply {
            Ok(message) => message.to_string(),
            Err(why) => format!("no response: {why}"),
        }
    }
}
