//! The legacy HTTP+SSE transport (2024-11-05): a GET opens the server's event stream, whose
//! `endpoint` event names where to POST messages; responses come back on the stream.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use hyper::body::Bytes;
use hyper::header::{self, HeaderValue};
use hyper::Method;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use url::Url;

use super::sse::{SseParser, TooLong};
use super::wire::{Ctx, Endpoint, Outgoing, Reply};
use super::{timed_out, HttpServer};
use crate::jsonrpc::{
    answer_server_request, classify, ErrorObject, Incoming, Notification, Request, Response,
};
use crate::redact::origin_of;
use crate::stdio::fmt_duration;
use crate::{Breakage, ClientConfig, McpError, TestHooks};

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What the stream reader and the calls share.
struct Shared {
    ep: Endpoint,
    /// Where messages are POSTed (from the `endpoint` event).
    post_url: Url,
    hooks: TestHooks,
    /// Calls waiting, by the id's JSON text.
    pending: Mutex<HashMap<String, oneshot::Sender<Result<Value, ErrorObject>>>>,
    /// Set once the stream is gone: the text every later call gets.
    dead: Mutex<Option<String>>,
    list_changed: AtomicU64,
    /// Bumped on every chunk read from the stream (a call's idle timer resets on it).
    activity: watch::Sender<u64>,
    /// Answers to server requests, POSTed by a task of their own: a POST the server does not
    /// acknowledge must not stop the stream reader (responses behind it would wait).
    answers: mpsc::Sender<(Response, String)>,
}

/// Answers to server requests waiting for their POST; beyond it they are dropped (logged):
/// a server that floods requests and never acknowledges them cannot grow the queue.
const ANSWERS_QUEUED: usize = 64;

/// A legacy HTTP+SSE connection.
pub(crate) struct LegacyTransport {
    shared: Arc<Shared>,
    calls: tokio::sync::Mutex<()>,
    next_id: AtomicI64,
    reader: Mutex<Option<JoinHandle<()>>>,
    answerer: Mutex<Option<JoinHandle<()>>>,
}

impl LegacyTransport {
    /// Opens the event stream and waits for its `endpoint` event (bounded by the idle
    /// timeout); the endpoint must be on the server's own origin.
    pub(crate) async fn connect(
        server: &HttpServer,
        config: &ClientConfig,
    ) -> Result<Self, McpError> {
        let ep = Endpoint::new(server, config)?;
        let ctx = Ctx::call(&ep, "GET event stream");
        let extra = vec![(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        )];
        let mut reply = ep
            .send(
                &Outgoing {
                    method: Method::GET,
                    url: &ep.url,
                    body: None,
                    extra,
                },
                &ctx,
            )
            .await?;
        if !reply.status.is_success() {
            return Err(ep.status_error(reply, &ctx, "").await);
        }
        if reply.media_type().as_deref() != Some("text/event-stream") {
            let media = reply.media_type().unwrap_or_else(|| "none".into());
            return Err(ctx.protocol(format!(
                "the event stream answered with content type {media}, not text/event-stream"
            )));
        }
        let mut parser = SseParser::new(ep.max_body);
        let post_url = loop {
            if let Some(event) = parser.next_event() {
                if event.kind != "endpoint" {
                    continue;
                }
                let text = String::from_utf8_lossy(&event.data).trim().to_string();
                let url = reply.url.join(&text).map_err(|_| {
                    ctx.protocol(format!(
                        "the endpoint event is not a URL: {}",
                        ep.quote(&text, &reply.url)
                    ))
                })?;
                if origin_of(&url) != ep.origin {
                    return Err(ctx.protocol(format!(
                        "the endpoint event names another origin ({}); refused",
                        origin_of(&url)
                    )));
                }
                break url;
            }
            match ep.next_chunk(&mut reply, &ctx).await? {
                Some(chunk) => parser.feed(&chunk).map_err(|TooLong(_)| {
                    ctx.protocol(format!(
                        "an SSE event is larger than {} bytes (max_body_bytes); refused",
                        ep.max_body
                    ))
                })?,
                None => {
                    return Err(ctx.protocol("the event stream ended before its endpoint event"))
                }
            }
        };
        let (answers, queued) = mpsc::channel(ANSWERS_QUEUED);
        let shared = Arc::new(Shared {
            ep,
            post_url,
            hooks: config.hooks.clone(),
            pending: Mutex::new(HashMap::new()),
            dead: Mutex::new(None),
            list_changed: AtomicU64::new(0),
            activity: watch::channel(0).0,
            answers,
        });
        let reader = tokio::spawn(read_stream(shared.clone(), reply, parser));
        let answerer = tokio::spawn(post_answers(shared.clone(), queued));
        Ok(LegacyTransport {
            shared,
            calls: tokio::sync::Mutex::new(()),
            next_id: AtomicI64::new(1),
            reader: Mutex::new(Some(reader)),
            answerer: Mutex::new(Some(answerer)),
        })
    }

