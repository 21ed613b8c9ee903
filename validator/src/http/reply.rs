//! A response as read, and why none came.

use crate::exchange::{Heard, Unanswered};
use crate::outcome::excerpt;
use crate::stdio::is_response_to;
use serde_json::Value;
use std::time::Duration;

/// The most of a response body the validator reads; the rest is left unread.
pub const MAX_BODY: usize = 8 << 20;
/// How much of a body a report quotes from (before its excerpt is cut).
const QUOTED_BODY: usize = 16 << 10;
/// The most messages kept from one response (the awaited answer is kept besides).
pub(super) const KEPT_MESSAGES: usize = 1000;

/// Why a request got no HTTP answer. Lowercase, one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// No connection (refused, unresolvable, TLS refused).
    #[error("cannot connect to {address}: {reason}")]
    Connect {
        /// `host:port`.
        address: String,
        /// Why.
        reason: String,
    },
    /// Connected, but no response head within the bound.
    #[error("nothing within {0:?}")]
    NoAnswer(Duration),
    /// The connection broke before a response head.
    #[error("the connection broke: {0}")]
    Broken(String),
    /// Not sent: an earlier request to the same server ran out of time (its head or its body
    /// never came) or read the byte limit without its end, and every later one would wait a
    /// whole `--timeout` or read 8 MiB again.
    #[error("not sent: an earlier request got no answer within the bounds ({0})")]
    Stalled(String),
}

impl WireError {
    /// Whether the server cannot be reached at all (then the target is unreachable).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, WireError::Connect { .. } | WireError::NoAnswer(_))
    }

    /// The figure, when all this error shows is that time ran out: no response head within the
    /// bound, or not sent because an earlier request got no answer within the bounds.
    pub fn ran_out(&self) -> Option<String> {
        self.is_stall().then(|| self.to_string())
    }

    /// Whether the server stopped answering in time (now or on an earlier request): a session
    /// asks it nothing more.
    pub fn is_stall(&self) -> bool {
        matches!(self, WireError::NoAnswer(_) | WireError::Stalled(_))
    }
}

/// How much of a response to read.
#[derive(Clone, Debug)]
pub enum Until {
    /// The whole body (bounded).
    End,
    /// Up to the JSON-RPC response with this id (an SSE stream may stay open after it).
    Response(Value),
    /// The status line and headers only; the connection is closed after them.
    Head,
    /// Up to the first notification with this method (a `subscriptions/listen` stream's
    /// acknowledgement); the stream is then closed.
    Notification(String),
    /// A resumed stream (a GET with `Last-Event-ID`): up to the first JSON-RPC response with
    /// one of these ids, the end of the body, or the bound. A stream that replays nothing may
    /// stay open by design: running out of time on it never stalls the server.
    Replay(Vec<Value>),
}

/// A response as read.
#[derive(Clone, Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercased, values as lossy UTF-8.
    pub headers: Vec<(String, String)>,
    /// The body bytes read.
    pub body: Vec<u8>,
    /// The JSON-RPC messages found: the JSON body (an array's elements), or each SSE frame's data.
    pub messages: Vec<Value>,
    /// SSE `data` that is not JSON.
    pub bad_frames: Vec<String>,
    /// Why reading stopped before the body ended, if it did.
    pub cut: Option<String>,
    /// Messages (and bad frames) not kept: over [`KEPT_MESSAGES`].
    pub dropped: usize,
    /// Whether the bound ran out before the body ended.
    pub timed_out: bool,
    /// Whether reading stopped at [`MAX_BODY`] before the body ended.
    pub over_limit: bool,
    /// Whether the whole JSON body was read and refused (not JSON, or over the value
    /// limit): nothing in it could be read, which says nothing of what the server speaks.
    pub refused: bool,
}

impl Reply {
    /// The figure (`no end of the body within 3s`), when reading stopped only because time
    /// ran out: the body did not end in time and no event in it was refused.
    pub fn ran_out(&self) -> Option<String> {
        if self.timed_out && self.bad_frames.is_empty() {
            self.cut.clone()
        } else {
            None
        }
    }

    /// Keeps a message while under [`KEPT_MESSAGES`]; the response awaited is always kept.
    pub(super) fn keep(&mut self, message: Value, until: &Until) {
        let awaited = match until {
            Until::Response(id) => is_response_to(&message, id),
            Until::Replay(ids) => ids.iter().any(|id| is_response_to(&message, id)),
            _ => false,
        };
        if awaited || self.messages.len() < KEPT_MESSAGES {
            self.messages.push(message);
        } else {
            self.dropped += 1;
        }
    }

