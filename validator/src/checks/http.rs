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
