//! What the feature checks need of a session beyond [`Rpc`]: notifications, several requests
//! in flight at once (answered by id in any order), and the session's log (what the server
//! sent besides the answers: progress, log messages, its own requests).

use super::Rpc;
use crate::validate::http::HttpSession;
use crate::validate::log::SharedLog;
use crate::validate::stdio::{is_response, Exchange, Session};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, Instant};

/// A session the feature checks run on (stdio or HTTP).
pub trait Peer: Rpc {
    /// The session's log.
    fn shared_log(&self) -> SharedLog;
    /// A request id not used before in this session.
    fn fresh_id(&mut self) -> i64;
    /// Sends a notification.
    fn tell(&mut self, method: &str, params: Option<Value>) -> impl Future<Output = ()> + Send;
    /// Sends every request (full messages, ids set) at once and waits up to `patience` for
    /// all the answers; an answer that did not come is an `Err` exchange. The session is not
    /// marked stalled by a slow answer.
    fn all_at_once(&mut self, requests: Vec<Value>, patience: Duration) -> impl Future<Output = Vec<Exchange>> + Send;
    /// Whether the session is over stdio.
    fn is_stdio(&self) -> bool;
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
    peer.shared_log().lock().unwrap_or_else(|e| e.into_inner()).seen.len()
}

/// The messages the log kept since `mark`.
pub fn since(peer: &impl Peer, mark: usize) -> Vec<Value> {
    let log = peer.shared_log();
    let log = log.lock().unwrap_or_else(|e| e.into_inner());
    log.seen.get(mark..).map(<[Value]>::to_vec).unwrap_or_default()
}

impl Peer for Session {
    fn shared_log(&self) -> SharedLog {
        self.log()
    }

    fn fresh_id(&mut self) -> i64 {
        self.next_id()
    }

    fn tell(&mut self, method: &str, params: Option<Value>) -> impl Future<Output = ()> + Send {
        async move {
            let _ = self.notify(method, params).await;
        }
    }

    fn all_at_once(&mut self, requests: Vec<Value>, patience: Duration) -> impl Future<Output = Vec<Exchange>> + Send {
        async move {
            let mut pending: HashMap<String, usize> = HashMap::new();
            let mut out: Vec<Exchange> = Vec::new();
            for (index, message) in requests.into_iter().enumerate() {
                let sent = message.to_string();
                let id = message.get("id").cloned().unwrap_or(Value::Null);
                if let Some(method) = message.get("method").and_then(Value::as_str) {
                    self.log().lock().unwrap_or_else(|e| e.into_inner()).methods.insert(id.to_string(), method.to_string());
                }
                let reply = match self.send_line(&sent).await {
                    Ok(()) => {
                        pending.insert(id.to_string(), index);
                        Err("not answered".to_string())
                    }
                    Err(why) => Err(why),
                };
                out.push(Exchange { sent, reply });
            }
            let in_flight = pending.len();
            let deadline = Instant::now() + patience;
            while !pending.is_empty() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                let ids: Vec<String> = pending.keys().cloned().collect();
                let wanted = move |m: &Value| is_response(m) && m.get("id").is_some_and(|id| ids.contains(&id.to_string()));
                match self.wait_within(left, wanted).await {
                    Ok(message) => {
                        let key = message.get("id").map(Value::to_string).unwrap_or_default();
                        if let Some(index) = pending.remove(&key) {
                            out[index].reply = Ok(message);
                        }
                    }
                    Err(why) => {
                        for index in pending.values() {
                            out[*index].reply = Err(why.clone());
                        }
                        return out;
                    }
                }
            }
            for index in pending.values() {
                out[*index].reply = Err(format!("no answer within {patience:?} ({in_flight} request(s) in flight)"));
            }
            out
        }
    }

    fn is_stdio(&self) -> bool {
        true
    }
}

impl Peer for HttpSession {
    fn shared_log(&self) -> SharedLog {
        self.log()
    }

    fn fresh_id(&mut self) -> i64 {
        self.next_id()
    }

    fn tell(&mut self, method: &str, params: Option<Value>) -> impl Future<Output = ()> + Send {
        async move {
            let _ = self.notify(method, params).await;
        }
    }

    fn all_at_once(&mut self, requests: Vec<Value>, patience: Duration) -> impl Future<Output = Vec<Exchange>> + Send {
        let forks: Vec<(HttpSession, Value)> = requests.into_iter().map(|m| (self.fork(), m)).collect();
        async move {
            let mut tasks = tokio::task::JoinSet::new();
            for (index, (mut fork, message)) in forks.into_iter().enumerate() {
                tasks.spawn(async move {
                    let sent = message.to_string();
                    match tokio::time::timeout(patience, fork.call(message)).await {
                        Ok((exchange, _)) => (index, exchange),
                        Err(_) => (index, Exchange { sent, reply: Err(format!("no answer within {patience:?}")) }),
                    }
                });
            }
            let mut out: Vec<(usize, Exchange)> = Vec::new();
            while let Some(joined) = tasks.join_next().await {
                if let Ok(done) = joined {
                    out.push(done);
                }
            }
            out.sort_by_key(|(index, _)| *index);
            out.into_iter().map(|(_, exchange)| exchange).collect()
        }
    }

    fn is_stdio(&self) -> bool {
        false
    }
}
