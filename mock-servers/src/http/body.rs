//! Response bodies: whole, or streamed from the script through a channel, so a response can
//! stall after its headers, stay open after its last frame, or be cut mid-way.

use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::body::{Body, Bytes, Frame, SizeHint};
use tokio::sync::mpsc;

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
        tokio::spawn(write_ops(ops_rx, tx));
        let body = Self {
            whole: None,
            stream: Some(rx),
            length,
        };
        (body, StreamWriter { ops: ops_tx })
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
}

async fn write_ops(
    mut ops: mpsc::UnboundedReceiver<Op>,
    body: mpsc::Sender<Result<Bytes, std::io::Error>>,
) {
    while let Some(op) = ops.recv().await {
        let sent = match op {
            Op::Bytes(bytes) => body.send(Ok(bytes)).await.is_ok(),
            Op::Fill(n) => fill(&body, n).await,
            Op::End => return,
            Op::Abort => {
                let cut =
                    std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "cut by the script");
                let _ = body.send(Err(cut)).await;
                return;
            }
        };
        if !sent {
            return;
        }
    }
    // The script let go without ending the body: hold it open until the client goes.
    body.closed().await;
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
