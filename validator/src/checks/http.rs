//! `server.http.*`: the Streamable HTTP checks, each on a session of its own (its own
//! `initialize`, its own `Mcp-Session-Id`, see [`crate::checks::plan::http`]), so one
//! check's misbehaviour cannot disturb another's.

use crate::http::{
    with, without, Handshake, HttpSession, Posted, Until, PROTOCOL_VERSION_HEADER_SINCE,
};
use crate::outcome::{Failure, Finding};
use hyper::Method;
use serde_json::json;

/// a notification POST gets 202.
pub const NOTIFICATION_202: &str = "server.http.notification-202";
/// a POST without both Accept types gets 406.
pub const ACCEPT_REQUIRED: &str = "server.http.accept-required";
/// a session id is visible ASCII.
pub const SESSION_ID_ASCII: &str = "server.http.session-id-ascii";
/// a request with a session id the server never issued gets 404.
pub const UNKNOWN_SESSION_404: &str = "server.http.unknown-session-404";
/// a non-initialize request without a session id, when sessions are in use, gets 400.
pub const MISSING_SESSION_400: &str = "server.http.missing-session-400";
/// DELETE ends the session (then 404), or answers 405.
pub const DELETE: &str = "server.http.delete";
/// an unsupported `MCP-Protocol-Version` gets 400.
pub const PROTOCOL_VERSION_HEADER: &str = "server.http.protocol-version-header";
/// a request with a foreign `Origin` gets 403.
pub const ORIGIN: &str = "server.http.origin";
/// GET answers an SSE stream or 405.
pub const GET_STREAM: &str = "server.http.get-stream";
/// a JSON array is rejected from 2025-06-18 on.
pub const BATCH: &str = "server.http.batch";

/// The session id sent where the server never issued one.
pub const NEVER_ISSUED: &str = "mcp-conformance-never-issued-0f3c9a";
/// The `MCP-Protocol-Version` no server supports.
pub const UNSUPPORTED_VERSION: &str = "1999-01-01";
/// The foreign `Origin`.
pub const FOREIGN_ORIGIN: &str = "https://mcp-conformance.invalid";
/// The revision from which a foreign `Origin` must get 403.
pub const ORIGIN_MUST_SINCE: &str = "2025-11-25";
/// The revision from which JSON-RPC batches are not part of the protocol.
pub const NO_BATCH_SINCE: &str = "2025-06-18";

/// A failure showing one HTTP exchange.
fn failed(expected: impl Into<String>, posted: &Posted) -> Finding {
    let actual = match &posted.reply {
        Ok(reply) => format!("status {}", reply.status),
        Err(e) => format!("no response: {e}"),
    };
    Finding::Fail(
        Failure::new(expected, actual)
            .sent(&posted.sent)
            .reply(&posted),
    )
}

/// A `ping` request body with the session's next id.
fn ping_body(session: &mut HttpSession) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": session.next_id(), "method": "ping"})
        .to_string()
        .into_bytes()
}

/// POSTs a `ping` with `headers`, reading the whole answer.
async fn post_ping(session: &mut HttpSession, headers: Vec<(String, String)>) -> Posted {
    let body = ping_body(session);
    session
        .send(Method::POST, headers, Some(body), Until::End)
        .await
}

fn no_sessions() -> Finding {
    Finding::skip("the server issued no Mcp-Session-Id: it does not use sessions")
}

/// The handshake's `notifications/initialized` POST got 202.
pub fn notification_202(handshake: &Handshake) -> Finding {
    let Some(posted) = &handshake.initialized else {
        return Finding::HarnessFault {
            reason: "the handshake sent no notifications/initialized".into(),
        };
    };
    match posted.status() {
        Some(202) => Finding::pass(),
        _ => failed(
            "202 Accepted for the `notifications/initialized` POST",
            posted,
        ),
    }
}

