//! The listeners: accept connections (TLS first over https), read each request's head and
//! body (bounded), hand it to the player and send back whatever response it makes.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_rustls::TlsAcceptor;

use crate::http::body::MockBody;
use crate::script::Origin;

/// The largest request body the mock reads; a larger one is answered 413 (and logged
/// without its body).
pub const MAX_BODY: usize = 16 << 20;

/// How many requests may wait for the player before connections wait too.
pub const QUEUE: usize = 64;

/// A request read off a connection, waiting for the player to answer it.
#[derive(Debug)]
pub struct Incoming {
    /// Its number, from 1, in arrival order over all listeners.
    pub seq: u64,
    /// The listener it reached.
    pub origin: Origin,
    /// `http` or `https`.
    pub scheme: &'static str,
    /// The `Host` header, else the listener's address.
    pub authority: String,
    /// The method.
    pub method: String,
    /// The path and query.
    pub path: String,
    /// Every header, names lowercased, values as lossy UTF-8.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
    /// The body was over [`MAX_BODY`] (and is left out).
    pub too_large: bool,
    /// Where the answer goes; dropping it closes the connection without an answer.
    pub respond: oneshot::Sender<Response<MockBody>>,
}

/// One listener and what its connections need.
pub struct Listener {
    /// The socket.
    pub socket: Socket,
    /// Which origin it is.
    pub origin: Origin,
    /// TLS, over https (not on the plain listener).
    pub tls: Option<TlsAcceptor>,
    /// Where `refuse` steps reach it (the primary origin).
    pub refusals: Option<mpsc::UnboundedReceiver<Refusal>>,
}

/// A listener's socket: listening, or bound without listening (a connection to its port is
/// refused) until a time has passed.
pub enum Socket {
    /// Accepting connections.
    Listening(TcpListener),
    /// Refusing connections for this long, then listening.
    Refusing(TcpSocket, Duration),
}

/// A `refuse` step's order: stop listening for `time`; `done` is told once the port refuses.
pub struct Refusal {
    /// How long.
    pub time: Duration,
    /// Told once connections are refused.
    pub done: oneshot::Sender<()>,
}

/// A socket bound to `addr`, not listening: a connection to its port is refused.
pub fn bound(addr: SocketAddr) -> std::io::Result<TcpSocket> {
    not_listening(addr, false)
}

/// A socket of [`bound`] on the port of `listener`, which still holds it, so that the port
/// is never free between the two (under load another process's connection took it in that
/// gap). Only this explicit bind shares a port: a socket that shares chose its port alone
/// (a shared bind to port 0 may be given a port another sharing socket holds).
fn bound_beside(listener: &TcpListener) -> std::io::Result<TcpSocket> {
    share_port(listener)?;
    not_listening(listener.local_addr()?, true)
}

