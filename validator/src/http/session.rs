//! One Streamable HTTP session: its `Mcp-Session-Id`, negotiated revision and log, and
//! JSON-RPC spoken over it.

use super::headers::standard_headers;
use super::reply::{Posted, Until};
use super::wire::Wire;
use crate::log::{SessionLog, SharedLog};
use crate::stdio::{Exchange, Unanswered};
use hyper::Method;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The most server requests answered from one response.
const MAX_ANSWERS: usize = 64;

/// The first revision whose clients send `MCP-Protocol-Version` on every request.
pub const PROTOCOL_VERSION_HEADER_SINCE: &str = "2025-06-18";

/// How a handshake went: the `initialize` exchange and the `notifications/initialized` POST.
#[derive(Clone, Debug)]
pub struct Handshake {
    /// `initialize` and its answer.
    pub init: Exchange,
    /// The `initialize` POST as HTTP.
    pub init_posted: Posted,
    /// The `notifications/initialized` POST, when `initialize` succeeded.
    pub initialized: Option<Posted>,
}

/// One Streamable HTTP session: its id, its negotiated revision and its log.
pub struct HttpSession {
    wire: Arc<Wire>,
    log: SharedLog,
    /// The `Mcp-Session-Id` the server issued (lossy UTF-8).
    pub session_id: Option<String>,
    /// The revision the server answered in `initialize`.
    pub revision: Option<String>,
    /// Why the session stopped answering, once a request got no answer within the bound.
    pub stalled: Option<Unanswered>,
    /// The client capabilities the handshake declares (none unless set before it); the
    /// server's requests for them get canned answers ([`crate::declared`]).
    pub declared: Value,
    /// The patience of the handshake, once the probe's first answer set it
    /// ([`crate::patience`]): its `initialize` POST waits that long instead of `--timeout`.
    pub patience: Option<Arc<std::sync::OnceLock<Duration>>>,
    /// The bound of the requests now sent, when not `--timeout`.
    bound: Option<Duration>,
    next_id: i64,
    ended: bool,
}

impl HttpSession {
    /// A session not yet initialized, logged under `label`.
    pub fn new(wire: Arc<Wire>, label: &str) -> HttpSession {
        HttpSession {
            wire,
            log: Arc::new(Mutex::new(SessionLog::new(label))),
            session_id: None,
            revision: None,
            stalled: None,
            declared: json!({}),
            patience: None,
            bound: None,
            next_id: 0,
            ended: false,
        }
    }

    /// The session's log.
    pub fn log(&self) -> SharedLog {
        self.log.clone()
    }

    /// The next request id.
    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Another handle on this session (same id, revision and log) for a request sent
    /// while others are in flight; it never ends the session itself.
    pub fn fork(&self) -> HttpSession {
        HttpSession {
            wire: self.wire.clone(),
            log: self.log.clone(),
            session_id: self.session_id.clone(),
            revision: self.revision.clone(),
            stalled: None,
            declared: self.declared.clone(),
            patience: self.patience.clone(),
            bound: None,
            next_id: 0,
            ended: true,
        }
    }

