//! Server messages on SSE: frames on the latest exchange's stream (opened on the spot), the
//! legacy `endpoint` stream and what is sent on it.

use std::time::Duration;

use serde_json::Value;

use crate::describe::describe_step;
use crate::http::body::{BodyEnd, MockBody};
use crate::http::sse;
use crate::script::{AwaitClose, Step, Transport};
use crate::wire_log::Record;

use super::{pairs, Flow, Head, PlayEnd, Player, Stream};

impl Player {
    /// A notification or request from the server: a frame on the latest exchange's SSE
    /// response (opened now, shaped like the reply ahead), or on the legacy stream.
    pub(super) fn frame(&mut self, index: usize, message: Value, rest: &[Step]) -> Flow {
        if self.script.transport == Transport::LegacySse {
            let Some(stream) = &self.legacy else {
                return self.script_error(index, "no endpoint stream to send on");
            };
            stream.writer.write(sse::frame(
                &message,
                Some("message"),
                stream.line_end,
                false,
            ));
            self.log.append(&Record::Sent { message });
            return Flow::Next;
        }
        let stream = match self.current_stream(index, rest) {
            Some(Ok(stream)) => stream,
            Some(Err(flow)) => return flow,
            None => return self.script_error(index, "no open SSE response to send on"),
        };
        stream
            .writer
            .write(sse::frame(&message, None, stream.line_end, false));
        self.log.append(&Record::Sent { message });
        Flow::Next
    }

    /// The stream frames go on: the latest exchange still streaming, or the latest
    /// unanswered one, whose SSE response opens now, shaped like the `reply` ahead in `rest`.
    pub(super) fn current_stream(
        &mut self,
        index: usize,
        rest: &[Step],
    ) -> Option<Result<&Stream, Flow>> {
        let i = self
            .exchanges
            .iter()
            .rposition(|x| x.open_stream().is_some() || x.respond.is_some())?;
        if self.exchanges[i].stream.is_none() {
            let reply = rest
                .iter()
                .take_while(|s| {
                    !matches!(s, Step::Expect(_) | Step::Handshake(_) | Step::Discover(_))
                })
                .find_map(|s| match s {
                    Step::Reply(r) => Some(r.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            let head = Head {
                status: reply.status,
                headers: pairs(&reply.headers),
                session_id: reply.session_id.as_deref(),
                line_end: reply.sse_line_end,
            };
            if let flow @ Flow::Stop(..) = self.open_sse(index, i, head) {
                return Some(Err(flow));
            }
        }
        self.exchanges[i].open_stream().map(Ok)
    }

    pub(super) fn open_sse(&mut self, index: usize, i: usize, head: Head<'_>) -> Flow {
        let Some(respond) = self.exchanges[i].respond.take() else {
            return self.script_error(index, "the request was answered already");
        };
        let line_end = head.line_end.unwrap_or_default();
        let (body, writer) = MockBody::streamed(None);
        let head = Head {
            headers: [
                ("content-type", "text/event-stream"),
                ("cache-control", "no-cache"),
            ]
            .into_iter()
            .chain(head.headers)
            .collect(),
            ..head
        };
        let seq = self.exchanges[i].seq;
        if let Err(e) = self.send_response(seq, respond, head, body, "[sse stream]".into()) {
            return self.script_error(index, &e);
        }
        self.exchanges[i].stream = Some(Stream {
            writer,
            line_end,
            ended: false,
        });
        Flow::Next
    }

    pub(super) fn endpoint(&mut self, index: usize, path: &str) -> Flow {
        let i = match self.pending(None) {
            Ok(i) => i,
            Err(e) => return self.script_error(index, &e),
        };
        if let flow @ Flow::Stop(..) = self.open_sse(index, i, Head::default()) {
            return flow;
        }
        let path = self.expand(path, Some(i));
        if let Some(stream) = &mut self.exchanges[i].stream {
            stream
                .writer
                .write(sse::field_frame(Some("endpoint"), &path, stream.line_end));
            stream.ended = true;
            self.legacy = Some(Stream {
                writer: stream.writer.clone(),
                line_end: stream.line_end,
                ended: false,
            });
        }
        let summary = format!("event: endpoint, data: {path}");
        self.log.append(&Record::Wrote {
            stream: "http".into(),
            summary,
        });
        Flow::Next
    }

    /// Over legacy-sse: the POST gets 202 (if not answered yet), the message goes on the
    /// endpoint stream.
    pub(super) fn legacy_send(&mut self, index: usize, i: usize, message: Value) -> Flow {
        if let Some(sender) = self.exchanges[i].respond.take() {
            let seq = self.exchanges[i].seq;
            let head = Head {
                status: Some(202),
                ..Head::default()
            };
            let _ = self.send_response(seq, sender, head, MockBody::empty(), String::new());
        }
        let Some(stream) = &self.legacy else {
            return self.script_error(index, "no endpoint stream to answer on");
        };
        stream.writer.write(sse::frame(
            &message,
            Some("message"),
            stream.line_end,
            false,
        ));
        self.log.append(&Record::Sent { message });
        Flow::Next
    }

    /// `await_close`: waits, bounded, until the client closes the stream: over legacy-sse
    /// the `endpoint` stream, else the latest one open (or the named request's).
    pub(super) async fn await_close(
        &mut self,
        index: usize,
        wait: &AwaitClose,
        step: &Step,
    ) -> Flow {
        let found = match (&wait.to, self.script.transport) {
            (Some(name), _) => self
                .named(name)
                .and_then(|i| Some((self.exchanges[i].seq, self.exchanges[i].stream.as_ref()?))),
            (None, Transport::LegacySse) => {
                let seq = self
                    .exchanges
                    .iter()
                    .rev()
                    .find(|x| x.stream.is_some())
                    .map(|x| x.seq);
                seq.zip(self.legacy.as_ref())
            }
            (None, _) => self
                .exchanges
                .iter()
                .rev()
                .find_map(|x| Some((x.seq, x.open_stream()?))),
        };
        let Some((seq, stream)) = found else {
            return self.script_error(index, "await_close: no streamed response to wait on");
        };
        let writer = stream.writer.clone();
        let bound = Duration::from_millis(wait.within_ms);
        match tokio::time::timeout(bound, writer.ended()).await {
            Ok(BodyEnd::Client) => {
                self.log.append(&Record::ClientClosed { seq });
                Flow::Next
            }
            Ok(BodyEnd::Script) => {
                self.script_error(index, "await_close: the script ended that stream itself")
            }
            Err(_) => {
                let expected = describe_step(step);
                let received = Value::String(format!(
                    "the stream of request {seq} still open after {} ms",
                    wait.within_ms
                ));
                let text = format!("step {index} expected `{expected}`, received {received}");
                self.log.append(&Record::Mismatch {
                    index,
                    expected,
                    received,
                });
                Flow::Stop(PlayEnd::Mismatch, text)
            }
        }
    }
}