fn not_listening(addr: SocketAddr, share: bool) -> std::io::Result<TcpSocket> {
    let socket = match addr {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.set_reuseport(share)?;
    socket.bind(addr)?;
    Ok(socket)
}

/// Lets [`bound_beside`] bind the port of `listener`; set after the listener's own bind.
fn share_port(listener: &impl std::os::fd::AsRawFd) -> std::io::Result<()> {
    let one: libc::c_int = 1;
    // SAFETY: a socket this process owns, and an int option of its own size.
    let rc = unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_REUSEPORT,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// The backlog of a listener.
const BACKLOG: u32 = 1024;

async fn next_refusal(refusals: &mut Option<mpsc::UnboundedReceiver<Refusal>>) -> Refusal {
    match refusals {
        Some(receiver) => match receiver.recv().await {
            Some(refusal) => refusal,
            None => std::future::pending().await,
        },
        None => std::future::pending().await,
    }
}

/// What every connection shares.
#[derive(Clone)]
pub struct Shared {
    /// The player's queue.
    pub requests: mpsc::Sender<Incoming>,
    /// Request numbers.
    pub seq: Arc<AtomicU64>,
    /// Turns true when the mock stops listening (an `exit` step): connections are dropped.
    pub stop: watch::Receiver<bool>,
}

/// Accepts connections until told to stop; a refusal closes the listener for a while (the
/// port kept) and opens it again.
pub async fn serve(listener: Listener, shared: Shared) {
    let Listener {
        socket,
        origin,
        tls,
        mut refusals,
    } = listener;
    let mut stop = shared.stop.clone();
    let mut socket = socket;
    loop {
        let listening = match socket {
            Socket::Listening(listening) => listening,
            Socket::Refusing(bound, time) => {
                tokio::select! {
                    _ = tokio::time::sleep(time) => {}
                    _ = stop.wait_for(|stopped| *stopped) => return,
                }
                match bound.listen(BACKLOG) {
                    Ok(listening) => listening,
                    Err(_) => return,
                }
            }
        };
        let accepted = tokio::select! {
            accepted = listening.accept() => accepted,
            refusal = next_refusal(&mut refusals) => {
                let Ok(addr) = listening.local_addr() else { return };
                // The port is held by the refusing socket before the listener closes.
                let Ok(bound) = bound_beside(&listening) else { return };
                // Connections the kernel took before the refusal are served, not reset.
                let Ok(std) = listening.into_std() else { return };
                while let Ok((tcp, _)) = std.accept() {
                    let tcp = tcp.set_nonblocking(true).and_then(|()| TcpStream::from_std(tcp));
                    if let Ok(tcp) = tcp {
                        spawn_connection(tcp, addr, origin, tls.clone(), shared.clone());
                    }
                }
                drop(std);
                let _ = refusal.done.send(());
                socket = Socket::Refusing(bound, refusal.time);
                continue;
            }
            _ = stop.wait_for(|stopped| *stopped) => return,
        };
        if let (Ok((tcp, _)), Ok(addr)) = (accepted, listening.local_addr()) {
            spawn_connection(tcp, addr, origin, tls.clone(), shared.clone());
        }
        socket = Socket::Listening(listening);
    }
}

/// Serves one accepted connection until it ends or the mock stops.
fn spawn_connection(
    tcp: TcpStream,
    local: SocketAddr,
    origin: Origin,
    tls: Option<TlsAcceptor>,
    shared: Shared,
) {
    let _ = tcp.set_nodelay(true);
    let local = local.to_string();
    tokio::spawn(async move {
        let mut stop = shared.stop.clone();
        let connection = async move {
            match tls {
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(tcp).await {
                        serve_io(stream, origin, "https", local, shared).await;
                    }
                }
                None => serve_io(tcp, origin, "http", local, shared).await,
            }
        };
        tokio::select! {
            _ = connection => {}
            _ = stop.wait_for(|stopped| *stopped) => {}
        }
    });
}

async fn serve_io<I>(io: I, origin: Origin, scheme: &'static str, local: String, shared: Shared)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request| {
        let shared = shared.clone();
        let local = local.clone();
        async move { handle(request, origin, scheme, local, shared).await }
    });
    let _ = http1::Builder::new()
        .serve_connection(TokioIo::new(io), service)
        .await;
}

async fn handle(
    request: Request<hyper::body::Incoming>,
    origin: Origin,
    scheme: &'static str,
    local: String,
    shared: Shared,
) -> Result<Response<MockBody>, std::io::Error> {
    let (parts, body) = request.into_parts();
    let (body, too_large) = match http_body_util::Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => (collected.to_bytes(), false),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => (Bytes::new(), true),
        Err(error) => return Err(std::io::Error::other(error.to_string())),
    };
    let headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.as_str().to_ascii_lowercase(), value)
        })
        .collect();
    let authority = parts
        .headers
        .get(hyper::header::HOST)
        .and_then(|h| h.to_str().ok())
        .map_or(local, str::to_owned);
    let (respond, answer) = oneshot::channel();
    let incoming = Incoming {
        seq: shared.seq.fetch_add(1, Ordering::SeqCst) + 1,
        origin,
        scheme,
        authority,
        method: parts.method.as_str().to_owned(),
        path: parts
            .uri
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned()),
        headers,
        body,
        too_large,
        respond,
    };
    if shared.requests.send(incoming).await.is_err() {
        return Ok(unavailable());
    }
    answer.await.map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "closed by the script",
        )
    })
}

fn unavailable() -> Response<MockBody> {
    let mut response = Response::new(MockBody::whole("mcp-mock-http: the script is over\n"));
    *response.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
    response
}