/// A POST accepting only JSON, then one accepting only SSE: each gets 406.
pub async fn accept_required(session: &mut HttpSession) -> Finding {
    for accept in ["application/json", "text/event-stream"] {
        let posted = post_ping(session, with(session.headers(), "Accept", accept)).await;
        if posted.status() != Some(406) {
            return failed(
                format!("406 Not Acceptable for a POST with `Accept: {accept}` alone"),
                &posted,
            );
        }
    }
    Finding::pass_with("406 for application/json alone and for text/event-stream alone")
}

/// Every session id issued is visible ASCII (0x21–0x7E).
pub fn judge_session_ids(issued: &[(String, String)]) -> Finding {
    if issued.is_empty() {
        return no_sessions();
    }
    if let Some((label, id)) = issued
        .iter()
        .find(|(_, id)| id.is_empty() || !id.bytes().all(|b| (0x21..=0x7e).contains(&b)))
    {
        return Finding::Fail(
            Failure::new(
                "an Mcp-Session-Id of visible ASCII characters only (0x21 to 0x7E)",
                format!("session `{label}` was issued {id:?}"),
            )
            .received(Some(format!("Mcp-Session-Id: {id}"))),
        );
    }
    Finding::pass_with(format!("{} session id(s)", issued.len()))
}

/// A request with a session id the server never issued gets 404.
pub async fn unknown_session(session: &mut HttpSession) -> Finding {
    if session.session_id.is_none() {
        return no_sessions();
    }
    let posted = post_ping(
        session,
        with(session.headers(), "Mcp-Session-Id", NEVER_ISSUED),
    )
    .await;
    match posted.status() {
        Some(404) => Finding::pass(),
        _ => failed(
            "404 Not Found for a session id the server never issued",
            &posted,
        ),
    }
}

/// A request without the session id gets 400.
pub async fn missing_session(session: &mut HttpSession) -> Finding {
    if session.session_id.is_none() {
        return no_sessions();
    }
    let posted = post_ping(session, without(session.headers(), "Mcp-Session-Id")).await;
    match posted.status() {
        Some(400) => Finding::pass(),
        _ => failed(
            "400 Bad Request for a request without the Mcp-Session-Id the server issued",
            &posted,
        ),
    }
}

/// DELETE ends the session (then a request with its id gets 404), or answers 405.
pub async fn delete(session: &mut HttpSession) -> Finding {
    if session.session_id.is_none() {
        return no_sessions();
    }
    let headers = without(session.headers(), "Content-Type");
    let deleted = session
        .send(Method::DELETE, headers, None, Until::End)
        .await;
    let expected = "DELETE answered 2xx, then 404 for a request with the ended session's id; or DELETE answered 405";
    match deleted.status() {
        Some(405) => return Finding::pass_with("DELETE answered 405: clients cannot end sessions"),
        Some(200..=299) => session.mark_ended(),
        _ => return failed(expected, &deleted),
    }
    let after = post_ping(session, session.headers()).await;
    if after.status() == Some(404) {
        return Finding::pass();
    }
    let actual = match after.status() {
        Some(status) => {
            format!(
                "DELETE answered {}, then the ended session's id got {status}",
                deleted.status().unwrap_or(0)
            )
        }
        None => format!(
            "DELETE answered {}, then no response",
            deleted.status().unwrap_or(0)
        ),
    };
    Finding::Fail(
        Failure::new(expected, actual)
            .sent(format!("{}\n{}", deleted.sent, after.sent))
            .received(Some(format!(
                "{}\n{}",
                deleted.received(),
                after.received()
            )))
            .timed(deleted.ran_out()),
    )
}

/// An unsupported `MCP-Protocol-Version` gets 400 (the header exists from 2025-06-18 on).
pub async fn protocol_version_header(session: &mut HttpSession, negotiated: &str) -> Finding {
    if negotiated < PROTOCOL_VERSION_HEADER_SINCE {
        return Finding::skip(format!(
            "the session negotiated {negotiated}; MCP-Protocol-Version exists from {} on",
            PROTOCOL_VERSION_HEADER_SINCE
        ));
    }
    let posted = post_ping(
        session,
        with(
            session.headers(),
            "MCP-Protocol-Version",
            UNSUPPORTED_VERSION,
        ),
    )
    .await;
    match posted.status() {
        Some(400) => Finding::pass(),
        _ => failed(
            format!("400 Bad Request for `MCP-Protocol-Version: {UNSUPPORTED_VERSION}`"),
            &posted,
        ),
    }
}

