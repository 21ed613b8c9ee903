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
//! after a mismatch, a 500 naming it. `await_close` waits, bounded, for the client to close
//! a stream the server holds open.

mod auth;
mod requests;
mod responses;
mod streams;

use std::collections::HashSet;
use std::sync::{Arc, Condvar, Mutex};

use hyper::body::Bytes;
use hyper::Response;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot, watch};

use crate::describe::describe_step;
use crate::http::body::{MockBody, StreamWriter};
use crate::http::server::{Incoming, Refusal};
use crate::responder::message;
use crate::script::{Handshake, HttpMatch, LineEnd, Origin, Script, Step, Transport};
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
    /// `[server.auth]`: the authorizations granted and not yet exchanged for a token (two
    /// flows may run at once).
    grants: Vec<auth::Grant>,
    /// `[server.auth]`: the tokens the last `refresh_token` grant left valid, and how many
    /// such grants were answered; none until the first.
    refreshed: auth::Refreshed,
    /// `[server.auth]`: whether a client registered dynamically.
    registered: bool,
    /// `[server.auth]`: how many MCP requests the issued token was served for.
    served: usize,
    /// `[server.auth]`: the `jti` of every client assertion accepted (the latest ones).
    jtis: Vec<String>,
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
            grants: Vec::new(),
            refreshed: auth::Refreshed::default(),
            registered: false,
            served: 0,
            jtis: Vec::new(),
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
            // legacy-sse: the endpoint stream, where the frames go.
            Step::CloseStream(c) if self.script.transport == Transport::LegacySse => {
                let Some(stream) = self.legacy.as_mut().filter(|s| !s.ended) else {
                    return self.script_error(index, "close_stream: no endpoint stream open");
                };
                match c.abort {
                    true => stream.writer.abort(),
                    false => stream.writer.end(),
                }
                stream.ended = true;
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
            Step::AwaitClose(a) => self.await_close(index, a, step).await,
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
