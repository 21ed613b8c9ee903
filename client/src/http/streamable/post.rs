//! One POST of the Streamable HTTP transport: the transport's headers, the session id
//! captured, a non-success status made an error, and a call's answer awaited.

use hyper::body::Bytes;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Method, StatusCode};
use serde::Serialize;
use serde_json::Value;

use crate::http::wire::{Ctx, Outgoing, Reply};
use crate::jsonrpc::{classify, ErrorObject, Incoming, Request};
use crate::{Breakage, McpError, Profile};

use super::{
    lock, request_headers, StreamableTransport, ACCEPT_BOTH, NAME_HEADER, SESSION_HEADER,
    VERSION_HEADER,
};

impl StreamableTransport {
    /// POSTs one message with the transport's headers; captures the session id, turns a
    /// 404 on a session into "expired" and any other non-success status into an error.
    pub(super) async fn post<T: Serialize>(
        &self,
        message: &T,
        ctx: &Ctx,
    ) -> Result<Reply, McpError> {
        let body = serde_json::to_vec(message).map_err(McpError::Serialization)?;
        let (session, version, stateless) = {
            let state = lock(&self.state);
            (
                state.session.clone(),
                state.version_header.clone(),
                state.stateless,
            )
        };
        let accept = match self.broken(Breakage::AcceptJsonOnly) {
            true => "application/json",
            false => ACCEPT_BOTH,
        };
        let mut extra = vec![
            (header::ACCEPT, HeaderValue::from_static(accept)),
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
        ];
        if stateless {
            extra.extend(request_headers(&body));
            if self.broken(Breakage::NameEncodedOnlyNonAscii) {
                plain_ascii_name(&mut extra, &body);
            }
        }
        let session = session.filter(|_| !self.broken(Breakage::SessionIdNotSent));
        // A notification has no id: the switch leaves the header to requests.
        let version = version.filter(|_| {
            !(self.broken(Breakage::VersionHeaderOnRequestsOnly)
                && serde_json::from_slice::<Value>(&body).is_ok_and(|m| m.get("id").is_none()))
        });
        if let Some(session) = &session {
            if let Ok(value) = HeaderValue::from_str(session) {
                extra.push((HeaderName::from_static(SESSION_HEADER), value));
            }
        }
        if let Some(version) = version {
            extra.push((HeaderName::from_static(VERSION_HEADER), version));
        }
        let last_event_id = lock(&self.state).last_event_id.clone();
        if let Some(value) = last_event_id.and_then(|id| HeaderValue::from_str(&id).ok()) {
            extra.push((HeaderName::from_static("last-event-id"), value));
        }
        let out = Outgoing {
            method: Method::POST,
            url: &self.ep.url,
            body: Some(Bytes::from(body)),
            extra,
        };
        let reply = self.ep.send(&out, ctx).await?;
        if reply.status.is_success()
            && stateless
            && !self.broken(Breakage::SessionCapturedWhenStateless)
        {
            return Ok(reply);
        }
        // A modern server's errors come as 400 (header mismatch, missing capability, unsupported
        // version) or 404 (unknown method) with a JSON-RPC body.
        if stateless
            && matches!(
                reply.status,
                StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND
            )
        {
            return Err(self.modern_error(reply, ctx).await);
        }
        if reply.status.is_success() {
            let given = reply
                .headers
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok());
            if let Some(id) =
                given.filter(|id| !id.is_empty() && id.bytes().all(|b| (0x21..=0x7e).contains(&b)))
            {
                lock(&self.state).session = Some(id.to_string());
            }
            return Ok(reply);
        }
        if reply.status == StatusCode::NOT_FOUND && session.is_some() {
            let mut state = lock(&self.state);
            // The test switch `ExpiredSessionKept` keeps sending the dead session.
            if state.session == session && !self.broken(Breakage::ExpiredSessionKept) {
                state.session = None;
                state.reinit = self.profile == Profile::Strict;
            }
            drop(state);
            let next = if self.profile == Profile::Strict {
                "the next call starts a new session"
            } else {
                "a new client is needed"
            };
            let message = format!("{}: 404 Not Found: the MCP session expired (the server no longer knows it); {next}", ctx.prefix);
            return Err(McpError::Http {
                status: 404,
                message,
            });
        }
        let note = if reply.status == StatusCode::UNAUTHORIZED && self.ep.has_token_provider() {
            " (after one token refresh)"
        } else {
            ""
        };
        Err(self.ep.status_error(reply, ctx, note).await)
    }

    /// 2026-07-28: a 400 or 404 whose body is a JSON-RPC error (a modern server's header
    /// mismatch, unsupported version or unknown method) is that error; else an `http` error.
    pub(super) async fn modern_error(&self, mut reply: Reply, ctx: &Ctx) -> McpError {
        if reply.media_type().as_deref() == Some("application/json") {
            let status = reply.status;
            let body = match self.ep.read_to_end(&mut reply, ctx).await {
                Ok(body) => body,
                Err(e) => return e,
            };
            if let Incoming::Response {
                outcome: Err(e), ..
            } = classify(&body)
            {
                let message = self.ep.scrub(&e.message, Some(&reply.url));
                return McpError::JsonRpc {
                    code: e.code,
                    message,
                    data: e.data,
                };
            }
            let text = String::from_utf8_lossy(&body);
            let message = crate::http::wire::status_text(
                &ctx.prefix,
                status,
                "",
                &self.ep.quote(&text, &reply.url),
                &reply.url,
            );
            return McpError::Http {
                status: status.as_u16(),
                message,
            };
        }
        self.ep.status_error(reply, ctx, "").await
    }

    /// One request and its answer: a JSON body read to its end, or SSE frames read until the
    /// one carrying the response.
    pub(super) async fn call(
        &self,
        method: &str,
        id: Value,
        params: Option<Value>,
        ctx: &Ctx,
    ) -> Result<Result<Value, ErrorObject>, McpError> {
        self.call_marking(method, id, params, ctx, &mut false).await
    }

    /// [`call`](Self::call), setting `broken` when an SSE response stream ended or broke
    /// before the response.
    pub(super) async fn call_marking(
        &self,
        method: &str,
        id: Value,
        params: Option<Value>,
        ctx: &Ctx,
        broken: &mut bool,
    ) -> Result<Result<Value, ErrorObject>, McpError> {
        let mut reply = self
            .post(&Request::new(id.clone(), method, params), ctx)
            .await?;
        let outcome = if reply.media_type().as_deref() == Some("text/event-stream") {
            self.read_sse(&mut reply, &id, ctx, broken).await?
        } else {
            self.read_json(&mut reply, &id, ctx).await?
        };
        // A JSON-RPC error message is quoted as sent, less the URL's key-like parts.
        Ok(outcome.map_err(|mut e| {
            if !self.broken(Breakage::NoJsonRpcErrorScrub) {
                e.message = self.ep.scrub(&e.message, Some(&reply.url));
            }
            e
        }))
    }

    pub(super) fn proxy_answered(&self, status: StatusCode, ctx: &Ctx) -> McpError {
        ctx.protocol(format!(
            "the server answered '{}' with an empty {} response; a proxy may have answered instead of the MCP server",
            ctx.method,
            status.as_u16()
        ))
    }
}

/// Test switch `NameEncodedOnlyNonAscii`: a name of ASCII bytes only goes in `Mcp-Name` as
/// is — spaces at its ends, control characters and the look of the encoded form included —
/// as a client that encodes only what is not ASCII would send it.
fn plain_ascii_name(headers: &mut [(HeaderName, HeaderValue)], body: &[u8]) {
    let name = serde_json::from_slice::<Value>(body).ok().and_then(|m| {
        m.pointer("/params/name")
            .and_then(Value::as_str)
            .map(String::from)
    });
    let Some(plain) = name
        .filter(|n| n.is_ascii())
        .and_then(|n| HeaderValue::from_str(&n).ok())
    else {
        return;
    };
    for (header, value) in headers.iter_mut() {
        if header.as_str() == NAME_HEADER {
            *value = plain.clone();
        }
    }
}