    /// A header's value (name without regard to case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The media type, lowercased, without parameters.
    pub fn media_type(&self) -> String {
        self.header("content-type")
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    /// Whether the body is an SSE stream (read event by event; it may stay open after the
    /// answer).
    pub fn is_sse(&self) -> bool {
        self.media_type() == "text/event-stream"
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The JSON-RPC response with `id`.
    pub fn response_to(&self, id: &Value) -> Option<&Value> {
        self.messages.iter().find(|m| is_response_to(m, id))
    }

    /// The answer for a report: status, media type, body (cut), and why reading stopped.
    pub fn describe(&self) -> String {
        let reason = hyper::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let mut text = format!("{} {reason}", self.status).trim_end().to_string();
        let media = self.media_type();
        if !media.is_empty() {
            text.push_str(&format!(" ({media})"));
        }
        // The cut and refusals go first, so a later cut of this text cannot drop them.
        if let Some(cut) = &self.cut {
            text.push_str(&format!(" [{cut}]"));
        }
        if let Some(first) = self.bad_frames.first() {
            let why = first
                .rsplit_once(" (")
                .map_or("", |(_, why)| why.trim_end_matches(')'));
            text.push_str(&format!(
                " [{} SSE event(s) refused, the first: {why}]",
                self.bad_frames.len()
            ));
        }
        let head = &self.body[..self.body.len().min(QUOTED_BODY)];
        let body = String::from_utf8_lossy(head);
        let body = body.trim();
        if body.is_empty() {
            text.push_str(", empty body");
        } else {
            text.push_str(": ");
            text.push_str(&excerpt(body));
            if head.len() < self.body.len() {
                text.push_str(&format!(" ({} bytes read)", self.body.len()));
            }
        }
        text
    }
}

/// A request sent and what came of it.
#[derive(Clone, Debug)]
pub struct Posted {
    /// The request for a report: method, path, the headers the validator set (never the
    /// `--header` ones, which may hold credentials) and the body.
    pub sent: String,
    /// The response, or why there was none.
    pub reply: Result<Reply, WireError>,
}

impl Posted {
    /// The status, when a response came.
    pub fn status(&self) -> Option<u16> {
        self.reply.as_ref().ok().map(|r| r.status)
    }

    /// The status of a whole response that did not carry the JSON-RPC answer (`answer` is
    /// what was read of it): the server was heard, it did not answer in JSON-RPC. `None` for
    /// an answer, no response, a response that timed out or was cut at the size bound, and
    /// a JSON body the reader refused (it may hold the answer: nothing of it was read).
    pub fn unanswered_status(&self, answer: &Result<Value, Unanswered>) -> Option<u16> {
        match &self.reply {
            Ok(reply)
                if answer.is_err() && !reply.timed_out && !reply.over_limit && !reply.refused =>
            {
                Some(reply.status)
            }
            _ => None,
        }
    }

    /// What came back, for a report.
    pub fn received(&self) -> String {
        match &self.reply {
            Ok(reply) => reply.describe(),
            Err(e) => format!("no response: {e}"),
        }
    }

    /// The figure, when no response came only because time ran out: a response that came,
    /// even cut short, is quoted as such.
    pub fn ran_out(&self) -> Option<String> {
        self.reply.as_ref().err().and_then(WireError::ran_out)
    }

    /// Why no JSON-RPC response with `id` is in this answer: a body that did not end in time
    /// (and carried no refused event) only ran out of time, as does no response at all for
    /// lack of time.
    pub fn unanswered(&self, id: &Value) -> Unanswered {
        match &self.reply {
            Ok(reply) => {
                let why = format!("no JSON-RPC response with id {id}: {}", reply.describe());
                match reply.ran_out() {
                    Some(figure) => Unanswered {
                        why,
                        ran_out: Some(figure),
                    },
                    None => Unanswered::new(why),
                }
            }
            Err(e) => Unanswered {
                why: e.to_string(),
                ran_out: e.ran_out(),
            },
        }
    }
}

impl Heard for Posted {
    fn received(&self) -> String {
        Posted::received(self)
    }

    fn ran_out(&self) -> Option<String> {
        Posted::ran_out(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_describes_itself_with_status_type_and_body() {
        let reply = Reply {
            status: 406,
            headers: vec![(
                "content-type".into(),
                "application/json; charset=utf-8".into(),
            )],
            body: b"{\"error\":1}".to_vec(),
            messages: vec![],
            bad_frames: vec![],
            cut: None,
            dropped: 0,
            timed_out: false,
            over_limit: false,
            refused: false,
        };
        assert_eq!(
            reply.describe(),
            "406 Not Acceptable (application/json): {\"error\":1}"
        );
    }
    /// A whole response without the answer was heard; a body the reader refused was not
    /// (it may hold the answer), so it never says what revision the server speaks.
    #[test]
    fn a_refused_body_is_not_a_response_without_an_answer() {
        let posted = |refused| Posted {
            sent: String::new(),
            reply: Ok(Reply {
                status: 200,
                headers: vec![("content-type".into(), "application/json".into())],
                body: b"{\"ttlMs\":1e400}".to_vec(),
                messages: vec![],
                bad_frames: vec![],
                cut: None,
                dropped: 0,
                timed_out: false,
                over_limit: false,
                refused,
            }),
        };
        let none = Err(Unanswered::new("no JSON-RPC response with id 1"));
        assert_eq!(posted(false).unanswered_status(&none), Some(200));
        assert_eq!(posted(true).unanswered_status(&none), None);
    }
}
