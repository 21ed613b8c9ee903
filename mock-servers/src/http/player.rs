//! The HTTP player: runs a script's steps in order against the requests the listeners hand
//! it, logging every request, response and message to the wire log.
//!
//! An `expect` takes the next request (an *exchange*); later steps answer it: `reply` (JSON
//! or SSE), `respond`, `redirect`, `hang`, `disconnect`, `open_sse`, `endpoint`. `notify`,
//! `request` and `write` go on the latest exchange's SSE response (opened on the spot,
//! shaped like the `reply` ahead) or, over legacy-sse, on the `endpoint` stream. An `expect`
//! that took a notification, a response or a body-less request answers it at once with the
//! default (POST 202, DELETE 200, GET 405) unless the next step answers it. After the last
//! step every request gets its default answer (a JSON-RPC request its default result);
//! after a mismatch, a 500 naming it.

use std::collections::HashSet;
use std::sync::{Arc, Condvar, Mutex};

use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot, watch};

use crate::describe::{describe_expect, describe_step};
use crate::http::body::{MockBody, StreamWriter};
use crate::http::server::{Incoming, Refusal, MAX_BODY};
use crate::http::sse;
use crate::matcher::{http_matches, matches, RequestView};
use crate::responder::{default_result, expand_env, message, response};
use crate::script::{
    Expect, Framing, Handshake, HttpMatch, LineEnd, Origin, Reply, Script, Step, Transport,
};
use crate::wire_log::{summarize, LogWriter, Record};

/// How the script's play ended, for whoever waits on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayEnd {
    /// Every step was played (later requests get default answers).
    Completed,
    /// A request did not match its `expect` (later requests get 500).
    Mismatch,
    /// The script could not be played as written (later requests get 500).
    ScriptError,
    /// An `exit` or `crash` step: the listeners closed.
    Exited(i32),
}

/// Where the play is, shared with the mock's owner.
#[derive(Debug, Default)]
pub struct Progress {
    /// The step being played.
    pub step: Option<usize>,
    /// Set once the play ended.
    pub end: Option<PlayEnd>,
    /// Set by the standalone binary when its stdin closed.
    pub stdin_closed: bool,
}

/// [`Progress`] and a condition variable to wait on its changes.
#[derive(Debug, Default)]
pub struct Watch {
    /// The progress.
    pub progress: Mutex<Progress>,
    /// Notified on every change of `progress`.
    pub changed: Condvar,
}

impl Watch {
    /// Changes the progress and wakes the waiters.
    pub fn update(&self, change: impl FnOnce(&mut Progress)) {
        let mut progress = self.progress.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut progress);
        self.changed.notify_all();
    }
}

/// What the mock logs (on its stderr line, `mcp-mock-http: step N: …`) when it cannot stop
/// listening for a `refuse` step and listen again — its port was taken meanwhile (by another
/// process's connection, under load): a fault of the mock, not of the client.
pub const LISTENER_FAULT: &str = "the primary listener cannot refuse connections";

/// The origins the listeners serve, for `${…}` placeholders.
#[derive(Clone, Debug)]
pub struct Origins {
    /// `http(s)://127.0.0.1:PORT`.
    pub primary: String,
    /// `http(s)://localhost:PORT2`.
    pub second: String,
    /// https only: `http://127.0.0.1:PORT3`.
    pub plain: Option<String>,
}

enum Flow {
    Next,
    /// Stop playing; later requests get 500 with this text.
    Stop(PlayEnd, String),
    Exit(i32),
    Forever,
}

/// A request taken by an `expect`, and how far its answer went.
struct Exchange {
    name: Option<String>,
    seq: u64,
    method: String,
    path: String,
    url: String,
    message: Option<Value>,
    respond: Option<oneshot::Sender<Response<MockBody>>>,
    stream: Option<Stream>,
}

impl Exchange {
    fn new(incoming: Incoming, name: Option<String>) -> Self {
        let message = parse_body(&incoming.body);
        Self {
            name,
            seq: incoming.seq,
            url: format!(
                "{}://{}{}",
                incoming.scheme, incoming.authority, incoming.path
            ),
            method: incoming.method,
            path: incoming.path,
            message,
            respond: Some(incoming.respond),
            stream: None,
        }
    }

    fn is_rpc_request(&self) -> bool {
        self.message.as_ref().is_some_and(is_rpc_request)
    }

    /// The JSON-RPC method of its body, if it has one.
    fn rpc_method(&self) -> Option<String> {
        self.message
            .as_ref()
            .and_then(|m| m.get("method"))
            .and_then(Value::as_str)
            .map(String::from)
    }

    fn open_stream(&self) -> Option<&Stream> {
        self.stream.as_ref().filter(|s| !s.ended)
    }
}

struct Stream {
    writer: StreamWriter,
    line_end: LineEnd,
    ended: bool,
}

/// The shaping of a response's head.
#[derive(Default)]
struct Head<'a> {
    status: Option<u16>,
    headers: Vec<(&'a str, &'a str)>,
    session_id: Option<&'a str>,
    line_end: Option<LineEnd>,
}

/// A script being played over HTTP.
pub struct Player {
    script: Script,
    log: LogWriter,
    requests: mpsc::Receiver<Incoming>,
    origins: Origins,
    exchanges: Vec<Exchange>,
    legacy: Option<Stream>,
    issued: Vec<String>,
    expired: HashSet<String>,
    held: Vec<oneshot::Sender<Response<MockBody>>>,
    watch: Arc<Watch>,
    stop: watch::Sender<bool>,
    refusals: Option<mpsc::UnboundedSender<Refusal>>,
}

