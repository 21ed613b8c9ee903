//! `server.jsonrpc.*`: an unknown method, a line that is not JSON, a notification.

use super::session::ctx::Ctx;
use super::session::http_ctx::HttpCtx;
use super::session::Rpc;
use crate::http::{HttpSession, Until};
use crate::outcome::{Failure, Finding};
use crate::stdio::{is_response, Session};
use serde_json::{json, Value};

/// an unknown method gets -32601.
pub const UNKNOWN_METHOD: &str = "server.jsonrpc.unknown-method";
/// a line that is not JSON gets -32700 and the server stays up.
pub const PARSE_ERROR: &str = "server.jsonrpc.parse-error";
/// a notification gets no response.
pub const NOTIFICATION_SILENT: &str = "server.jsonrpc.notification-silent";

/// The method no server has.
pub const NO_SUCH_METHOD: &str = "mcp-conformance/no-such-method";
/// The line sent where JSON is expected.
pub const NOT_JSON: &str = "this is not JSON {";
/// The notification no server knows.
pub const UNKNOWN_NOTIFICATION: &str = "notifications/mcp-conformance/probe";

/// Calls a method that does not exist.
pub async fn unknown_method(session: &mut impl Rpc) -> Finding {
    let exchange = session.request(NO_SUCH_METHOD, Some(json!({}))).await;
    if exchange.error_code() == Some(-32601) {
        return Finding::pass();
    }
    let actual = match (exchange.error_code(), exchange.result()) {
        (Some(code), _) => format!("error code {code}"),
        (None, Some(_)) => "a result".into(),
        _ if exchange.reply.is_ok() => {
            "a response with neither a result nor an integer error code".into()
        }
        _ => "no response".into(),
    };
    Finding::Fail(
        Failure::new("an error response with code -32601", actual)
            .sent(&exchange.sent)
            .reply(&exchange),
    )
}

/// In a fresh session: a line that is not JSON, then a `ping` as a fence.
pub async fn parse_error(ctx: &Ctx, revision: &str) -> Finding {
    let mut session = match ctx.open_initialized("parse-error", revision).await {
        Ok((session, _)) => session,
        Err(reason) => return Finding::skip(reason),
    };
    let finding = judge_parse_error(&mut session).await;
    session.kill().await;
    finding
}

/// On an initialized session: a line that is not JSON, then a `ping` as a fence.
pub async fn judge_parse_error(session: &mut Session) -> Finding {
    if let Err(why) = session.send_line(NOT_JSON).await {
        return Finding::Fail(Failure::new("the line is read", why).sent(NOT_JSON));
    }
    let id = json!(session.next_id());
    let fence = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    let sent = format!("{NOT_JSON}\n{fence}");
    if let Err(why) = session.send_line(&fence.to_string()).await {
        return Finding::Fail(Failure::new("the server stays up after the line", why).sent(sent));
    }
    let (before, fence_reply) = session.collect_until_response(&id).await;
    let parse_error = before
        .iter()
        .find(|m| is_response(m) && m.pointer("/error/code") == Some(&json!(-32700)));
    let received = before
        .iter()
        .map(Value::to_string)
        .chain(fence_reply.as_ref().map(Value::to_string).ok())
        .collect::<Vec<_>>();
    let received = if received.is_empty() {
        "nothing".to_string()
    } else {
        received.join("\n")
    };
    match (parse_error, fence_reply) {
        (Some(_), Ok(_)) => Finding::pass(),
        (_, Err(why)) => Finding::Fail(
            Failure::new(
                "a -32700 error, and the server still answers a ping",
                format!("the ping after the line got no answer: {why}"),
            )
            .sent(sent)
            .received(Some(received)),
        ),
        (None, Ok(_)) => Finding::Fail(
            Failure::new(
                "an error response with code -32700 (id null) before the ping's answer",
                "no -32700 error (the server stayed up)",
            )
            .sent(sent)
            .received(Some(received)),
        ),
    }
}