    /// The headers every POST of this session carries: both Accept types, the content type,
    /// the session id and (from 2025-06-18) `MCP-Protocol-Version`.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut headers = vec![
            (
                "Accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        if let Some(id) = &self.session_id {
            headers.push(("Mcp-Session-Id".into(), id.clone()));
        }
        if let Some(revision) = self
            .revision
            .as_deref()
            .filter(|r| *r >= PROTOCOL_VERSION_HEADER_SINCE)
        {
            headers.push(("MCP-Protocol-Version".into(), revision.to_string()));
        }
        headers
    }

    /// Sends a request with `headers` (the session's, as changed by the caller), logs what
    /// comes back and answers server requests on the way.
    pub async fn send(
        &mut self,
        method: Method,
        headers: Vec<(String, String)>,
        body: Option<Vec<u8>>,
        until: Until,
    ) -> Posted {
        let sent = describe_request(&method, &self.wire.target(), &headers, body.as_deref());
        let answers = Arc::new(Mutex::new(Vec::new()));
        let collected = answers.clone();
        let on_message = move |message: &Value| {
            let mut collected = collected.lock().unwrap_or_else(|e| e.into_inner());
            // A flood of server requests gets the first few answered.
            if message.get("method").is_some()
                && message.get("id").is_some()
                && collected.len() < MAX_ANSWERS
            {
                collected.push(message.clone());
            }
        };
        let bound = self.bound.unwrap_or_else(|| self.wire.timeout());
        let reply = self
            .wire
            .send_within(bound, method, &headers, body, &until, on_message)
            .await;
        if let Ok(reply) = &reply {
            let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
            for message in &reply.messages {
                if reply.is_success() || message.get("jsonrpc").is_some() {
                    log.message(&message.to_string(), message);
                }
            }
            for frame in &reply.bad_frames {
                log.refused(frame, "an SSE event whose data is not JSON");
            }
        }
        let requests = std::mem::take(&mut *answers.lock().unwrap_or_else(|e| e.into_inner()));
        for request in requests {
            self.answer_server_request(&request).await;
        }
        Posted { sent, reply }
    }

    /// POSTs a JSON-RPC request with the session's headers and waits for its answer.
    pub async fn call(&mut self, message: Value) -> (Exchange, Posted) {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        if let Some(method) = message.get("method").and_then(Value::as_str) {
            self.lock_log()
                .methods
                .insert(id.to_string(), method.to_string());
        }
        let text = message.to_string();
        let mut headers = self.headers();
        if self.revision.as_deref() >= Some(crate::schema::STATELESS) {
            headers.extend(standard_headers(&message));
        }
        let posted = self
            .send(
                Method::POST,
                headers,
                Some(text.clone().into_bytes()),
                Until::Response(id.clone()),
            )
            .await;
        let reply = match &posted.reply {
            // A body that did not end within the bound is no answer, whatever it held.
            Ok(reply) if reply.timed_out && !reply.is_sse() => {
                let why = posted.unanswered(&id);
                self.stalled = Some(why.clone());
                Err(why)
            }
            Ok(reply) => match reply.response_to(&id) {
                Some(response) => Ok(response.clone()),
                None => {
                    let why = posted.unanswered(&id);
                    // A server that streams the byte limit without the answer is flooding:
                    // asking it again would only cost another 8 MiB of reading.
                    if reply.timed_out || reply.over_limit {
                        self.stalled = Some(why.clone());
                    }
                    Err(why)
                }
            },
            Err(e) => {
                let why = posted.unanswered(&id);
                if e.is_unreachable() || e.is_stall() {
                    self.stalled = Some(why.clone());
                }
                Err(why)
            }
        };
        let unanswered_status = posted.unanswered_status(&reply);
        (
            Exchange {
                sent: text,
                reply,
                unanswered_status,
            },
            posted,
        )
    }

    /// A request with the next id.
    pub async fn request(&mut self, method: &str, params: Option<Value>) -> Exchange {
        self.request_posted(method, params).await.0
    }

    /// [`HttpSession::request`] bounded by the patience ([`crate::patience`]) once it is set,
    /// instead of `--timeout`: a server's first answer may come late on a busy machine.
    pub async fn request_patient(&mut self, method: &str, params: Option<Value>) -> Exchange {
        self.bound = self.patience.as_ref().and_then(|p| p.get().copied());
        let exchange = self.request(method, params).await;
        self.bound = None;
        exchange
    }

    /// A request with the next id, with the HTTP exchange.
    pub async fn request_posted(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> (Exchange, Posted) {
        let id = self.next_id();
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.call(message).await
    }

    /// POSTs a notification with the session's headers; reads the whole (normally empty) body.
    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> Posted {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(
            Method::POST,
            self.headers(),
            Some(message.to_string().into_bytes()),
            Until::End,
        )
        .await
    }

    /// `initialize` offering `revision` (the session id and revision are taken from the
    /// answer), then `notifications/initialized`.
    pub async fn handshake(&mut self, revision: &str) -> Handshake {
        let id = self.next_id();
        let message = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "initialize",
            "params": {
                "protocolVersion": revision,
                "capabilities": self.declared,
                "clientInfo": {"name": "mcp-conformance-validate", "version": env!("CARGO_PKG_VERSION")},
            },
        });
        // A server slow to answer its first `initialize` gets as long on every later one.
        self.bound = self.patience.as_ref().and_then(|p| p.get().copied());
        let (init, init_posted) = self.call(message).await;
        self.bound = None;
        if let Ok(reply) = &init_posted.reply {
            self.session_id = reply.header("mcp-session-id").map(str::to_string);
        }
        let mut initialized = None;
        if let Some(version) = init
            .result()
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
        {
            self.revision = Some(version.to_string());
            self.lock_log().revision = Some(version.to_string());
            initialized = Some(self.notify("notifications/initialized", None).await);
        }
        Handshake {
            init,
            init_posted,
            initialized,
        }
    }

    /// Ends the session with a DELETE (best effort, bounded, not logged), unless it was
    /// ended already or has no id.
    pub async fn close(mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        if self.session_id.is_none() {
            return;
        }
        let mut headers = self.headers();
        headers.retain(|(n, _)| n != "Content-Type");
        let wire = self.wire.clone();
        let bound = wire.timeout().min(Duration::from_secs(2));
        let _ = tokio::time::timeout(
            bound,
            wire.send(Method::DELETE, &headers, None, &Until::End, |_| {}),
        )
        .await;
    }

    /// Marks the session as ended (a check sent its DELETE itself).
    pub fn mark_ended(&mut self) {
        self.ended = true;
    }

    /// Answers a server request that came on a response: `ping` with `{}`, those for declared
    /// client capabilities with canned answers, others -32601.
    async fn answer_server_request(&mut self, message: &Value) {
        if message.get("id").is_none() || message.get("method").and_then(Value::as_str).is_none() {
            return;
        }
        let reply = crate::declared::answer(message, &self.declared);
        let headers = self.headers();
        let _ = self
            .wire
            .send(
                Method::POST,
                &headers,
                Some(reply.to_string().into_bytes()),
                &Until::End,
                |_| {},
            )
            .await;
    }

    fn lock_log(&self) -> std::sync::MutexGuard<'_, SessionLog> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `POST /mcp [Accept: …; Mcp-Session-Id: …] body` for a report.