impl Player {
    /// A player for `script`, taking requests from `requests`; `stop` closes the listeners.
    pub fn new(
        script: Script,
        log: LogWriter,
        requests: mpsc::Receiver<Incoming>,
        origins: Origins,
        watch: Arc<Watch>,
        stop: watch::Sender<bool>,
    ) -> Self {
        Self {
            script,
            log,
            requests,
            origins,
            exchanges: Vec::new(),
            legacy: None,
            issued: Vec::new(),
            expired: HashSet::new(),
            held: Vec::new(),
            watch,
            stop,
            refusals: None,
        }
    }

    /// Where `refuse` steps go: the primary listener.
    pub fn with_refusals(mut self, refusals: mpsc::UnboundedSender<Refusal>) -> Self {
        self.refusals = Some(refusals);
        self
    }

    /// Plays the steps, then serves default answers (or 500s after a mismatch) until
    /// dropped. Returns only after an `exit` or `crash` step.
    pub async fn play(&mut self) {
        let steps = self.script.steps.clone();
        for (index, step) in steps.iter().enumerate() {
            self.watch.update(|p| p.step = Some(index));
            self.log.append(&Record::Step {
                index,
                describe: describe_step(step),
            });
            match self.play_step(index, step, &steps[index + 1..]).await {
                Flow::Next => {}
                Flow::Stop(end, reason) => {
                    self.watch.update(|p| p.end = Some(end));
                    return self.serve_stopped(&reason).await;
                }
                Flow::Exit(code) => {
                    self.log.append(&Record::Exiting { code });
                    let _ = self.stop.send(true);
                    self.held.clear();
                    self.exchanges.clear();
                    self.legacy = None;
                    self.watch.update(|p| p.end = Some(PlayEnd::Exited(code)));
                    return;
                }
                Flow::Forever => std::future::pending::<()>().await,
            }
        }
        self.log.append(&Record::Completed {});
        self.watch.update(|p| p.end = Some(PlayEnd::Completed));
        self.serve_defaults().await;
    }

    /// Called when the mock shuts down: logs `Unfinished` when steps were left unplayed.
    pub fn shut_down(&mut self) {
        let progress = self
            .watch
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if progress.end.is_some() {
            return;
        }
        // Shut down before the first step began: that step is the one left.
        let Some(step) = self.script.steps.get(progress.step.unwrap_or(0)) else {
            return;
        };
        if matches!(step, Step::Stall(s) if s.ms.is_none()) {
            return;
        }
        let expected = describe_step(step);
        drop(progress);
        self.log.append(&Record::Unfinished { expected });
    }

    async fn play_step(&mut self, index: usize, step: &Step, rest: &[Step]) -> Flow {
        match step {
            Step::Handshake(h) => self.handshake(index, h).await,
            Step::Discover(d) => self.discover(index, d).await,
            Step::Expect(e) => self.expect(index, e, rest.first()).await,
            Step::Reply(r) => self.reply(index, r, &Handshake::default()),
            Step::Notify(n) => {
                let params = match &n.subscription {
                    None => n.params.clone(),
                    Some(name) => {
                        let id = self
                            .named(name)
                            .and_then(|i| self.exchanges[i].message.as_ref()?.get("id").cloned());
                        match id {
                            Some(id) => Some(crate::responder::tagged(n.params.as_ref(), &id)),
                            None => {
                                return self.script_error(
                                    index,
                                    &format!("no request named `{name}` to tag with"),
                                )
                            }
                        }
                    }
                };
                self.frame(index, message(None, &n.method, params.as_ref()), rest)
            }
            Step::Request(r) => {
                for message in r.messages() {
                    match self.frame(index, message, rest) {
                        Flow::Next => {}
                        other => return other,
                    }
                }
                Flow::Next
            }
            Step::Stall(s) => match s.ms {
                Some(ms) => {
                    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                    Flow::Next
                }
                None => Flow::Forever,
            },
            Step::Crash(c) => {
                if let Some(text) = &c.stderr {
                    self.log.append(&Record::Wrote {
                        stream: "stderr".into(),
                        summary: summarize(text.as_bytes(), text.len()),
                    });
                }
                Flow::Exit(c.code)
            }
            Step::Exit(e) => Flow::Exit(e.code),
            Step::Respond(r) => self.respond(index, r),
            Step::Redirect(r) => self.redirect(index, r).await,
            Step::Hang(t) => match self.pending(t.to.as_deref()) {
                Ok(i) => {
                    if let Some(respond) = self.exchanges[i].respond.take() {
                        self.held.push(respond);
                    }
                    Flow::Next
                }
                Err(e) => self.script_error(index, &e),
            },
            Step::Disconnect(t) => self.disconnect(index, t.to.as_deref()),
            Step::OpenSse(o) => {
                let i = match self.pending(o.to.as_deref()) {
                    Ok(i) => i,
                    Err(e) => return self.script_error(index, &e),
                };
                let head = Head {
                    status: o.status,
                    headers: pairs(&o.headers),
                    session_id: o.session_id.as_deref(),
                    line_end: o.sse_line_end,
                };
                self.open_sse(index, i, head)
            }
            Step::Write(w) => {
                let text = self.expand(w.text.as_deref().unwrap_or_default(), None);
                let fill = w.fill.unwrap_or(0);
                // legacy-sse: on the endpoint stream, where the frames go.
                let (stream, missing) = match self.script.transport {
                    Transport::LegacySse => (
                        self.legacy.as_ref().map(Ok),
                        "write: no endpoint stream to write on",
                    ),
                    _ => (
                        self.current_stream(index, rest),
                        "write: no request to write on",
                    ),
                };
                let stream = match stream {
                    Some(Ok(stream)) => stream,
                    Some(Err(flow)) => return flow,
                    None => return self.script_error(index, missing),
                };
                stream.writer.write(text.clone());
                if fill > 0 {
                    stream.writer.fill(fill);
                }
                let total = text.len() + fill;
                let mut preview = text.into_bytes();
                preview.resize(preview.len() + fill.min(1024), b'x');
                self.log.append(&Record::Wrote {
                    stream: "http".into(),
                    summary: summarize(&preview, total),
                });
                Flow::Next
            }
            Step::CloseStream(c) => {
                let Some(i) = self
                    .exchanges
                    .iter()
                    .rposition(|x| x.open_stream().is_some())
                else {
                    return self.script_error(index, "close_stream: no open stream");
                };
                if let Some(stream) = &mut self.exchanges[i].stream {
                    match c.abort {
                        true => stream.writer.abort(),
                        false => stream.writer.end(),
                    }
                    stream.ended = true;
                }
                Flow::Next
            }
            Step::ExpireSession(e) => match e.id.clone().or_else(|| self.issued.last().cloned()) {
                Some(id) => {
                    self.expired.insert(id);
                    Flow::Next
                }
                None => self.script_error(index, "expire_session: no session was issued"),
            },
            Step::Endpoint(e) => self.endpoint(index, &e.path),
            // As the first step, the mock started refusing (see `HttpMock::start`).
            Step::Refuse(_) if index == 0 => Flow::Next,
            Step::Refuse(r) => self.refuse(index, r.ms).await,
            // stdio steps, refused when the script loads (see `load::http_only`).
            other => self.script_error(index, &crate::load::wrong_transport(other)),
        }
    }

