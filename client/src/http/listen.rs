//! 2026-07-28 over Streamable HTTP: the `subscriptions/listen` stream that replaces the GET
//! stream. One POST whose SSE response stays open; `notifications/tools/list_changed` on it
//! is counted once the server acknowledged the subscription, and only when tagged with the
//! stream's own id (`io.modelcontextprotocol/subscriptionId`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hyper::header::{self, HeaderName, HeaderValue};
use hyper::Method;
use serde_json::Value;

use super::sse::SseParser;
use super::wire::{Ctx, Endpoint, Outgoing};
use crate::jsonrpc::{classify, Incoming, Request};

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Opens the stream in a task of its own (counting into `counter`; none: the
/// `NoListChangedCount` breakage); the task ends with the stream (the server closes
/// it, the idle bound passes, the client aborts it on close).
pub(crate) fn spawn(
    ep: Arc<Endpoint>,
    id: Value,
    params: Value,
    version: Option<HeaderValue>,
    counter: Option<Arc<AtomicU64>>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if let Err(e) = listen(&ep, id, params, version, counter.as_deref()).await {
            tracing::debug!(target: "mcp_refclient", origin = %ep.origin, "the subscriptions/listen stream ended: {}", e.full_text());
        }
    })
}

async fn listen(
    ep: &Endpoint,
    id: Value,
    params: Value,
    version: Option<HeaderValue>,
    counter: Option<&AtomicU64>,
) -> Result<(), crate::McpError> {
    let ctx = Ctx::call(ep, "subscriptions/listen");
    let body = serde_json::to_vec(&Request::new(
        id.clone(),
        "subscriptions/listen",
        Some(params),
    ))
    .map_err(crate::McpError::Serialization)?;
    let mut extra = vec![
        (
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        ),
        (
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        ),
        (
            HeaderName::from_static("mcp-method"),
            HeaderValue::from_static("subscriptions/listen"),
        ),
    ];
    if let Some(version) = version {
        extra.push((HeaderName::from_static("mcp-protocol-version"), version));
    }
    let out = Outgoing {
        method: Method::POST,
        url: &ep.url,
        body: Some(body.into()),
        extra,
    };
    let mut reply = ep.send(&out, &ctx).await?;
    if !reply.status.is_success() {
        return Err(ep.status_error(reply, &ctx, "").await);
    }
    let mut parser = SseParser::new(ep.max_body);
    let mut acknowledged = false;
    while let Some(chunk) = ep.next_chunk(&mut reply, &ctx).await? {
        parser.feed(&chunk).map_err(|_| {
            ctx.protocol("an event on the subscriptions/listen stream is too large; refused")
        })?;
        while let Some(event) = parser.next_event() {
            match classify(&event.data) {
                Incoming::Notification { method, params } => {
                    let tag = params
                        .as_ref()
                        .and_then(|p| p.get("_meta"))
                        .and_then(|m| m.get(SUBSCRIPTION_ID));
                    match method.as_str() {
                        "notifications/subscriptions/acknowledged" => acknowledged = true,
                        "notifications/tools/list_changed" if acknowledged && tag == Some(&id) => {
                            if let Some(counter) = counter {
                                counter.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                        _ => {
                            tracing::debug!(target: "mcp_refclient", "skipped '{method}' on the listen stream (acknowledged: {acknowledged}, tagged: {})", tag.is_some())
                        }
                    }
                }
                Incoming::Response { .. } => return Ok(()),
                _ => {
                    tracing::debug!(target: "mcp_refclient", "skipped a message on the listen stream that is not a notification")
                }
            }
        }
    }
    Ok(())
}