/// Sends an unknown notification, then a `ping` as a fence: nothing but the ping's answer
/// may come back.
pub async fn notification_silent(session: &mut Session) -> Finding {
    let notification = match session.notify(UNKNOWN_NOTIFICATION, Some(json!({}))).await {
        Ok(line) => line,
        Err(why) => return Finding::Fail(Failure::new("the notification is read", why)),
    };
    let id = json!(session.next_id());
    let fence = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
    let sent = format!("{notification}\n{fence}");
    if let Err(why) = session.send_line(&fence.to_string()).await {
        return Finding::Fail(Failure::new("the server stays up", why).sent(sent));
    }
    let (before, fence_reply) = session.collect_until_response(&id).await;
    if let Some(response) = before.iter().find(|m| is_response(m)) {
        // The id of an earlier request: a late duplicate of its answer is as likely.
        let actual = match session.method_of(response.get("id")) {
            Some(method) => format!(
                "a response before the ping's answer, with the id of the earlier `{method}` request (an answer to the notification, or a duplicate answer to `{method}`)"
            ),
            None => "a response before the ping's answer".to_string(),
        };
        return Finding::Fail(
            Failure::new("no response to a notification", actual)
                .sent(sent)
                .received(Some(response.to_string())),
        );
    }
    match fence_reply {
        Ok(_) => Finding::pass(),
        Err(why) => Finding::Fail(
            Failure::new("no response, and the server still answers a ping", why.why).sent(sent),
        ),
    }
}

/// Over HTTP, in a fresh session: a POST whose body is not JSON gets 400, and the session
/// still answers a `ping` afterwards.
pub async fn parse_error_http(ctx: &HttpCtx, revision: &str) -> Finding {
    let mut session = match ctx.open_initialized("parse-error", revision).await {
        Ok((session, _)) => session,
        Err(reason) => return Finding::skip(reason),
    };
    let headers = session.headers();
    let posted = session
        .send(
            hyper::Method::POST,
            headers,
            Some(NOT_JSON.as_bytes().to_vec()),
            Until::End,
        )
        .await;
    let (fence, _) = session.request_posted("ping", None).await;
    session.close().await;
    let expected =
        "400 Bad Request for a body that is not JSON, and the session still answers a ping";
    if posted.status() != Some(400) {
        let actual = match posted.status() {
            Some(status) => format!("status {status}"),
            None => "no response".to_string(),
        };
        return Finding::Fail(
            Failure::new(expected, actual)
                .sent(&posted.sent)
                .reply(&posted),
        );
    }
    match fence.reply {
        Ok(_) => Finding::pass(),
        Err(why) => Finding::Fail(
            Failure::new(expected, "400, but the ping after it got no answer")
                .sent(format!("{}\n{}", posted.sent, fence.sent))
                .received(Some(why.why)),
        ),
    }
}

/// Over HTTP: a notification POST gets 202 with an empty body (no JSON-RPC response).
pub async fn notification_silent_http(session: &mut HttpSession) -> Finding {
    let posted = session.notify(UNKNOWN_NOTIFICATION, Some(json!({}))).await;
    let fail = |actual: String| {
        Finding::Fail(
            Failure::new(
                "202 Accepted with an empty body (no response to a notification)",
                actual,
            )
            .sent(&posted.sent)
            .reply(&posted),
        )
    };
    match &posted.reply {
        Err(e) => fail(format!("no response: {e}")),
        Ok(reply) if reply.messages.iter().any(is_response) => fail("a JSON-RPC response".into()),
        Ok(reply) if reply.status != 202 => fail(format!("status {}", reply.status)),
        Ok(reply) if !String::from_utf8_lossy(&reply.body).trim().is_empty() => {
            fail("202 with a body".into())
        }
        Ok(_) => Finding::pass(),
    }
}