    async fn handshake(&mut self, index: usize, handshake: &Handshake) -> Flow {
        let initialize = Expect {
            method: Some("initialize".into()),
            has_id: Some(true),
            ..Expect::default()
        };
        let answer = Step::Reply(Reply::default());
        if let flow @ (Flow::Stop(..) | Flow::Exit(_) | Flow::Forever) =
            self.expect(index, &initialize, Some(&answer)).await
        {
            return flow;
        }
        let reply = Reply {
            session_id: handshake.session_id.clone(),
            ..Reply::default()
        };
        if let flow @ (Flow::Stop(..) | Flow::Exit(_) | Flow::Forever) =
            self.reply(index, &reply, handshake)
        {
            return flow;
        }
        let initialized = Expect {
            method: Some("notifications/initialized".into()),
            has_id: Some(false),
            ..Expect::default()
        };
        self.expect(index, &initialized, None).await
    }

    async fn discover(&mut self, index: usize, discover: &crate::script::Discover) -> Flow {
        let probe = Expect {
            method: Some("server/discover".into()),
            has_id: Some(true),
            meta: discover.meta.clone(),
            ..Expect::default()
        };
        let answer = Step::Reply(Reply::default());
        if let flow @ (Flow::Stop(..) | Flow::Exit(_) | Flow::Forever) =
            self.expect(index, &probe, Some(&answer)).await
        {
            return flow;
        }
        let reply = Reply {
            result: Some(crate::responder::discover_result(discover)),
            ..Reply::default()
        };
        self.reply(index, &reply, &Handshake::default())
    }