    /// The server's origin.
    pub(crate) fn origin(&self) -> &str {
        &self.shared.ep.origin
    }

    /// How many `notifications/tools/list_changed` were read.
    pub(crate) fn list_changes(&self) -> u64 {
        self.shared.list_changed.load(Ordering::SeqCst)
    }

    /// POSTs a request, then waits for its response on the stream: bounded by `bound`, and
    /// by the idle timeout while the stream brings nothing.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        bound: Option<Duration>,
    ) -> Result<Result<Value, ErrorObject>, McpError> {
        let shared = &*self.shared;
        let ctx = Ctx::call(&shared.ep, method);
        let _turn = self.calls.lock().await;
        if let Some(text) = lock(&shared.dead).clone() {
            return Err(McpError::Transport(text));
        }
        let id = Value::from(self.next_id.fetch_add(1, Ordering::SeqCst));
        let (tx, mut rx) = oneshot::channel();
        lock(&shared.pending).insert(id.to_string(), tx);
        let work = async {
            shared
                .post(&Request::new(id.clone(), method, params), &ctx)
                .await?;
            let mut activity = shared.activity.subscribe();
            loop {
                tokio::select! {
                    outcome = &mut rx => {
                        return match outcome {
                            Ok(outcome) => Ok(outcome.map_err(|mut e| {
                                if !shared.broken(Breakage::NoJsonRpcErrorScrub) {
                                    e.message = shared.ep.scrub(&e.message, None);
                                }
                                e
                            })),
                            Err(_) => Err(McpError::Transport(
                                lock(&shared.dead).clone().unwrap_or_else(|| format!("{}: the client was closed", ctx.prefix)),
                            )),
                        };
                    }
                    changed = tokio::time::timeout(shared.ep.idle, activity.changed()) => match changed {
                        Ok(Ok(())) => continue,
                        Ok(Err(_)) => return Err(ctx.transport("the event stream ended")),
                        Err(_) => return Err(McpError::Timeout(format!(
                            "{}: no data for {} (idle read timeout) while waiting for the response to '{method}'; the server may still carry it out",
                            ctx.prefix, fmt_duration(shared.ep.idle)
                        ))),
                    },
                }
            }
        };
        let outcome = match bound {
            None => work.await,
            Some(bound) => tokio::time::timeout(bound, work)
                .await
                .unwrap_or_else(|_| Err(timed_out(method, bound))),
        };
        lock(&shared.pending).remove(&id.to_string());
        outcome
    }

    /// POSTs a notification.
    pub(crate) async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), McpError> {
        let shared = &*self.shared;
        let ctx = Ctx::notification(&shared.ep, method);
        if let Some(text) = lock(&shared.dead).clone() {
            return Err(McpError::Transport(text));
        }
        shared.post(&Notification::new(method, params), &ctx).await
    }

    /// Stops reading the stream and fails later calls; idempotent.
    pub(crate) async fn close(&self) {
        let shared = &*self.shared;
        lock(&shared.dead).get_or_insert_with(|| {
            format!(
                "HTTP error reaching {}: the client was closed",
                shared.ep.origin
            )
        });
        self.stop_tasks();
        lock(&shared.pending).clear();
    }

    /// Ends the stream reader and the answers' POSTs.
    fn stop_tasks(&self) {
        for task in [&self.reader, &self.answerer] {
            if let Some(task) = lock(task).take() {
                task.abort();
            }
        }
    }
}

impl Drop for LegacyTransport {
    fn drop(&mut self) {
        self.stop_tasks();
    }
}

impl Shared {
    /// POSTs one message to the endpoint; any 2xx is its acknowledgement.
    async fn post<T: Serialize>(&self, message: &T, ctx: &Ctx) -> Result<(), McpError> {
        let body = serde_json::to_vec(message).map_err(McpError::Serialization)?;
        let extra = vec![(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )];
        let out = Outgoing {
            method: Method::POST,
            url: &self.post_url,
            body: Some(Bytes::from(body)),
            extra,
        };
        let reply = self.ep.send(&out, ctx).await?;
        if !reply.status.is_success() {
            return Err(self.ep.status_error(reply, ctx, "").await);
        }
        Ok(())
    }