/// A request with a foreign `Origin` gets 403.
pub async fn origin(session: &mut HttpSession) -> Finding {
    let posted = post_ping(session, with(session.headers(), "Origin", FOREIGN_ORIGIN)).await;
    match posted.status() {
        Some(403) => Finding::pass(),
        _ => failed(
            format!("403 Forbidden for `Origin: {FOREIGN_ORIGIN}`"),
            &posted,
        ),
    }
}

/// GET answers an SSE stream or 405 (only the head is read; the stream is then closed).
pub async fn get_stream(session: &mut HttpSession) -> Finding {
    let headers = with(
        without(session.headers(), "Content-Type"),
        "Accept",
        "text/event-stream",
    );
    let posted = session.send(Method::GET, headers, None, Until::Head).await;
    match &posted.reply {
        Ok(reply) if reply.status == 405 => Finding::pass_with("405: no GET stream"),
        Ok(reply) if reply.status == 200 && reply.media_type() == "text/event-stream" => {
            Finding::pass_with("200 text/event-stream")
        }
        _ => failed(
            "200 with Content-Type text/event-stream, or 405 Method Not Allowed",
            &posted,
        ),
    }
}

/// A JSON array is rejected (a 4xx status, or only error responses) once batches are gone.
pub async fn batch(session: &mut HttpSession, negotiated: &str) -> Finding {
    if negotiated < NO_BATCH_SINCE {
        return Finding::skip(format!(
            "the session negotiated {negotiated}; batches are allowed before {NO_BATCH_SINCE}"
        ));
    }
    let id = session.next_id();
    let body = json!([{"jsonrpc": "2.0", "id": id, "method": "ping"}])
        .to_string()
        .into_bytes();
    let posted = session
        .send(Method::POST, session.headers(), Some(body), Until::End)
        .await;
    let rejected = match &posted.reply {
        Ok(reply) if (400..500).contains(&reply.status) => true,
        Ok(reply) if reply.is_success() => {
            reply.messages.iter().any(|m| m.get("error").is_some())
                && !reply.messages.iter().any(|m| m.get("result").is_some())
        }
        _ => false,
    };
    if rejected {
        return Finding::pass();
    }
    let actual = match &posted.reply {
        Ok(reply) if reply.messages.iter().any(|m| m.get("result").is_some()) => {
            format!("status {}, the batched ping answered", reply.status)
        }
        Ok(reply) => format!("status {}", reply.status),
        Err(e) => format!("no response: {e}"),
    };
    Finding::Fail(
        Failure::new(
            format!("a JSON-RPC batch (a JSON array) rejected with a 4xx status or an error response (negotiated {negotiated})"),
            actual,
        )
        .sent(&posted.sent)
        .reply(&posted),
    )
}

/// SSE event ids are unique across the session's streams.
pub const SSE_EVENT_IDS: &str = "server.http.sse-event-ids";
/// A resumed stream replays no other stream's messages.
pub const SSE_RESUME: &str = "server.http.sse-resume";
/// An SSE stream starts with a priming event (an event id and empty data).
pub const SSE_PRIMING: &str = "server.http.sse-priming";
/// A stream closed before its response carries a `retry` field first.
pub const SSE_RETRY: &str = "server.http.sse-retry";
/// The resumability checks, judged on one session's streams.
pub const SSE_CHECKS: &[&str] = &[SSE_EVENT_IDS, SSE_RESUME, SSE_PRIMING, SSE_RETRY];
/// The revision Streamable HTTP (and its event ids and `Last-Event-ID`) came with.
pub const RESUMABLE_SINCE: &str = "2025-03-26";
/// The revision from which a stream is primed and a `retry` field precedes an early close.
pub const PRIMING_SINCE: &str = "2025-11-25";

/// One POST's SSE stream: the request's id, what was read, and its events.
struct Stream {
    id: serde_json::Value,
    posted: Posted,
    events: Vec<crate::http::Event>,
}