    async fn expect(&mut self, index: usize, expect: &Expect, next: Option<&Step>) -> Flow {
        let incoming = loop {
            let Some(incoming) = self.next_request().await else {
                return Flow::Forever;
            };
            match self.incidental(expect, incoming) {
                Some(incoming) => break incoming,
                None => continue,
            }
        };
        // At 2026-07-28 the headers mirror the body: `Mcp-Method` its method, the version
        // header its `_meta` version (a mismatch is what a server answers -32020 to).
        let mirrored = expect.meta.as_ref().is_none_or(|version| {
            let header = |name: &str| {
                incoming
                    .headers
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.as_str())
            };
            let method = parse_body(&incoming.body)
                .and_then(|m| m.get("method").and_then(Value::as_str).map(String::from));
            header("mcp-protocol-version") == Some(version.as_str())
                && method.is_some_and(|m| header("mcp-method") == Some(m.as_str()))
        });
        let http_ok = mirrored
            && expect.http.as_ref().is_none_or(|pattern| {
                http_matches(
                    pattern,
                    &RequestView {
                        origin: incoming.origin,
                        method: &incoming.method,
                        path: &incoming.path,
                        headers: &incoming.headers,
                    },
                )
            });
        let received = match http_ok {
            true => None,
            false => Some(describe_request(&incoming, expect.http.as_ref())),
        };
        let exchange = Exchange::new(incoming, expect.name.clone());
        let received = received.or_else(|| {
            let rpc_ok = !expect.has_rpc_fields()
                || exchange
                    .message
                    .as_ref()
                    .is_some_and(|m| matches(expect, m));
            match rpc_ok {
                true => None,
                false => Some(exchange.message.clone().unwrap_or_else(|| {
                    Value::String(format!(
                        "{} {} without a JSON body",
                        exchange.method, exchange.path
                    ))
                })),
            }
        });
        self.exchanges.push(exchange);
        let i = self.exchanges.len() - 1;
        if let Some(received) = received {
            let expected = describe_expect(expect);
            let text = format!(
                "step {index} expected `{expected}`, received {}",
                cut(&received)
            );
            self.log.append(&Record::Mismatch {
                index,
                expected,
                received,
            });
            self.answer_text(i, 500, &format!("mcp-mock-http: {text}\n"));
            return Flow::Stop(PlayEnd::Mismatch, text);
        }
        if !self.exchanges[i].is_rpc_request() && !next.is_some_and(answers) {
            let mut exchange = self.exchanges.remove(i);
            self.answer_default(&mut exchange);
            self.exchanges.push(exchange);
        }
        Flow::Next
    }

    fn reply(&mut self, index: usize, reply: &Reply, handshake: &Handshake) -> Flow {
        let found = match &reply.to {
            Some(name) => self.named(name),
            None => self.exchanges.iter().rposition(Exchange::is_rpc_request),
        };
        let Some(i) = found else {
            return self.script_error(index, "reply, but no earlier expect took a request");
        };
        let request = self.exchanges[i].message.clone().filter(is_rpc_request);
        let request_id = request.as_ref().and_then(|r| r.get("id")).cloned();
        let Some(id) = reply.id.clone().or(request_id) else {
            return self.script_error(index, "reply to a request without an id");
        };
        let outcome = match (&reply.error, &reply.result, &request) {
            (Some(error), _, _) => Err(error.clone()),
            (None, Some(result), _) => Ok(expand_env(result)),
            (None, None, Some(request)) => default_result(request, &self.script.tools, handshake),
            (None, None, None) => Ok(json!({})),
        };
        let message = response(id, outcome);
        if self.script.transport == Transport::LegacySse {
            return self.legacy_send(index, i, message);
        }
        let framing = reply.framing.unwrap_or(match self.exchanges[i].stream {
            Some(_) => Framing::Sse,
            None => Framing::Json,
        });
        let head = Head {
            status: reply.status,
            headers: pairs(&reply.headers),
            session_id: reply.session_id.as_deref(),
            line_end: reply.sse_line_end,
        };
        match framing {
            Framing::Json => {
                let Some(respond) = self.exchanges[i].respond.take() else {
                    return self.script_error(index, "reply: the request was answered already");
                };
                let text = serde_json::to_vec(&message).unwrap_or_default();
                let summary = summarize(&text, text.len());
                let body = match reply.hold_open {
                    true => {
                        let (body, writer) = MockBody::streamed(None);
                        writer.write(text);
                        body
                    }
                    false => MockBody::whole(text),
                };
                let seq = self.exchanges[i].seq;
                let head = Head {
                    headers: [("content-type", "application/json")]
                        .into_iter()
                        .chain(head.headers)
                        .collect(),
                    ..head
                };
                if let Err(e) = self.send_response(seq, respond, head, body, summary) {
                    return self.script_error(index, &e);
                }
            }
            Framing::Sse => {
                if self.exchanges[i].stream.is_none() {
                    if let flow @ Flow::Stop(..) = self.open_sse(index, i, head) {
                        return flow;
                    }
                }
                let Some(stream) = self.exchanges[i].open_stream() else {
                    return self.script_error(index, "reply: the response stream ended already");
                };
                stream.writer.write(sse::frame(
                    &message,
                    None,
                    stream.line_end,
                    reply.multiline_data,
                ));
                if !reply.hold_open {
                    stream.writer.end();
                    if let Some(stream) = &mut self.exchanges[i].stream {
                        stream.ended = true;
                    }
                }
            }
        }
        self.log.append(&Record::Sent { message });
        Flow::Next
    }

    /// A notification or request from the server: a frame on the latest exchange's SSE
    /// response (opened now, shaped like the reply ahead), or on the legacy stream.
    fn frame(&mut self, index: usize, message: Value, rest: &[Step]) -> Flow {
        if self.script.transport == Transport::LegacySse {
            let Some(stream) = &self.legacy else {
                return self.script_error(index, "no endpoint stream to send on");
            };
            stream.writer.write(sse::frame(
                &message,
                Some("message"),
                stream.line_end,
                false,
            ));
            self.log.append(&Record::Sent { message });
            return Flow::Next;
        }
        let stream = match self.current_stream(index, rest) {
            Some(Ok(stream)) => stream,
            Some(Err(flow)) => return flow,
            None => return self.script_error(index, "no open SSE response to send on"),
        };
        stream
            .writer
            .write(sse::frame(&message, None, stream.line_end, false));
        self.log.append(&Record::Sent { message });
        Flow::Next
    }

    /// The stream frames go on: the latest exchange still streaming, or the latest
    /// unanswered one, whose SSE response opens now, shaped like the `reply` ahead in `rest`.
    fn current_stream(&mut self, index: usize, rest: &[Step]) -> Option<Result<&Stream, Flow>> {
        let i = self
            .exchanges
            .iter()
            .rposition(|x| x.open_stream().is_some() || x.respond.is_some())?;
        if self.exchanges[i].stream.is_none() {
            let reply = rest
                .iter()
                .take_while(|s| {
                    !matches!(s, Step::Expect(_) | Step::Handshake(_) | Step::Discover(_))
                })
                .find_map(|s| match s {
                    Step::Reply(r) => Some(r.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            let head = Head {
                status: reply.status,
                headers: pairs(&reply.headers),
                session_id: reply.session_id.as_deref(),
                line_end: reply.sse_line_end,
            };
            if let flow @ Flow::Stop(..) = self.open_sse(index, i, head) {
                return Some(Err(flow));
            }
        }
        self.exchanges[i].open_stream().map(Ok)
    }

    fn open_sse(&mut self, index: usize, i: usize, head: Head<'_>) -> Flow {
        let Some(respond) = self.exchanges[i].respond.take() else {
            return self.script_error(index, "the request was answered already");
        };
        let line_end = head.line_end.unwrap_or_default();
        let (body, writer) = MockBody::streamed(None);
        let head = Head {
            headers: [
                ("content-type", "text/event-stream"),
                ("cache-control", "no-cache"),
            ]
            .into_iter()
            .chain(head.headers)
            .collect(),
            ..head
        };
        let seq = self.exchanges[i].seq;
        if let Err(e) = self.send_response(seq, respond, head, body, "[sse stream]".into()) {
            return self.script_error(index, &e);
        }
        self.exchanges[i].stream = Some(Stream {
            writer,
            line_end,
            ended: false,
        });
        Flow::Next
    }

    fn respond(&mut self, index: usize, respond: &crate::script::Respond) -> Flow {
        let i = match self.pending(respond.to.as_deref()) {
            Ok(i) => i,
            Err(e) => return self.script_error(index, &e),
        };
        let body = self.expand(respond.body.as_deref().unwrap_or(""), Some(i));
        let fill = respond.fill.unwrap_or(0);
        let total = body.len() + fill;
        let mut headers = pairs(&respond.headers);
        if total > 0
            && !headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        {
            headers.insert(0, ("content-type", "text/plain; charset=utf-8"));
        }
        let mut preview = body.clone().into_bytes();
        preview.resize(preview.len() + fill.min(1024), b'x');
        let summary = summarize(&preview, total);
        let body = match (respond.hold_open, fill) {
            (false, 0) => MockBody::whole(body),
            (hold_open, _) => {
                let (stream, writer) = MockBody::streamed((!hold_open).then_some(total as u64));
                writer.write(body);
                writer.fill(fill);
                if !hold_open {
                    writer.end();
                }
                stream
            }
        };
        let head = Head {
            status: Some(respond.status.unwrap_or(200)),
            headers,
            session_id: respond.session_id.as_deref(),
            line_end: None,
        };
        let Some(sender) = self.exchanges[i].respond.take() else {
            return self.script_error(index, "respond: the request was answered already");
        };
        let seq = self.exchanges[i].seq;
        match self.send_response(seq, sender, head, body, summary) {
            Ok(()) => Flow::Next,
            Err(e) => self.script_error(index, &e),
        }
    }

    async fn redirect(&mut self, index: usize, redirect: &crate::script::Redirect) -> Flow {
        let i = match self.pending(redirect.to.as_deref()) {
            Ok(i) => i,
            Err(e) => return self.script_error(index, &e),
        };
        let location = self.expand(&redirect.location, Some(i));
        let head = || Head {
            status: Some(redirect.status),
            headers: vec![("location", location.as_str())],
            ..Head::default()
        };
        let Some(sender) = self.exchanges[i].respond.take() else {
            return self.script_error(index, "redirect: the request was answered already");
        };
        let seq = self.exchanges[i].seq;
        if let Err(e) = self.send_response(seq, sender, head(), MockBody::empty(), String::new()) {
            return self.script_error(index, &e);
        }
        // Further hops are the same request followed again (same HTTP method, same JSON-RPC
        // method): other traffic beside it (a listing a client sends alongside its call, a
        // GET opening a stream) goes to the incidental policy, as it does while the script
        // waits in `expect`, and does not use up `repeat`.
        let exchange = &self.exchanges[i];
        let http = HttpMatch {
            method: Some(exchange.method.clone()),
            ..HttpMatch::default()
        };
        let same_request = Expect {
            method: exchange.rpc_method(),
            http: Some(http),
            ..Expect::default()
        };
        let mut hops = 1;
        while hops < redirect.repeat {
            let Some(incoming) = self.next_request().await else {
                return Flow::Forever;
            };
            let Some(incoming) = self.incidental(&same_request, incoming) else {
                continue;
            };
            hops += 1;
            let seq = incoming.seq;
            let _ = self.send_response(
                seq,
                incoming.respond,
                head(),
                MockBody::empty(),
                String::new(),
            );
        }
        Flow::Next
    }

    /// Has the primary listener refuse connections for `ms`; goes on once it does.
    async fn refuse(&mut self, index: usize, ms: u64) -> Flow {
        let (done, refusing) = oneshot::channel();
        let time = std::time::Duration::from_millis(ms);
        let sent = match &self.refusals {
            Some(refusals) => refusals.send(Refusal { time, done }).is_ok(),
            None => false,
        };
        if !sent || refusing.await.is_err() {
            return self.script_error(index, LISTENER_FAULT);
        }
        Flow::Next
    }

    fn disconnect(&mut self, index: usize, to: Option<&str>) -> Flow {
        let found = match to {
            Some(name) => self.named(name),
            None => self
                .exchanges
                .iter()
                .rposition(|x| x.respond.is_some() || x.open_stream().is_some()),
        };
        let Some(i) = found else {
            return self.script_error(index, "disconnect: no request to cut");
        };
        let exchange = &mut self.exchanges[i];
        if exchange.respond.take().is_none() {
            if let Some(stream) = &mut exchange.stream {
                stream.writer.abort();
                stream.ended = true;
            }
        }
        let summary = format!(
            "[request {}: connection closed by the server]",
            exchange.seq
        );
        self.log.append(&Record::Wrote {
            stream: "http".into(),
            summary,
        });
        Flow::Next
    }

    fn endpoint(&mut self, index: usize, path: &str) -> Flow {
        let i = match self.pending(None) {
            Ok(i) => i,
            Err(e) => return self.script_error(index, &e),
        };
        if let flow @ Flow::Stop(..) = self.open_sse(index, i, Head::default()) {
            return flow;
        }
        let path = self.expand(path, Some(i));
        if let Some(stream) = &mut self.exchanges[i].stream {
            stream
                .writer
                .write(sse::field_frame(Some("endpoint"), &path, stream.line_end));
            stream.ended = true;
            self.legacy = Some(Stream {
                writer: stream.writer.clone(),
                line_end: stream.line_end,
                ended: false,
            });
        }
        let summary = format!("event: endpoint, data: {path}");
        self.log.append(&Record::Wrote {
            stream: "http".into(),
            summary,
        });
        Flow::Next
    }

    /// Over legacy-sse: the POST gets 202 (if not answered yet), the message goes on the
    /// endpoint stream.
    fn legacy_send(&mut self, index: usize, i: usize, message: Value) -> Flow {
        if let Some(sender) = self.exchanges[i].respond.take() {
            let seq = self.exchanges[i].seq;
            let head = Head {
                status: Some(202),
                ..Head::default()
            };
            let _ = self.send_response(seq, sender, head, MockBody::empty(), String::new());
        }
        let Some(stream) = &self.legacy else {
            return self.script_error(index, "no endpoint stream to answer on");
        };
        stream.writer.write(sse::frame(
            &message,
            Some("message"),
            stream.line_end,
            false,
        ));
        self.log.append(&Record::Sent { message });
        Flow::Next
    }

    /// The next request, logged; a request bearing an expired session gets 404 and one over
    /// the size limit 413, and neither is returned. `None` when the listeners are gone.
    async fn next_request(&mut self) -> Option<Incoming> {
        loop {
            let incoming = self.requests.recv().await?;
            let body = match (incoming.too_large, parse_body(&incoming.body)) {
                (true, _) => Value::String(format!("[a body over the {MAX_BODY}-byte limit]")),
                (false, Some(json)) => json,
                (false, None) if incoming.body.is_empty() => Value::Null,
                (false, None) => Value::String(summarize(&incoming.body, incoming.body.len())),
            };
            self.log.append(&Record::HttpRequest {
                seq: incoming.seq,
                origin: incoming.origin.name().into(),
                method: incoming.method.clone(),
                path: incoming.path.clone(),
                headers: incoming.headers.clone(),
                body: body.clone(),
            });
            if !body.is_null() {
                self.log.append(&Record::Received { message: body });
            }
            let session = incoming
                .headers
                .iter()
                .find(|(n, _)| n == "mcp-session-id")
                .map(|(_, v)| v.clone());
            if session.is_some_and(|s| self.expired.contains(&s)) {
                let error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "Session not found"}});
                let text = serde_json::to_vec(&error).unwrap_or_default();
                let head = Head {
                    status: Some(404),
                    headers: vec![("content-type", "application/json")],
                    ..Head::default()
                };
                let summary = summarize(&text, text.len());
                let _ = self.send_response(
                    incoming.seq,
                    incoming.respond,
                    head,
                    MockBody::whole(text),
                    summary,
                );
                continue;
            }
            if incoming.too_large {
                let head = Head {
                    status: Some(413),
                    ..Head::default()
                };
                let _ = self.send_response(
                    incoming.seq,
                    incoming.respond,
                    head,
                    MockBody::empty(),
                    String::new(),
                );
                continue;
            }
            return Some(incoming);
        }
    }

    async fn serve_defaults(&mut self) {
        while let Some(incoming) = self.next_request().await {
            let mut exchange = Exchange::new(incoming, None);
            // Past the script's end, traffic outside the rule is recorded as on stdio.
            let method = exchange.rpc_method();
            let listen = (exchange.method == "GET"
                && self.script.transport != Transport::LegacySse)
                .then(|| crate::script::LISTEN_STREAM.to_string());
            if let Some(method) = method
                .or(listen)
                .filter(|m| self.script.incidental.contains(m))
            {
                self.log.append(&Record::Incidental { method });
            }
            if exchange.is_rpc_request() && self.script.transport != Transport::LegacySse {
                let request = exchange.message.clone().unwrap_or_default();
                let id = request.get("id").cloned().unwrap_or(Value::Null);
                let result = default_result(&request, &self.script.tools, &Handshake::default());
                let message = response(id, result);
                let text = serde_json::to_vec(&message).unwrap_or_default();
                let head = Head {
                    headers: vec![("content-type", "application/json")],
                    ..Head::default()
                };
                if let Some(sender) = exchange.respond.take() {
                    let summary = summarize(&text, text.len());
                    let _ = self.send_response(
                        exchange.seq,
                        sender,
                        head,
                        MockBody::whole(text),
                        summary,
                    );
                }
                self.log.append(&Record::Sent { message });
            } else if exchange.is_rpc_request() && self.legacy.is_some() {
                let request = exchange.message.clone().unwrap_or_default();
                let id = request.get("id").cloned().unwrap_or(Value::Null);
                let result = default_result(&request, &self.script.tools, &Handshake::default());
                self.exchanges.push(exchange);
                let i = self.exchanges.len() - 1;
                let _ = self.legacy_send(0, i, response(id, result));
                self.exchanges.pop();
            } else {
                self.answer_default(&mut exchange);
            }
        }
    }

    async fn serve_stopped(&mut self, reason: &str) {
        let text = format!("mcp-mock-http: the script stopped: {reason}\n");
        while let Some(incoming) = self.next_request().await {
            self.exchanges.push(Exchange::new(incoming, None));
            let i = self.exchanges.len() - 1;
            self.answer_text(i, 500, &text);
            self.exchanges.pop();
        }
    }

    /// A request outside the rule under test (the script's `incidental` policy) where
    /// `expect` waits for something else: answered with a default and recorded (`None`);
    /// anything else is handed back. Over legacy-sse the POST gets 202 and the answer goes
    /// on the endpoint stream (before there is one, nothing is incidental).
    fn incidental(&mut self, expect: &Expect, incoming: Incoming) -> Option<Incoming> {
        if self.script.transport == Transport::LegacySse && self.legacy.is_none() {
            return Some(incoming);
        }
        if incoming.method == "GET" && self.script.transport != Transport::LegacySse {
            // The stream a Streamable HTTP client may open for server messages: this server
            // offers none (405), unless the script waits for that GET.
            let awaited = expect.http.as_ref().is_some_and(|p| {
                p.method
                    .as_deref()
                    .is_some_and(|m| m.eq_ignore_ascii_case("GET"))
            });
            if awaited
                || !self
                    .script
                    .incidental
                    .iter()
                    .any(|m| m == crate::script::LISTEN_STREAM)
            {
                return Some(incoming);
            }
            self.log.append(&Record::Incidental {
                method: crate::script::LISTEN_STREAM.into(),
            });
            self.answer_default(&mut Exchange::new(incoming, None));
            return None;
        }
        let message = parse_body(&incoming.body);
        let method = message
            .as_ref()
            .and_then(|m| m.get("method"))
            .and_then(Value::as_str)
            .map(String::from);
        // A GET opening the optional server-to-client stream (a client MAY; a server without
        // one answers 405), where the script waits for something else: answered 405.
        // So is a DELETE ending a session (a client SHOULD; answered 200) where the script
        // waits for something else: the HTTP log still shows both.
        let wanted = expect
            .http
            .as_ref()
            .and_then(|h| h.method.as_deref())
            .is_some_and(|m| m.eq_ignore_ascii_case(&incoming.method));
        let get_stream = self.script.transport != Transport::LegacySse
            && (incoming.method.eq_ignore_ascii_case("GET")
                || incoming.method.eq_ignore_ascii_case("DELETE"))
            && !wanted;
        let method = if get_stream {
            Some(incoming.method.to_ascii_uppercase())
        } else {
            method
        };
        let view = RequestView {
            origin: incoming.origin,
            method: &incoming.method,
            path: &incoming.path,
            headers: &incoming.headers,
        };
        let http_ok = expect
            .http
            .as_ref()
            .is_none_or(|pattern| http_matches(pattern, &view));
        let incidental = get_stream
            || (method
                .as_ref()
                .is_some_and(|m| self.script.incidental.contains(m))
                && message
                    .as_ref()
                    .is_some_and(|m| !matches(expect, m) || (expect.method.is_none() && !http_ok)));
        if !incidental {
            return Some(incoming);
        }
        let exchange = Exchange::new(incoming, None);
        self.log.append(&Record::Incidental {
            method: method.unwrap_or_default(),
        });
        let mut exchange = exchange;
        let request = exchange.message.clone().filter(is_rpc_request);
        match (request, exchange.respond.take()) {
            (Some(request), Some(respond)) if self.script.transport == Transport::LegacySse => {
                let id = request.get("id").cloned().unwrap_or(Value::Null);
                exchange.respond = Some(respond);
                self.exchanges.push(exchange);
                let i = self.exchanges.len() - 1;
                let result = crate::responder::incidental_result(&request, &self.script.tools);
                let _ = self.legacy_send(0, i, response(id, result));
                self.exchanges.pop();
            }
            (Some(request), Some(respond)) => {
                let id = request.get("id").cloned().unwrap_or(Value::Null);
                let message = response(
                    id,
                    crate::responder::incidental_result(&request, &self.script.tools),
                );
                let text = serde_json::to_vec(&message).unwrap_or_default();
                let summary = summarize(&text, text.len());
                let head = Head {
                    headers: vec![("content-type", "application/json")],
                    ..Head::default()
                };
                let _ =
                    self.send_response(exchange.seq, respond, head, MockBody::whole(text), summary);
                self.log.append(&Record::Sent { message });
            }
            (_, respond) => {
                exchange.respond = respond;
                self.answer_default(&mut exchange);
            }
        }
        None
    }

    /// The answer to a request the script does not answer: POST 202, DELETE 200, anything
    /// else 405.
    fn answer_default(&mut self, exchange: &mut Exchange) {
        let Some(sender) = exchange.respond.take() else {
            return;
        };
        let status = match exchange.method.as_str() {
            "POST" => 202,
            "DELETE" => 200,
            _ => 405,
        };
        let headers = match status {
            405 => vec![("allow", "POST, DELETE")],
            _ => vec![],
        };
        let head = Head {
            status: Some(status),
            headers,
            ..Head::default()
        };
        let _ = self.send_response(exchange.seq, sender, head, MockBody::empty(), String::new());
    }

    fn answer_text(&mut self, i: usize, status: u16, text: &str) {
        let Some(sender) = self.exchanges[i].respond.take() else {
            return;
        };
        let head = Head {
            status: Some(status),
            headers: vec![("content-type", "text/plain; charset=utf-8")],
            ..Head::default()
        };
        let seq = self.exchanges[i].seq;
        let summary = summarize(text.as_bytes(), text.len());
        let _ = self.send_response(seq, sender, head, MockBody::whole(text.to_owned()), summary);
    }

    /// Sends a response head (and body), logs it, records an issued session.
    fn send_response(
        &mut self,
        seq: u64,
        sender: oneshot::Sender<Response<MockBody>>,
        head: Head<'_>,
        body: MockBody,
        summary: String,
    ) -> Result<(), String> {
        let status = head.status.unwrap_or(200);
        let mut response = Response::new(body);
        *response.status_mut() =
            StatusCode::from_u16(status).map_err(|_| format!("{status} is not an HTTP status"))?;
        let mut logged = Vec::new();
        let session = head.session_id.map(|id| ("mcp-session-id", id));
        for (name, value) in head.headers.iter().copied().chain(session) {
            let name = HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes())
                .map_err(|_| format!("`{name}` is not a header name"))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| format!("the value of `{name}` is not a header value"))?;
            logged.retain(|(n, _): &(String, String)| n != name.as_str());
            logged.push((
                name.as_str().to_owned(),
                value.to_str().unwrap_or("").to_owned(),
            ));
            response.headers_mut().insert(name, value);
        }
        if let Some(id) = head.session_id {
            self.issued.push(id.to_owned());
        }
        self.log.append(&Record::HttpResponse {
            seq,
            status,
            headers: logged,
            summary,
        });
        let _ = sender.send(response);
        Ok(())
    }

    /// The latest unanswered exchange, or the one named.
    fn pending(&self, to: Option<&str>) -> Result<usize, String> {
        let found = match to {
            Some(name) => self.named(name),
            None => self.exchanges.iter().rposition(|x| x.respond.is_some()),
        };
        match found {
            Some(i) if self.exchanges[i].respond.is_some() => Ok(i),
            Some(_) => Err(format!(
                "`{}` was answered already",
                to.unwrap_or("the request")
            )),
            None => Err("no unanswered request (an `expect` takes one)".into()),
        }
    }

    fn named(&self, name: &str) -> Option<usize> {
        self.exchanges
            .iter()
            .rposition(|x| x.name.as_deref() == Some(name))
    }

    /// Expands `${primary}`, `${second}`, `${second_port}` (the second listener's port, for
    /// an origin that differs from the primary by port only), `${plain}`, for an exchange
    /// `${url}` and `${path}`, and `${id}`: the JSON-RPC id of the exchange's request (of the
    /// latest request without one), so a raw body answers whatever id the client chose.
    fn expand(&self, text: &str, exchange: Option<usize>) -> String {
        let second_port = self
            .origins
            .second
            .rsplit_once(':')
            .map_or("", |(_, port)| port);
        let mut out = text
            .replace("${primary}", &self.origins.primary)
            .replace("${second}", &self.origins.second)
            .replace("${second_port}", second_port);
        if let Some(plain) = &self.origins.plain {
            out = out.replace("${plain}", plain);
        }
        if let Some(exchange) = exchange.and_then(|i| self.exchanges.get(i)) {
            out = out
                .replace("${url}", &exchange.url)
                .replace("${path}", &exchange.path);
        }
        if out.contains("${id}") {
            let request = match exchange {
                Some(i) => self.exchanges.get(i),
                None => self.exchanges.iter().rev().find(|x| x.is_rpc_request()),
            };
            let id = request
                .and_then(|x| x.message.as_ref()?.get("id").cloned())
                .unwrap_or(Value::Null);
            out = out.replace("${id}", &id.to_string());
        }
        out
    }

    /// A script error that is no one's but the mock's (the runner reports a harness fault).
    fn script_error(&mut self, index: usize, text: &str) -> Flow {
        let text = format!("step {index}: {text}");
        let summary = format!("mcp-mock-http: {text}");
        self.log.append(&Record::Wrote {
            stream: "stderr".into(),
            summary: summarize(summary.as_bytes(), summary.len()),
        });
        Flow::Stop(PlayEnd::ScriptError, text)
    }
}

