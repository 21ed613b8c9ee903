//! Reading a reply: its body chunk by chunk or whole (bounded), and the error of a
//! non-success status.

use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Bytes;
use hyper::header;

use crate::error::Fate;
use crate::stdio::fmt_duration;
use crate::McpError;

use super::{status_text, Ctx, Endpoint, Reply};

/// How much of an error status's body is read to quote it.
const ERROR_BODY_BYTES: usize = 8 * 1024;

/// How long an error status's body is waited for, at most.
const ERROR_BODY_WAIT: Duration = Duration::from_secs(2);

impl Endpoint {
    /// The next body chunk, bounded by the idle timeout (reset on every read); `None` at
    /// the end.
    pub(crate) async fn next_chunk(
        &self,
        reply: &mut Reply,
        ctx: &Ctx,
    ) -> Result<Option<Bytes>, McpError> {
        loop {
            let frame = match self.broken(crate::Breakage::IdleHeadOnly) {
                true => Ok(reply.body.frame().await),
                false => tokio::time::timeout(self.idle, reply.body.frame()).await,
            };
            let frame = frame.map_err(|_| {
                McpError::Timeout(format!(
                    "{}: no data for {} (idle read timeout) while reading the response to '{}'; the server may still carry it out",
                    ctx.prefix,
                    fmt_duration(self.idle),
                    ctx.method
                ))
            })?;
            match frame {
                None => return Ok(None),
                Some(Err(e)) => {
                    return Err(ctx.dead(
                        Fate::DeadMaybeSent,
                        format!("the response stream broke: {e}"),
                    ))
                }
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        if !data.is_empty() {
                            return Ok(Some(data));
                        }
                    }
                }
            }
        }
    }

    /// The whole body, bounded by `max_body_bytes`.
    pub(crate) async fn read_to_end(
        &self,
        reply: &mut Reply,
        ctx: &Ctx,
    ) -> Result<Vec<u8>, McpError> {
        let too_big = || {
            ctx.protocol(format!(
                "the response to '{}' is larger than {} bytes (max_body_bytes); refused",
                ctx.method, self.max_body
            ))
        };
        let declared = reply
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if declared.is_some_and(|len| len > self.max_body as u64) {
            return Err(too_big());
        }
        let mut body = Vec::new();
        while let Some(chunk) = self.next_chunk(reply, ctx).await? {
            let cap = self.max_body - usize::from(self.broken(crate::Breakage::BodyCapExclusive));
            if body.len() + chunk.len() > cap {
                return Err(too_big());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// The `http` error of a non-success status, the start of its body quoted (redacted).
    pub(crate) async fn status_error(&self, mut reply: Reply, ctx: &Ctx, note: &str) -> McpError {
        let mut body = Vec::new();
        let _ = tokio::time::timeout(self.idle.min(ERROR_BODY_WAIT), async {
            while body.len() < ERROR_BODY_BYTES {
                match reply.body.frame().await {
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            body.extend_from_slice(&data);
                        }
                    }
                    _ => break,
                }
            }
        })
        .await;
        // At the cap the body may go on: a secret may be cut in two.
        let cut = body.len() >= ERROR_BODY_BYTES;
        body.truncate(ERROR_BODY_BYTES);
        let body = String::from_utf8_lossy(&body);
        let body = if self.broken(crate::Breakage::NoStatusBodyScrub) {
            body.into_owned()
        } else if cut {
            self.scrub(&self.hide_cut_secret(&body), None)
        } else {
            self.scrub(&body, None)
        };
        let message = status_text(&ctx.prefix, reply.status, note, &body, &reply.url);
        if self.broken(crate::Breakage::StatusAsTransport) {
            return McpError::Transport(message);
        }
        McpError::Http {
            status: reply.status.as_u16(),
            message,
        }
    }
}
