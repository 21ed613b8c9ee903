//! Answering requests: `reply`, `respond`, `redirect`, `refuse`, `disconnect`, the default
//! answers, and the one place a response head is sent and logged.

use hyper::header::{HeaderName, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::json;
use tokio::sync::oneshot;

use crate::http::body::MockBody;
use crate::http::server::Refusal;
use crate::http::sse;
use crate::responder::{default_result, expand_env, response};
use crate::script::{Expect, Framing, Handshake, HttpMatch, Reply, Transport};
use crate::wire_log::{summarize, Record};

use super::{is_rpc_request, pairs, Exchange, Flow, Head, Player, LISTENER_FAULT};

impl Player {
    pub(super) fn reply(&mut self, index: usize, reply: &Reply, handshake: &Handshake) -> Flow {
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

    pub(super) fn respond(&mut self, index: usize, respond: &crate::script::Respond) -> Flow {
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

    pub(super) async fn redirect(
        &mut self,
        index: usize,
        redirect: &crate::script::Redirect,
    ) -> Flow {
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
    pub(super) async fn refuse(&mut self, index: usize, ms: u64) -> Flow {
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

    pub(super) fn disconnect(&mut self, index: usize, to: Option<&str>) -> Flow {
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

    /// The answer to a request the script does not answer: POST 202, DELETE 200, anything
    /// else 405.
    pub(super) fn answer_default(&mut self, exchange: &mut Exchange) {
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

    pub(super) fn answer_text(&mut self, i: usize, status: u16, text: &str) {
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
    pub(super) fn send_response(
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
}