/// Whether a step answers the request an `expect` took (so the `expect` leaves it open).
fn answers(step: &Step) -> bool {
    matches!(
        step,
        Step::Reply(_)
            | Step::Respond(_)
            | Step::Redirect(_)
            | Step::Hang(_)
            | Step::Disconnect(_)
            | Step::OpenSse(_)
            | Step::Write(_)
            | Step::Endpoint(_)
    )
}

fn is_rpc_request(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_some_and(|id| !id.is_null())
}

fn parse_body(body: &Bytes) -> Option<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    serde_json::from_slice(body).ok()
}

fn pairs(map: &std::collections::BTreeMap<String, String>) -> Vec<(&str, &str)> {
    map.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect()
}

fn cut(value: &Value) -> String {
    let text = value.to_string();
    summarize(text.as_bytes(), text.len())
}

/// A request that failed its HTTP matcher, for the `Mismatch` record: `POST /mcp on
/// primary`, the headers the matcher names, and the body.
fn describe_request(incoming: &Incoming, pattern: Option<&HttpMatch>) -> Value {
    let mut headers = serde_json::Map::new();
    if let Some(pattern) = pattern {
        let named = pattern.headers.keys().chain(&pattern.absent_headers);
        for name in named {
            let name = name.to_ascii_lowercase();
            let value = incoming
                .headers
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(Value::Null, |(_, v)| Value::String(v.clone()));
            headers.insert(name, value);
        }
    }
    let request = format!(
        "{} {} on {}",
        incoming.method,
        incoming.path,
        match incoming.origin {
            Origin::Primary => "primary",
            Origin::Second => "second",
            Origin::Plain => "plain",
        }
    );
    json!({
        "request": request,
        "headers": headers,
        "body": parse_body(&incoming.body).unwrap_or_else(|| Value::String(summarize(&incoming.body, incoming.body.len()))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_answering_steps_leave_a_notification_open() {
        assert!(answers(&Step::Respond(Default::default())));
        assert!(!answers(&Step::Expect(Default::default())));
    }
}
