//! Reading a Streamable HTTP reply: a plain JSON body, or an SSE stream read frame by
//! frame until the one carrying the answer, the server's own requests answered on the way.

use std::sync::atomic::Ordering;

use serde_json::Value;

use crate::http::sse::{SseParser, TooLong};
use crate::http::wire::{Ctx, Reply};
use crate::jsonrpc::{answer_server_request, classify, ids_match, ErrorObject, Incoming};
use crate::{Breakage, McpError, Profile};

use super::StreamableTransport;

impl StreamableTransport {
    pub(super) async fn read_json(
        &self,
        reply: &mut Reply,
        id: &Value,
        ctx: &Ctx,
    ) -> Result<Result<Value, ErrorObject>, McpError> {
        let body = self.ep.read_to_end(reply, ctx).await?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(self.proxy_answered(reply.status, ctx));
        }
        let media = reply.media_type().unwrap_or_else(|| "none".into());
        match classify(&body) {
            Incoming::Response { id: got, outcome } if self.matches(id, &got) => Ok(outcome),
            Incoming::Response { id: got, .. } => Err(ctx.protocol(format!(
                "the response to '{}' carries id {got}, not {id}",
                ctx.method
            ))),
            Incoming::Request { method, .. } | Incoming::Notification { method, .. } => Err(ctx
                .protocol(format!(
                    "the server answered '{}' with a '{method}' message instead of the response",
                    ctx.method
                ))),
            Incoming::NotJson(_) => Err(ctx.protocol(format!(
                "the response to '{}' is not JSON (content type {media}): {}",
                ctx.method,
                self.ep.quote(&String::from_utf8_lossy(&body), &reply.url)
            ))),
            Incoming::Invalid(why) => Err(ctx.protocol(format!(
                "the response to '{}' is not a JSON-RPC response: {why}",
                ctx.method
            ))),
        }
    }

    pub(super) fn matches(&self, sent: &Value, got: &Value) -> bool {
        self.broken(Breakage::AnyIdAccepted) || ids_match(sent, got)
    }

    /// Reads SSE frames until the one answering `id`, then drops the stream: frames after it
    /// are never read.
    pub(super) async fn read_sse(
        &self,
        reply: &mut Reply,
        id: &Value,
        ctx: &Ctx,
        broken: &mut bool,
    ) -> Result<Result<Value, ErrorObject>, McpError> {
        let mut parser = match self.broken(Breakage::SseCrKept) {
            true => SseParser::new(self.ep.max_body).cr_kept(),
            false => SseParser::new(self.ep.max_body),
        };
        if self.broken(Breakage::LastEventIdReplayed) {
            parser = parser.ids_kept();
        }
        let mut seen = 0usize;
        let to_end = self.broken(Breakage::StreamReadToEnd);
        let mut found = None;
        let idle_from = tokio::time::Instant::now() + self.ep.idle;
        loop {
            while let Some(event) = parser.next_event() {
                if let Some(Some(last)) = &parser.last_id {
                    super::lock(&self.state).last_event_id = Some(last.clone());
                }
                if let Some(outcome) = self.on_frame(&event.data, id, reply, ctx).await? {
                    if !to_end {
                        return Ok(outcome);
                    }
                    found.get_or_insert(outcome);
                }
            }
            let chunk = match self.broken(Breakage::IdleNotReset) {
                true => tokio::time::timeout_at(idle_from, self.ep.next_chunk(reply, ctx))
                    .await
                    .unwrap_or_else(|_| {
                        Err(McpError::Timeout(format!(
                            "{}: idle read timeout while reading the response to '{}'",
                            ctx.prefix, ctx.method
                        )))
                    }),
                false => self.ep.next_chunk(reply, ctx).await,
            };
            *broken = chunk
                .as_ref()
                .is_err_and(|e| e.kind() != crate::ErrorKind::Timeout)
                || matches!(chunk, Ok(None));
            match chunk? {
                Some(chunk) => {
                    seen += chunk.len();
                    parser.feed(&chunk).map_err(|TooLong(_)| {
                        ctx.protocol(format!(
                            "an SSE event in the response to '{}' is larger than {} bytes (max_body_bytes); refused",
                            ctx.method, self.ep.max_body
                        ))
                    })?;
                }
                None if seen == 0 => return Err(self.proxy_answered(reply.status, ctx)),
                None => {
                    if let Some(outcome) = found {
                        return Ok(outcome);
                    }
                    let tail = if parser.unterminated() {
                        " (an unterminated event at its end was discarded)"
                    } else {
                        ""
                    };
                    return Err(ctx.protocol(format!(
                        "the SSE stream ended before the response to '{}'{tail}",
                        ctx.method
                    )));
                }
            }
        }
    }

    /// One SSE frame of a call's stream: the response (returned), a notification (counted
    /// or skipped), a server request (answered or not, by profile).
    pub(super) async fn on_frame(
        &self,
        data: &[u8],
        id: &Value,
        reply: &Reply,
        ctx: &Ctx,
    ) -> Result<Option<Result<Value, ErrorObject>>, McpError> {
        if data.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        match classify(data) {
            Incoming::Response { id: got, outcome } if self.matches(id, &got) => {
                return Ok(Some(outcome))
            }
            Incoming::Response { id: got, .. } => {
                tracing::debug!(target: "mcp_refclient", "skipped a response for id {got}: not the call's");
            }
            Incoming::Notification { method, .. }
                if self.broken(Breakage::SseNotificationFailsCall) =>
            {
                return Err(ctx.protocol(format!(
                    "the server answered '{}' with a '{method}' message instead of the response",
                    ctx.method
                )))
            }
            Incoming::Notification { method, .. } => {
                if method == "notifications/tools/list_changed"
                    && !self.broken(Breakage::NoListChangedCount)
                {
                    self.list_changed.fetch_add(1, Ordering::SeqCst);
                } else {
                    tracing::debug!(target: "mcp_refclient", "skipped notification '{method}'");
                }
            }
            Incoming::Request {
                id: request_id,
                method,
                ..
            } => self.server_request(request_id, &method).await,
            Incoming::NotJson(_) => {
                return Err(ctx.protocol(format!(
                    "an SSE event in the response to '{}' is not JSON: {}",
                    ctx.method,
                    self.ep.quote(&String::from_utf8_lossy(data), &reply.url)
                )))
            }
            Incoming::Invalid(why) => {
                tracing::warn!(target: "mcp_refclient", origin = %self.ep.origin, "skipped an invalid JSON-RPC message: {why}");
            }
        }
        Ok(None)
    }

    /// A server request on a call's stream: yoagent leaves it unanswered; strict and kova
    /// answer as over stdio (ping with `{}`, others -32601), POSTing the response.
    pub(super) async fn server_request(&self, id: Value, method: &str) {
        if self.profile == Profile::Yoagent || self.broken(Breakage::ServerRequestIgnoredOverHttp) {
            tracing::warn!(target: "mcp_refclient", origin = %self.ep.origin, "server request '{method}' left unanswered over HTTP");
            return;
        }
        if method != "ping" {
            tracing::warn!(target: "mcp_refclient", origin = %self.ep.origin, "declined server request '{method}': method not found");
        }
        let Some(answer) = answer_server_request(id, method, |rule| self.broken(rule)) else {
            return;
        };
        let ctx = Ctx::notification(&self.ep, &format!("response to {method}"));
        match self.post(&answer, &ctx).await {
            Ok(_) => {}
            Err(e) => tracing::debug!(target: "mcp_refclient", "answering the server failed: {e}"),
        }
    }
}
