//! One request and what came back, over stdio or Streamable HTTP.

use serde_json::Value;
use std::fmt;

/// Why no answer came: the words a report gives, and, set where the wait ended, whether all
/// it shows is that time ran out (nothing else came: no other message, no refused line, no
/// exit). A check that fails on such a wait alone is inconclusive, not failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unanswered {
    /// What happened, for a report (`nothing within 10s; 2 other message(s) came`).
    pub why: String,
    /// The figure (`nothing within 10s`), when the wait only ran out of time.
    pub ran_out: Option<String>,
}

impl Unanswered {
    /// No answer, for a reason other than time running out.
    pub fn new(why: impl Into<String>) -> Unanswered {
        Unanswered {
            why: why.into(),
            ran_out: None,
        }
    }

    /// A wait that only ran out of time: `figure` is all it shows (and its words).
    pub fn ran_out(figure: impl Into<String>) -> Unanswered {
        let figure = figure.into();
        Unanswered {
            why: figure.clone(),
            ran_out: Some(figure),
        }
    }

    /// Whether all the wait shows is that time ran out.
    pub fn only_time(&self) -> bool {
        self.ran_out.is_some()
    }
}

impl fmt::Display for Unanswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.why)
    }
}

impl From<String> for Unanswered {
    fn from(why: String) -> Unanswered {
        Unanswered::new(why)
    }
}

/// What came back for a request, as a failure quotes it: the text, and the figure when all
/// it shows is that time ran out.
pub trait Heard {
    /// What came back, as text for a report.
    fn received(&self) -> String;
    /// The figure, when no answer came and the wait only ran out of time.
    fn ran_out(&self) -> Option<String>;
}

impl<T: Heard> Heard for &T {
    fn received(&self) -> String {
        T::received(self)
    }

    fn ran_out(&self) -> Option<String> {
        T::ran_out(self)
    }
}

/// One request and what came back.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The line sent.
    pub sent: String,
    /// The response message, or why none came within the bound.
    pub reply: Result<Value, Unanswered>,
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

    /// The figure, when no answer came and the wait only ran out of time.
    pub fn ran_out(&self) -> Option<String> {
        self.reply
            .as_ref()
            .err()
            .and_then(|why| why.ran_out.clone())
    }
}

impl Heard for Exchange {
    fn received(&self) -> String {
        Exchange::received(self)
    }

    fn ran_out(&self) -> Option<String> {
        Exchange::ran_out(self)
    }
}
