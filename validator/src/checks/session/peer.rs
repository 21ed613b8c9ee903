//! What the feature checks need of a session beyond [`Rpc`]: notifications, several requests
//! in flight at once (answered by id in any order), and the session's log (what the server
//! sent besides the answers: progress, log messages, its own requests).

use super::Rpc;
use crate::http::HttpSession;
use crate::log::SharedLog;
use crate::stdio::{is_response, is_response_to, Exchange, Session, Unanswered};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, Instant};

/// What every session has, stdio or HTTP, whatever the checks run on it: its log, fresh
/// request ids, notifications.
pub trait Basics {
    /// The session's log.
    fn shared_log(&self) -> SharedLog;
    /// A request id not used before in this session.
    fn fresh_id(&mut self) -> i64;
    /// Sends a notification (a failure to send shows as the next request's).
    fn tell(&mut self, method: &str, params: Option<Value>) -> impl Future<Output = ()> + Send;
}

impl Basics for Session {
    fn shared_log(&self) -> SharedLog {
        self.log()
    }

    fn fresh_id(&mut self) -> i64 {
        self.next_id()
    }

    async fn tell(&mut self, method: &str, params: Option<Value>) {
        let _ = self.notify(method, params).await;
    }
}

impl Basics for HttpSession {
    fn shared_log(&self) -> SharedLog {
        self.log()
    }

    fn fresh_id(&mut self) -> i64 {
        self.next_id()
    }

    async fn tell(&mut self, method: &str, params: Option<Value>) {
        let _ = self.notify(method, params).await;
    }
}

/// A session the feature checks run on (stdio or HTTP).
pub trait Peer: Rpc + Basics {
    /// Requests sent and not yet collected.
    type InFlight: Send;
    /// Sends every request (full messages, ids set) at once, without waiting; other
    /// requests may go out and be answered before [`Peer::finish`] collects these.
    fn start(&mut self, requests: Vec<Value>) -> impl Future<Output = Self::InFlight> + Send;
    /// Collects the answers of `in_flight`, waiting until `deadline` for those not in yet;
    /// an answer that did not come is an `Err` exchange. The session is not marked stalled
    /// by a slow answer.
    fn finish(
        &mut self,
        in_flight: Self::InFlight,
        deadline: Instant,
    ) -> impl Future<Output = Vec<Exchange>> + Send;
    /// [`Peer::start`], then [`Peer::finish`] within `patience`.
    fn all_at_once(
        &mut self,
        requests: Vec<Value>,
        patience: Duration,
    ) -> impl Future<Output = Vec<Exchange>> + Send
    where
        Self: Send,
    {
        async move {
            let deadline = Instant::now() + patience;
            let in_flight = self.start(requests).await;
            self.finish(in_flight, deadline).await
        }
    }
    /// Whether the session is over stdio.
    fn is_stdio(&self) -> bool;
}

/// Stdio requests in flight: where the log stood, and each line sent with its id.
pub struct StdioInFlight {
    mark: usize,
    sent: Vec<(String, Value, Result<(), String>)>,
}

/// HTTP requests in flight: one POST each on a fork of the session.
pub struct HttpInFlight {
    tasks: tokio::task::JoinSet<(usize, Exchange)>,
    sent: Vec<String>,
}

/// A request message with `id`.
pub fn request(id: i64, method: &str, params: Option<Value>) -> Value {
    let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(params) = params {
        message["params"] = params;
    }
    message
}

/// How many messages the session's log holds now (a mark to read what came after it).
pub fn mark(peer: &impl Peer) -> usize {
    peer.shared_log()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .seen
        .len()
}

/// The messages the log kept since `mark`.
pub fn since(peer: &impl Peer, mark: usize) -> Vec<Value> {
    let log = peer.shared_log();
    let log = log.lock().unwrap_or_else(|e| e.into_inner());
    log.seen
        .get(mark..)
        .map(<[Value]>::to_vec)
        .unwrap_or_default()
}

/// The responses since `mark` to none of the requests `asked` nor any the session sent (a
/// wrong id), said after an unanswered request's wait: then more than time ran out.
fn stray_responses(session: &Session, mark: usize, asked: &[Value]) -> String {
    let log = session.log();
    // An id the session ever used is a late answer, not a wrong id.
    let used = |id: &Value| {
        log.lock()
            .unwrap_or_else(|e| e.into_inner())
            .methods
            .contains_key(&id.to_string())
    };
    let stray: Vec<String> = since(session, mark)
        .iter()
        .filter(|m| is_response(m))
        .filter_map(|m| m.get("id"))
        .filter(|id| !asked.contains(id) && !used(id))
        .map(Value::to_string)
        .collect();
    if stray.is_empty() {
        return String::new();
    }
    format!(
        "; other message(s) came: response(s) with id {}, to no request in flight",
        stray.join(", ")
    )
}