fn describe_request(
    method: &Method,
    target: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
) -> String {
    let shown: Vec<String> = headers.iter().map(|(n, v)| format!("{n}: {v}")).collect();
    let mut text = format!("{method} {target}");
    if !shown.is_empty() {
        text.push_str(&format!(" [{}]", shown.join("; ")));
    }
    if let Some(body) = body {
        text.push(' ');
        text.push_str(&String::from_utf8_lossy(body));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::super::reply::MAX_BODY;
    use super::*;
    use std::time::Duration;

    /// A stream that sends the byte limit without the answer stalls the session like silence
    /// does: the next check is not asked, instead of costing another 8 MiB (with a fast reader
    /// a flooding server once chained a dozen such reads, past the run's bound).
    #[tokio::test]
    async fn a_stream_cut_at_the_byte_limit_stalls_the_session() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request).await;
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
            let event =
                "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n".repeat(4096);
            let mut sent = socket.write_all(head.as_bytes()).await;
            while sent.is_ok() {
                sent = socket.write_all(event.as_bytes()).await;
            }
        });
        let wire = Wire::new(
            &format!("http://127.0.0.1:{port}/mcp"),
            &[],
            None,
            Duration::from_secs(60),
        )
        .unwrap();
        let mut session = HttpSession::new(Arc::new(wire), "flood");
        let (exchange, _) = session
            .call(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await;
        let why = exchange.reply.unwrap_err();
        assert!(
            why.why
                .contains(&format!("stopped reading at the {MAX_BODY}-byte limit")),
            "{why}"
        );
        // A flood is not time running out: judged, not inconclusive.
        assert_eq!(why.ran_out, None, "{why:?}");
        assert_eq!(session.stalled, Some(why));
    }
}
