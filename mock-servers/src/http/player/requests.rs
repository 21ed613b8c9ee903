//! Taking requests: the handshake, `expect` and its matching, incidental traffic, and the
//! defaults served once the script ends or stops.

use serde_json::{json, Value};

use crate::describe::describe_expect;
use crate::http::body::MockBody;
use crate::http::server::{Incoming, MAX_BODY};
use crate::matcher::{http_matches, matches, RequestView};
use crate::responder::{default_result, response};
use crate::script::{Expect, Handshake, Reply, Step, Transport};
use crate::wire_log::{summarize, Record};

use super::{
    answers, cut, describe_request, is_rpc_request, parse_body, Exchange, Flow, Head, PlayEnd,
    Player,
};

impl Player {
    pub(super) async fn handshake(&mut self, index: usize, handshake: &Handshake) -> Flow {
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

    pub(super) async fn discover(
        &mut self,
        index: usize,
        discover: &crate::script::Discover,
    ) -> Flow {
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

    pub(super) async fn expect(
        &mut self,
        index: usize,
        expect: &Expect,
        next: Option<&Step>,
    ) -> Flow {
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

    /// The next request, logged; a request bearing an expired session gets 404 and one over
    /// the size limit 413, and neither is returned. `None` when the listeners are gone.
    pub(super) async fn next_request(&mut self) -> Option<Incoming> {
        loop {
            let incoming = self.requests.recv().await?;
            let body = match (incoming.too_large, parse_body(&incoming.body)) {
                (true, _) => Value::String(format!("[a body over the {MAX_BODY}-byte limit]")),
                (false, Some(json)) => json,
                (false, None) if incoming.body.is_empty() => Value::Null,
                (false, None) if is_whole_form(&incoming) => {
                    Value::String(String::from_utf8_lossy(&incoming.body).into_owned())
                }
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
            let Some(incoming) = self.auth_answer(incoming) else {
                continue;
            };
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

    pub(super) async fn serve_defaults(&mut self) {
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

    pub(super) async fn serve_stopped(&mut self, reason: &str) {
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
    pub(super) fn incidental(&mut self, expect: &Expect, incoming: Incoming) -> Option<Incoming> {
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
}

/// The longest form body logged whole; a longer one is summarized as any other text.
pub const MAX_WHOLE_FORM: usize = 8 * 1024;

/// Whether `incoming`'s body is logged whole: a form (`application/x-www-form-urlencoded`,
/// a token request) of at most [`MAX_WHOLE_FORM`] bytes, so the credentials it carries (a
/// long client assertion) are known in full to whoever reads the log for them.
fn is_whole_form(incoming: &Incoming) -> bool {
    incoming.body.len() <= MAX_WHOLE_FORM
        && incoming
            .headers
            .iter()
            .any(|(n, v)| n == "content-type" && v.starts_with("application/x-www-form-urlencoded"))
}