impl Peer for Session {
    type InFlight = StdioInFlight;

    async fn start(&mut self, requests: Vec<Value>) -> StdioInFlight {
        let mark = mark(self);
        let mut sent = Vec::new();
        for message in requests {
            let line = message.to_string();
            let id = message.get("id").cloned().unwrap_or(Value::Null);
            if let Some(method) = message.get("method").and_then(Value::as_str) {
                self.log()
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .methods
                    .insert(id.to_string(), method.to_string());
            }
            let written = self.send_line(&line).await;
            sent.push((line, id, written));
        }
        StdioInFlight { mark, sent }
    }

    async fn finish(&mut self, in_flight: StdioInFlight, deadline: Instant) -> Vec<Exchange> {
        // Answers that came while other requests were awaited are in the log already.
        let seen = since(self, in_flight.mark);
        let in_flight_mark = in_flight.mark;
        let asked: Vec<Value> = in_flight.sent.iter().map(|(_, id, _)| id.clone()).collect();
        let mut out = Vec::new();
        let mut pending: HashMap<String, usize> = HashMap::new();
        for (index, (sent, id, written)) in in_flight.sent.into_iter().enumerate() {
            let answered = seen.iter().find(|m| is_response_to(m, &id)).cloned();
            let reply = match (written, answered) {
                (Err(why), _) => Err(Unanswered::new(why)),
                (Ok(()), Some(answer)) => Ok(answer),
                (Ok(()), None) => {
                    pending.insert(id.to_string(), index);
                    Err(Unanswered::new("not answered"))
                }
            };
            out.push(Exchange {
                sent,
                reply,
                unanswered_status: None,
            });
        }
        let in_flight = pending.len();
        while !pending.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let ids: Vec<String> = pending.keys().cloned().collect();
            let wanted = move |m: &Value| {
                is_response(m) && m.get("id").is_some_and(|id| ids.contains(&id.to_string()))
            };
            match self.wait_within(left, wanted).await {
                Ok(message) => {
                    let key = message.get("id").map(Value::to_string).unwrap_or_default();
                    if let Some(index) = pending.remove(&key) {
                        out[index].reply = Ok(message);
                    }
                }
                Err(why) => {
                    let stray = stray_responses(self, in_flight_mark, &asked);
                    let why = if stray.is_empty() {
                        why
                    } else {
                        Unanswered::new(format!("{why}{stray}"))
                    };
                    for index in pending.values() {
                        out[*index].reply = Err(why.clone());
                    }
                    return out;
                }
            }
        }
        let stray = stray_responses(self, in_flight_mark, &asked);
        let figure = format!("no answer in time ({in_flight} request(s) were still in flight)");
        let why = if stray.is_empty() {
            Unanswered::ran_out(figure)
        } else {
            Unanswered::new(format!("{figure}{stray}"))
        };
        for index in pending.values() {
            out[*index].reply = Err(why.clone());
        }
        out
    }

    fn is_stdio(&self) -> bool {
        true
    }
}

impl Peer for HttpSession {
    type InFlight = HttpInFlight;

    fn start(&mut self, requests: Vec<Value>) -> impl Future<Output = HttpInFlight> + Send {
        let forks: Vec<(HttpSession, Value)> =
            requests.into_iter().map(|m| (self.fork(), m)).collect();
        async move {
            let mut tasks = tokio::task::JoinSet::new();
            let mut sent = Vec::new();
            for (index, (mut fork, message)) in forks.into_iter().enumerate() {
                sent.push(message.to_string());
                tasks.spawn(async move { (index, fork.call(message).await.0) });
            }
            HttpInFlight { tasks, sent }
        }
    }

    async fn finish(&mut self, in_flight: HttpInFlight, deadline: Instant) -> Vec<Exchange> {
        let HttpInFlight { mut tasks, sent } = in_flight;
        let mut out: Vec<Exchange> = sent
            .into_iter()
            .map(|sent| Exchange {
                sent,
                reply: Err(Unanswered::ran_out("no answer in time")),
                unanswered_status: None,
            })
            .collect();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, tasks.join_next()).await {
                Ok(Some(Ok((index, exchange)))) => out[index] = exchange,
                Ok(Some(Err(_))) => {}
                Ok(None) | Err(_) => break,
            }
        }
        // Requests still running are dropped: their connections close.
        tasks.abort_all();
        out
    }

    fn is_stdio(&self) -> bool {
        false
    }
}