    /// POSTs the answer to a server request `method` (bounded as a notification is); a
    /// failure is only logged: the server asked, nothing of the client's waits on it.
    async fn post_answer(&self, answer: &Response, method: &str) {
        let ctx = Ctx::notification(&self.ep, &format!("response to {method}"));
        if let Err(e) = self.post(answer, &ctx).await {
            tracing::debug!(target: "mcp_refclient", "answering the server failed: {e}");
        }
    }

    fn broken(&self, rule: Breakage) -> bool {
        self.hooks.broken.contains(&rule)
    }

    fn fail_all(&self, text: String) {
        let text = lock(&self.dead).get_or_insert(text).clone();
        tracing::debug!(target: "mcp_refclient", "{text}");
        lock(&self.pending).clear();
    }

    async fn dispatch(&self, data: &[u8]) {
        match classify(data) {
            Incoming::Response { id, outcome } => match lock(&self.pending).remove(&id.to_string())
            {
                Some(tx) => {
                    let _ = tx.send(outcome);
                }
                None => {
                    tracing::debug!(target: "mcp_refclient", "dropped a response for id {id}: no call waits for it")
                }
            },
            Incoming::Notification { method, .. } => {
                if method == "notifications/tools/list_changed"
                    && !self.broken(Breakage::NoListChangedCount)
                {
                    self.list_changed.fetch_add(1, Ordering::SeqCst);
                }
            }
            Incoming::Request { id, method, .. } => {
                if method != "ping" {
                    tracing::warn!(target: "mcp_refclient", origin = %self.ep.origin, "declined server request '{method}': method not found");
                }
                let Some(answer) = answer_server_request(id, &method, |rule| self.broken(rule))
                else {
                    return;
                };
                if self.broken(Breakage::AnswerInline) {
                    return self.post_answer(&answer, &method).await;
                }
                if self.broken(Breakage::AnswerQueueWaits) {
                    let _ = self.answers.send((answer, method)).await;
                    return;
                }
                if let Err(full) = self.answers.try_send((answer, method)) {
                    let (_, method) = full.into_inner();
                    tracing::debug!(target: "mcp_refclient", "dropped the answer to server request '{method}': {ANSWERS_QUEUED} answers wait for their POST");
                }
            }
            Incoming::NotJson(_) | Incoming::Invalid(_) => {
                tracing::warn!(target: "mcp_refclient", origin = %self.ep.origin, "skipped an event stream message that is not JSON-RPC");
            }
        }
    }
}

/// POSTs the answers to server requests one after the other, each bounded as a notification
/// is, until the transport stops.
async fn post_answers(shared: Arc<Shared>, mut queued: mpsc::Receiver<(Response, String)>) {
    while let Some((answer, method)) = queued.recv().await {
        shared.post_answer(&answer, &method).await;
        if shared.broken(Breakage::OneAnswerPosted) {
            return;
        }
    }
}

/// Reads the event stream until it ends, handing responses to the calls waiting for them.
async fn read_stream(shared: Arc<Shared>, mut reply: Reply, mut parser: SseParser) {
    let prefix = format!("HTTP error reaching {}", shared.ep.origin);
    loop {
        while let Some(event) = parser.next_event() {
            if event.kind == "message" && !event.data.iter().all(u8::is_ascii_whitespace) {
                shared.dispatch(&event.data).await;
            }
        }
        use http_body_util::BodyExt;
        match reply.body.frame().await {
            Some(Ok(frame)) => {
                let Ok(chunk) = frame.into_data() else {
                    continue;
                };
                shared.activity.send_modify(|n| *n += 1);
                if parser.feed(&chunk).is_err() {
                    shared.fail_all(format!(
                        "{prefix}: an SSE event is larger than {} bytes (max_body_bytes); the event stream was dropped",
                        shared.ep.max_body
                    ));
                    return;
                }
            }
            Some(Err(e)) => {
                shared.fail_all(format!("{prefix}: the event stream broke: {e}"));
                return;
            }
            None => {
                shared.fail_all(format!("{prefix}: the event stream ended"));
                return;
            }
        }
    }
}
