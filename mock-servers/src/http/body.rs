//! Response bodies: whole, or streamed from the script through a channel, so a response can
//! stall after its headers, stay open after its last frame, or be cut mid-way.

use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::body::{Body, Bytes, Frame, SizeHint};
use tokio::sync::{mpsc, watch};

/// How many chunks may wait between the script and the socket: writes beyond it wait for
/// the client to read (bounded memory).
const CHUNKS_IN_FLIGHT: usize = 4;

/// The size of the chunks of a `fill`.
const FILL_CHUNK: usize = 64 * 1024;

/// A response body: a whole one, or a stream fed by a [`StreamWriter`].
#[derive(Debug, Default)]
pub struct MockBody {
    whole: Option<Bytes>,
    stream: Option<mpsc::Receiver<Result<Bytes, std::io::Error>>>,
    length: Option<u64>,
}

impl MockBody {
    /// A body sent whole, with its length.
    pub fn whole(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        Self {
            length: Some(bytes.len() as u64),
            whole: Some(bytes),
            stream: None,
        }
    }

    /// An empty body (`content-length: 0`).
    pub fn empty() -> Self {
        Self::whole(Bytes::new())
    }

    /// A streamed body, with a known length when given (else chunked), and the writer that
    /// feeds it.
    pub fn streamed(length: Option<u64>) -> (Self, StreamWriter) {
        let (tx, rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        let (end_tx, end_rx) = watch::channel(None);
        tokio::spawn(write_ops(ops_rx, tx, end_tx));
        let body = Self {
            whole: None,
            stream: Some(rx),
            length,
        };
        (
            body,
            StreamWriter {
                ops: ops_tx,
                end: end_rx,
            },
        )
    }
}

impl Body for MockBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(bytes) = self.whole.take() {
            return Poll::Ready(Some(Ok(Frame::data(bytes))));
        }
        match &mut self.stream {
            Some(rx) => rx
                .poll_recv(cx)
                .map(|chunk| chunk.map(|chunk| chunk.map(Frame::data))),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.whole.is_none() && self.stream.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        match self.length {
            Some(n) => SizeHint::with_exact(n),
            None => SizeHint::default(),
        }
    }
}

/// Who ended a streamed body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyEnd {
    /// The script: an `end` or an `abort`.
    Script,
    /// The client: it closed the connection (or stopped reading it) first.
    Client,
}

/// What the script does to a streamed body, in order.
#[derive(Debug)]
enum Op {
    Bytes(Bytes),
    Fill(usize),
    End,
    Abort,
}

/// The script's end of a streamed body. Its writes go out in order, each waiting for the
/// client to read the previous ones; the script never waits for them. Dropping it without
/// [`end`](Self::end) keeps the body open until the client goes away.
#[derive(Clone, Debug)]
pub struct StreamWriter {
    ops: mpsc::UnboundedSender<Op>,
    end: watch::Receiver<Option<BodyEnd>>,
}

impl StreamWriter {
    /// Writes bytes.
    pub fn write(&self, bytes: impl Into<Bytes>) {
        let _ = self.ops.send(Op::Bytes(bytes.into()));
    }

    /// Writes `n` bytes of `x`, in chunks.
    pub fn fill(&self, n: usize) {
        let _ = self.ops.send(Op::Fill(n));
    }

    /// Ends the body cleanly once the writes before went out.
    pub fn end(&self) {
        let _ = self.ops.send(Op::End);
    }

    /// Cuts the connection once the writes before went out.
    pub fn abort(&self) {
        let _ = self.ops.send(Op::Abort);
    }

    /// Waits until the body ends, and says who ended it.
    pub async fn ended(&self) -> BodyEnd {
        let mut end = self.end.clone();
        let by = end.wait_for(Option::is_some).await.map(|by| *by);
        // The writing task gone without a word: only a runtime shutting down does that.
        by.ok().flatten().unwrap_or(BodyEnd::Script)
    }
}

async fn write_ops(
    ops: mpsc::UnboundedReceiver<Op>,
    body: mpsc::Sender<Result<Bytes, std::io::Error>>,
    end: watch::Sender<Option<BodyEnd>>,
) {
    let by = write_all(ops, &body).await;
    end.send_replace(Some(by));
}

/// Plays the script's writes until the body ends; who ended it.
async fn write_all(
    mut ops: mpsc::UnboundedReceiver<Op>,
    body: &mpsc::Sender<Result<Bytes, std::io::Error>>,
) -> BodyEnd {
    loop {
        // The client going away is seen while the script writes nothing too.
        let op = tokio::select! {
            op = ops.recv() => op,
            () = body.closed() => return BodyEnd::Client,
        };
        let Some(op) = op else {
            break;
        };
        let sent = match op {
            Op::Bytes(bytes) => body.send(Ok(bytes)).await.is_ok(),
            Op::Fill(n) => fill(body, n).await,
            Op::End => return BodyEnd::Script,
            Op::Abort => {
                let cut =
                    std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "cut by the script");
                let _ = body.send(Err(cut)).await;
                return BodyEnd::Script;
            }
        };
        if !sent {
            return BodyEnd::Client;
        }
    }
    // The script let go without ending the body: hold it open until the client goes.
    body.closed().await;
    BodyEnd::Client
}

async fn fill(body: &mpsc::Sender<Result<Bytes, std::io::Error>>, n: usize) -> bool {
    let chunk = Bytes::from(vec![b'x'; n.min(FILL_CHUNK)]);
    let mut left = n;
    while left > 0 {
        let size = left.min(FILL_CHUNK);
        if body.send(Ok(chunk.slice(..size))).await.is_err() {
            return false;
        }
        left -= size;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const BOUND: Duration = Duration::from_secs(5);

    #[tokio::test]
    async fn a_body_its_reader_lets_go_of_was_ended_by_the_client() {
        let (body, writer) = MockBody::streamed(None);
        writer.write("data: {}\n\n");
        drop(body);
        let by = tokio::time::timeout(BOUND, writer.ended()).await;
        assert_eq!(by.ok(), Some(BodyEnd::Client));
    }

    #[tokio::test]
    async fn a_body_the_script_ends_was_ended_by_the_script() {
        let (body, writer) = MockBody::streamed(None);
        writer.end();
        let by = tokio::time::timeout(BOUND, writer.ended()).await;
        assert_eq!(by.ok(), Some(BodyEnd::Script));
        drop(body);
    }

    #[tokio::test]
    async fn a_body_held_open_has_not_ended() {
        let (_body, writer) = MockBody::streamed(None);
        writer.write("data: {}\n\n");
        let by = tokio::time::timeout(Duration::from_millis(50), writer.ended()).await;
        assert!(by.is_err(), "ended while held open: {by:?}");
    }
}