impl Stream {
    /// Whether the answer to the request came on the stream.
    fn answered(&self) -> bool {
        self.posted
            .reply
            .as_ref()
            .is_ok_and(|r| r.response_to(&self.id).is_some())
    }

    /// Whether the server ended the body (not the bound, not the byte limit) before the
    /// response: the connection closed without terminating the stream.
    fn closed_early(&self) -> bool {
        self.posted
            .reply
            .as_ref()
            .is_ok_and(|r| r.cut.is_none() && !r.timed_out && !r.over_limit)
            && !self.answered()
    }
}

/// The resumability checks (`wanted` among [`SSE_CHECKS`]) on a session of their own: two
/// pings, each POST's SSE stream read; then, when a stream carried an event id, a GET with
/// `Last-Event-ID` set to its first one. Each check skips, with the reason, where the server
/// offers nothing to judge (no SSE stream, no event id, no stream closed early, no GET).
pub async fn sse(
    session: &mut HttpSession,
    negotiated: &str,
    wanted: &[&'static str],
) -> Vec<(&'static str, Finding)> {
    let all = |finding: Finding| wanted.iter().map(|id| (*id, finding.clone())).collect();
    if negotiated < RESUMABLE_SINCE {
        return all(Finding::skip(format!(
            "the session negotiated {negotiated}; SSE event ids and resumption come with Streamable HTTP in {RESUMABLE_SINCE}"
        )));
    }
    let mut streams = Vec::new();
    for _ in 0..2 {
        let id = json!(session.next_id());
        let (_, posted) = session
            .call(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
            .await;
        let events = match &posted.reply {
            Ok(reply) if reply.is_sse() => crate::http::events(&reply.body),
            _ => Vec::new(),
        };
        streams.push(Stream { id, posted, events });
    }
    let sse: Vec<&Stream> = streams
        .iter()
        .filter(|s| s.posted.reply.as_ref().is_ok_and(|r| r.is_sse()))
        .collect();
    if sse.is_empty() {
        return all(Finding::skip(
            "the server answered each ping without an SSE stream: no stream to check",
        ));
    }
    let mut out = Vec::new();
    for id in wanted {
        let finding = match *id {
            SSE_EVENT_IDS => judge_event_ids(&sse),
            SSE_PRIMING if negotiated < PRIMING_SINCE => Finding::skip(format!(
                "the session negotiated {negotiated}; priming events come with {PRIMING_SINCE}"
            )),
            SSE_PRIMING => judge_priming(&sse),
            SSE_RETRY if negotiated < PRIMING_SINCE => Finding::skip(format!(
                "the session negotiated {negotiated}; the `retry` field before a close comes with {PRIMING_SINCE}"
            )),
            SSE_RETRY => judge_retry(&sse),
            SSE_RESUME => resume(session, &streams).await,
            other => Finding::HarnessFault {
                reason: format!("{other} is not an SSE check"),
            },
        };
        out.push((*id, finding));
    }
    out
}

/// Every event id on the streams is distinct ("globally unique across all streams within
/// that session").
fn judge_event_ids(sse: &[&Stream]) -> Finding {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for (index, stream) in sse.iter().enumerate() {
        for id in stream.events.iter().filter_map(|e| e.id.as_deref()) {
            if id.is_empty() {
                continue; // an empty id resets the last event id; it names no event
            }
            if let Some((_, first)) = seen.iter().find(|(s, _)| *s == id) {
                let actual = if *first == index {
                    format!("event id `{id}` twice on one stream")
                } else {
                    format!("event id `{id}` on two streams of the session")
                };
                return Finding::Fail(
                    Failure::new(
                        "every SSE event id unique across the session's streams",
                        actual,
                    )
                    .sent(&stream.posted.sent)
                    .reply(&stream.posted),
                );
            }
            seen.push((id, index));
        }
    }
    if seen.is_empty() {
        return Finding::skip("no SSE event carried an id (ids are optional): no id to compare");
    }
    Finding::pass_with(format!(
        "{} event id(s) over {} stream(s), all distinct",
        seen.len(),
        sse.len()
    ))
}

/// Each stream opens with an event that has an id and empty data.
fn judge_priming(sse: &[&Stream]) -> Finding {
    for stream in sse {
        let primed = stream.events.first().is_some_and(|e| {
            e.id.as_deref().is_some_and(|id| !id.is_empty())
                && e.data.as_deref().is_none_or(str::is_empty)
        });
        if !primed {
            let actual = match stream.events.first() {
                None => "no event on the stream".to_string(),
                Some(e) if e.id.as_deref().is_none_or(str::is_empty) => {
                    "the first event has no event id".to_string()
                }
                Some(_) => "the first event carries data (a message), not an empty priming event"
                    .to_string(),
            };
            return Finding::Fail(
                Failure::new(
                    "an SSE stream that opens with an event of an event id and empty data",
                    actual,
                )
                .sent(&stream.posted.sent)
                .reply(&stream.posted),
            );
        }
    }
    Finding::pass_with(format!("{} stream(s), each primed", sse.len()))
}

/// A stream the server closed before its response carries a `retry` field.
fn judge_retry(sse: &[&Stream]) -> Finding {
    let early: Vec<&&Stream> = sse.iter().filter(|s| s.closed_early()).collect();
    if early.is_empty() {
        return Finding::skip("the server closed no stream before its response: no close to judge");
    }
    for stream in &early {
        if !stream.events.iter().any(|e| e.retry) {
            return Finding::Fail(
                Failure::new(
                    "an SSE event with a `retry` field before the server closes the connection",
                    "the stream closed before the response, without a `retry` field",
                )
                .sent(&stream.posted.sent)
                .reply(&stream.posted),
            );
        }
    }
    Finding::pass_with(format!(
        "{} stream(s) closed before the response, each with `retry`",
        early.len()
    ))
}

/// Resumes the first stream that carried an event id from that id (a GET with
/// `Last-Event-ID`), and fails if the resumed stream carries a response of another stream.
async fn resume(session: &mut HttpSession, streams: &[Stream]) -> Finding {
    let Some((index, last_id)) = streams.iter().enumerate().find_map(|(i, s)| {
        s.events
            .iter()
            .find_map(|e| e.id.clone().filter(|id| !id.is_empty()))
            .map(|id| (i, id))
    }) else {
        return Finding::skip("no SSE event carried an id: no stream to resume");
    };
    let own = &streams[index];
    let others: Vec<serde_json::Value> = streams
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != index)
        .map(|(_, s)| s.id.clone())
        .collect();
    let headers = with(
        with(
            without(session.headers(), "Content-Type"),
            "Accept",
            "text/event-stream",
        ),
        "Last-Event-ID",
        &last_id,
    );
    let until = Until::Replay(
        std::iter::once(own.id.clone())
            .chain(others.clone())
            .collect(),
    );
    let posted = session.send(Method::GET, headers, None, until).await;
    let reply = match &posted.reply {
        Ok(reply) if reply.is_success() && reply.is_sse() => reply,
        Ok(reply) => {
            return Finding::skip(format!(
                "the GET with `Last-Event-ID` answered {} ({}): the server does not resume streams (allowed)",
                reply.status,
                reply.media_type()
            ))
        }
        Err(e) => {
            return Finding::skip(format!(
                "the GET with `Last-Event-ID` got no answer ({e}): nothing replayed to judge"
            ))
        }
    };
    if let Some(stray) = reply
        .messages
        .iter()
        .find(|m| others.iter().any(|id| crate::stdio::is_response_to(m, id)))
    {
        return Finding::Fail(
            Failure::new(
                format!(
                    "the stream of request {} resumed after event `{last_id}` with its own messages only",
                    own.id
                ),
                format!(
                    "the response to request {}, sent on another stream, replayed on it",
                    stray.get("id").cloned().unwrap_or_default()
                ),
            )
            .sent(&posted.sent)
            .reply(&posted),
        );
    }
    Finding::pass_with(format!(
        "resumed after event `{last_id}`: {} message(s) replayed, none of another stream",
        reply.messages.len()
    ))
}
