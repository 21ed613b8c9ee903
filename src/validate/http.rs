//! HTTP targets: the validator's own small HTTP/1.1 client for Streamable HTTP, so every byte
//! the server sends is seen (the reference client tolerates what the validator must judge).
//!
//! [`Wire`] sends one request over a fresh connection (TCP, or TLS trusting the system roots
//! plus `--ca-cert`; verification is never turned off) and reads the answer: a JSON body to
//! its end, an SSE body frame by frame until the awaited answer, or only the head. A whole
//! request (connect, TLS, the head, the body) is bounded by one `--timeout`, however busy
//! the stream; a body is read up to 8 MiB and an SSE body's events are parsed as they come. [`HttpSession`] keeps
//! a session's `Mcp-Session-Id`, negotiated revision and log, and speaks JSON-RPC over it.

use super::log::{SessionLog, SharedLog};
use super::outcome::excerpt;
use super::stdio::{is_response_to, Exchange};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::rustls;
use url::Url;

/// The most of a response body the validator reads; the rest is left unread.
pub const MAX_BODY: usize = 8 << 20;
/// How much of a body a report quotes from (before its excerpt is cut).
const QUOTED_BODY: usize = 16 << 10;
/// How much of an SSE body is kept to be quoted (its events are parsed as they come).
const KEPT_SSE_BODY: usize = 64 << 10;
/// The most messages kept from one response (the awaited answer is kept besides).
const KEPT_MESSAGES: usize = 1000;
/// The most server requests answered from one response.
const MAX_ANSWERS: usize = 64;

/// Where systems keep their trusted roots as one PEM bundle (`SSL_CERT_FILE` first).
const SYSTEM_ROOTS: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
    "/usr/local/etc/openssl/cert.pem",
];

/// The first revision whose clients send `MCP-Protocol-Version` on every request.
pub const PROTOCOL_VERSION_HEADER_SINCE: &str = "2025-06-18";

/// Why a request got no HTTP answer. Lowercase, one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// No connection (refused, unresolvable, TLS refused).
    #[error("cannot connect to {address}: {reason}")]
    Connect {
        /// `host:port`.
        address: String,
        /// Why.
        reason: String,
    },
    /// Connected, but no response head within the bound.
    #[error("nothing within {0:?}")]
    NoAnswer(Duration),
    /// The connection broke before a response head.
    #[error("the connection broke: {0}")]
    Broken(String),
}

impl WireError {
    /// Whether the server cannot be reached at all (then the target is unreachable).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, WireError::Connect { .. } | WireError::NoAnswer(_))
    }
}

/// How much of a response to read.
#[derive(Clone, Debug)]
pub enum Until {
    /// The whole body (bounded).
    End,
    /// Up to the JSON-RPC response with this id (an SSE stream may stay open after it).
    Response(Value),
    /// The status line and headers only; the connection is closed after them.
    Head,
    /// Up to the first notification with this method (a `subscriptions/listen` stream's
    /// acknowledgement); the stream is then closed.
    Notification(String),
}

/// A response as read.
#[derive(Clone, Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercased, values as lossy UTF-8.
    pub headers: Vec<(String, String)>,
    /// The body bytes read.
    pub body: Vec<u8>,
    /// The JSON-RPC messages found: the JSON body (an array's elements), or each SSE frame's data.
    pub messages: Vec<Value>,
    /// SSE `data` that is not JSON.
    pub bad_frames: Vec<String>,
    /// Why reading stopped before the body ended, if it did.
    pub cut: Option<String>,
    /// Messages (and bad frames) not kept: over [`KEPT_MESSAGES`].
    pub dropped: usize,
    /// Whether the bound ran out before the body ended.
    pub timed_out: bool,
    /// Whether reading stopped at [`MAX_BODY`] before the body ended.
    pub over_limit: bool,
}

impl Reply {
    /// Keeps a message while under [`KEPT_MESSAGES`]; the response awaited is always kept.
    fn keep(&mut self, message: Value, until: &Until) {
        let awaited = matches!(until, Until::Response(id) if is_response_to(&message, id));
        if awaited || self.messages.len() < KEPT_MESSAGES {
            self.messages.push(message);
        } else {
            self.dropped += 1;
        }
    }

    /// A header's value (name without regard to case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The media type, lowercased, without parameters.
    pub fn media_type(&self) -> String {
        self.header("content-type")
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The JSON-RPC response with `id`.
    pub fn response_to(&self, id: &Value) -> Option<&Value> {
        self.messages.iter().find(|m| is_response_to(m, id))
    }

    /// The answer for a report: status, media type, body (cut), and why reading stopped.
    pub fn describe(&self) -> String {
        let reason = hyper::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        let mut text = format!("{} {reason}", self.status).trim_end().to_string();
        let media = self.media_type();
        if !media.is_empty() {
            text.push_str(&format!(" ({media})"));
        }
        // The cut and refusals go first, so a later cut of this text cannot drop them.
        if let Some(cut) = &self.cut {
            text.push_str(&format!(" [{cut}]"));
        }
        if let Some(first) = self.bad_frames.first() {
            let why = first
                .rsplit_once(" (")
                .map_or("", |(_, why)| why.trim_end_matches(')'));
            text.push_str(&format!(
                " [{} SSE event(s) refused, the first: {why}]",
                self.bad_frames.len()
            ));
        }
        let head = &self.body[..self.body.len().min(QUOTED_BODY)];
        let body = String::from_utf8_lossy(head);
        let body = body.trim();
        if body.is_empty() {
            text.push_str(", empty body");
        } else {
            text.push_str(": ");
            text.push_str(&excerpt(body));
            if head.len() < self.body.len() {
                text.push_str(&format!(" ({} bytes read)", self.body.len()));
            }
        }
        text
    }
}

/// A request sent and what came of it.
#[derive(Clone, Debug)]
pub struct Posted {
    /// The request for a report: method, path, the headers the validator set (never the
    /// `--header` ones, which may hold credentials) and the body.
    pub sent: String,
    /// The response, or why there was none.
    pub reply: Result<Reply, WireError>,
}

impl Posted {
    /// The status, when a response came.
    pub fn status(&self) -> Option<u16> {
        self.reply.as_ref().ok().map(|r| r.status)
    }

    /// What came back, for a report.
    pub fn received(&self) -> String {
        match &self.reply {
            Ok(reply) => reply.describe(),
            Err(e) => format!("no response: {e}"),
        }
    }
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// The endpoint and how to reach it.
pub struct Wire {
    url: Url,
    headers: Vec<(HeaderName, HeaderValue)>,
    tls: Option<tokio_rustls::TlsConnector>,
    timeout: Duration,
}

impl Wire {
    /// Checks the URL, the `--header` values and (for https) builds the trust store: the
    /// system roots plus `ca_pem`. The error is one line.
    pub fn new(
        url: &str,
        headers: &[(String, String)],
        ca_pem: Option<&[u8]>,
        timeout: Duration,
    ) -> Result<Wire, String> {
        let shown = super::redact::public_url(url);
        let url = Url::parse(url).map_err(|e| format!("the URL is not valid: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(format!("`{shown}` is not an http or https URL"));
        }
        let headers = check_headers(headers)?;
        let tls = if url.scheme() == "https" {
            Some(tls_connector(ca_pem)?)
        } else {
            None
        };
        Ok(Wire {
            url,
            headers,
            tls,
            timeout,
        })
    }

    /// The per-wait bound.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// `host:port`, as connection errors name it.
    fn address(&self) -> String {
        let host = self
            .url
            .host_str()
            .unwrap_or("")
            .trim_start_matches('[')
            .trim_end_matches(']');
        format!("{host}:{}", self.url.port_or_known_default().unwrap_or(80))
    }

    /// The path and query requests go to.
    pub fn target(&self) -> String {
        match self.url.query() {
            Some(query) => format!("{}?{query}", self.url.path()),
            None => self.url.path().to_string(),
        }
    }

    async fn connect(&self, deadline: Instant) -> Result<Box<dyn Io>, WireError> {
        let address = self.address();
        let fail = |reason: String| WireError::Connect {
            address: address.clone(),
            reason,
        };
        let port = self.url.port_or_known_default().unwrap_or(80);
        let connect = async {
            match self.url.host() {
                Some(url::Host::Ipv4(ip)) => TcpStream::connect((ip, port)).await,
                Some(url::Host::Ipv6(ip)) => TcpStream::connect((ip, port)).await,
                Some(url::Host::Domain(name)) => TcpStream::connect((name, port)).await,
                None => Err(std::io::Error::other("the URL has no host")),
            }
        };
        let tcp = match tokio::time::timeout(left(deadline), connect).await {
            Ok(Ok(tcp)) => tcp,
            Ok(Err(e)) => return Err(fail(e.to_string())),
            Err(_) => return Err(fail(format!("no connection within {:?}", self.timeout))),
        };
        let _ = tcp.set_nodelay(true);
        let Some(tls) = &self.tls else {
            return Ok(Box::new(tcp));
        };
        let name = match self.url.host() {
            Some(url::Host::Ipv4(ip)) => {
                rustls_pki_types::ServerName::IpAddress(std::net::IpAddr::V4(ip).into())
            }
            Some(url::Host::Ipv6(ip)) => {
                rustls_pki_types::ServerName::IpAddress(std::net::IpAddr::V6(ip).into())
            }
            Some(url::Host::Domain(name)) => {
                rustls_pki_types::ServerName::try_from(name.to_string())
                    .map_err(|e| fail(format!("invalid TLS server name: {e}")))?
            }
            None => return Err(fail("the URL has no host".into())),
        };
        match tokio::time::timeout(left(deadline), tls.connect(name, tcp)).await {
            Ok(Ok(stream)) => Ok(Box::new(stream)),
            Ok(Err(e)) => Err(fail(format!("TLS handshake failed: {e}"))),
            Err(_) => Err(fail(format!("no TLS handshake within {:?}", self.timeout))),
        }
    }

    /// Sends one request over a fresh connection and reads its answer as far as `until`
    /// says; `on_message` sees each message as it arrives (to answer server requests).
    pub async fn send(
        &self,
        method: Method,
        headers: &[(String, String)],
        body: Option<Vec<u8>>,
        until: &Until,
        mut on_message: impl FnMut(&Value) + Send,
    ) -> Result<Reply, WireError> {
        let deadline = Instant::now() + self.timeout;
        let io = self.connect(deadline).await?;
        let handshake = hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(io));
        let (mut sender, connection) = match tokio::time::timeout(left(deadline), handshake).await {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => return Err(WireError::Broken(e.to_string())),
            Err(_) => return Err(WireError::NoAnswer(self.timeout)),
        };
        let task = AbortOnDrop(tokio::spawn(connection));
        let host = match self.url.port() {
            Some(port) => format!("{}:{port}", self.url.host_str().unwrap_or("")),
            None => self.url.host_str().unwrap_or("").to_string(),
        };
        let mut request = Request::builder()
            .method(method)
            .uri(self.target())
            .header(hyper::header::HOST, host)
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| WireError::Broken(format!("invalid request: {e}")))?;
        let own: Vec<(HeaderName, HeaderValue)> = headers
            .iter()
            .filter_map(|(n, v)| {
                Some((
                    HeaderName::from_bytes(n.as_bytes()).ok()?,
                    HeaderValue::from_str(v).ok()?,
                ))
            })
            .collect();
        for (name, value) in &self.headers {
            if !own.iter().any(|(n, _)| n == name) {
                request.headers_mut().append(name.clone(), value.clone());
            }
        }
        for (name, value) in own {
            request.headers_mut().insert(name, value);
        }
        let response =
            match tokio::time::timeout(left(deadline), sender.send_request(request)).await {
                Ok(Ok(response)) => response,
                Ok(Err(e)) => return Err(WireError::Broken(e.to_string())),
                Err(_) => return Err(WireError::NoAnswer(self.timeout)),
            };
        let (parts, mut body) = response.into_parts();
        let mut reply = Reply {
            status: parts.status.as_u16(),
            headers: parts
                .headers
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: Vec::new(),
            messages: Vec::new(),
            bad_frames: Vec::new(),
            cut: None,
            dropped: 0,
            timed_out: false,
            over_limit: false,
        };
        if matches!(until, Until::Head) {
            drop(task);
            return Ok(reply);
        }
        let sse = reply.media_type() == "text/event-stream";
        let mut parser = SseParser::default();

        let mut read = 0usize;
        loop {
            // Checked before every read: a body that always has data ready would otherwise
            // never let the timeout fire.
            let left = left(deadline);
            let next = if left.is_zero() {
                None
            } else {
                tokio::time::timeout(left, body.frame()).await.ok()
            };
            let frame = match next {
                None => {
                    reply.timed_out = true;
                    reply.cut = Some(format!("no end of the body within {:?}", self.timeout));
                    break;
                }
                Some(None) => break,
                Some(Some(Err(e))) => {
                    reply.cut = Some(format!("the body broke off: {e}"));
                    break;
                }
                Some(Some(Ok(frame))) => frame,
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if read + data.len() > MAX_BODY {
                reply.cut = Some(format!("stopped reading at the {MAX_BODY}-byte limit"));
                reply.over_limit = true;
                break;
            }
            read += data.len();
            // An SSE body is parsed as it comes: only its start is kept, to be quoted.
            let keep = if sse {
                KEPT_SSE_BODY
                    .saturating_sub(reply.body.len())
                    .min(data.len())
            } else {
                data.len()
            };
            reply.body.extend_from_slice(&data[..keep]);
            if sse {
                // Only what this chunk added is searched: a stream of notifications that never
                // holds the answer would otherwise cost a scan of every kept message per chunk.
                let before = reply.messages.len();
                for event in parser.push(&data) {
                    if event.trim().is_empty() {
                        continue;
                    }
                    let parsed = super::weight::check(event.as_bytes()).and_then(|()| {
                        serde_json::from_str::<Value>(&event).map_err(|e| format!("not JSON: {e}"))
                    });
                    match parsed {
                        Ok(value) => {
                            for message in flatten(value) {
                                on_message(&message);
                                reply.keep(message, until);
                            }
                        }
                        Err(why) if reply.bad_frames.len() < KEPT_MESSAGES => {
                            reply.bad_frames.push(format!(
                                "{} ({why})",
                                super::log::cut(&event, super::log::QUOTED_LINE)
                            ))
                        }
                        Err(_) => reply.dropped += 1,
                    }
                }
                let added = &reply.messages[before..];
                let done = match until {
                    Until::Response(id) => added.iter().any(|m| is_response_to(m, id)),
                    Until::Notification(method) => added
                        .iter()
                        .any(|m| m.get("method").and_then(Value::as_str) == Some(method)),
                    _ => false,
                };
                if done {
                    break;
                }
            }
        }
        if !sse && !reply.body.is_empty() {
            let parsed = super::weight::check(&reply.body).and_then(|()| {
                serde_json::from_slice::<Value>(&reply.body).map_err(|e| format!("not JSON: {e}"))
            });
            match parsed {
                Ok(value) => {
                    for message in flatten(value) {
                        on_message(&message);
                        reply.keep(message, until);
                    }
                }
                // Said in the report: a refused body is not "no answer".
                Err(why) if reply.cut.is_none() && reply.media_type() == "application/json" => {
                    reply.cut = Some(format!("the body is refused: {why}"));
                }
                Err(_) => {}
            }
        }
        drop(task);
        Ok(reply)
    }
}

/// What is left of a wait until `deadline` (one bound for a whole request: connect, TLS,
/// head and body).
fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// A JSON body's messages: the object, or an array's objects.
fn flatten(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items.into_iter().filter(Value::is_object).collect(),
        Value::Object(_) => vec![value],
        _ => Vec::new(),
    }
}

/// Ends the connection task (closing the connection) when the exchange is done.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The system roots (from `SSL_CERT_FILE` or a usual bundle path) and `ca_pem`.
fn tls_connector(ca_pem: Option<&[u8]>) -> Result<tokio_rustls::TlsConnector, String> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let system = std::env::var_os("SSL_CERT_FILE")
        .map(std::path::PathBuf::from)
        .into_iter()
        .chain(SYSTEM_ROOTS.iter().map(std::path::PathBuf::from))
        .find(|p| p.is_file());
    if let Some(bundle) = system.and_then(|p| std::fs::read(p).ok()) {
        for cert in rustls_pki_types::CertificateDer::pem_slice_iter(&bundle).flatten() {
            let _ = roots.add(cert);
        }
    }
    if let Some(pem) = ca_pem {
        for cert in rustls_pki_types::CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| format!("--ca-cert is not valid PEM: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("--ca-cert holds a certificate that was refused: {e}"))?;
        }
    }
    if roots.is_empty() {
        return Err(
            "no trusted root certificates: none in the system locations and no --ca-cert".into(),
        );
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup failed: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

/// Checks `--header` names and values before anything is sent. The error is one line and
/// never shows a value (nor a name that is not one: it may be a value without its colon).
pub fn check_headers(
    headers: &[(String, String)],
) -> Result<Vec<(HeaderName, HeaderValue)>, String> {
    headers
        .iter()
        .enumerate()
        .map(|(index, (name, value))| {
            let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                format!(
                    "--header number {} does not start with a valid header name (not shown)",
                    index + 1
                )
            })?;
            let value = HeaderValue::from_str(value).map_err(|_| {
                format!("the value of --header `{name}` is not a valid header value (not shown)")
            })?;
            Ok((name, value))
        })
        .collect()
}

/// Checks a `--ca-cert` file: PEM holding at least one certificate. The error is one line.
pub fn check_ca_cert(pem: &[u8]) -> Result<(), String> {
    use rustls_pki_types::pem::PemObject;
    let certs = rustls_pki_types::CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("is not valid PEM: {e}"))?;
    if certs.is_empty() {
        return Err("holds no PEM certificate".into());
    }
    Ok(())
}

/// An SSE parser (the HTML living standard's rules): lines end in CRLF, LF or CR; `data`
/// lines of one event are joined with `\n`; a blank line ends an event.
#[derive(Default)]
struct SseParser {
    buf: Vec<u8>,
    /// How much of `buf` is known to hold no line end (a long line is not scanned again).
    scanned: usize,
    data: Option<String>,
}

impl SseParser {
    /// Feeds bytes; returns the data of each event they complete. Linear in what it is fed:
    /// one scan of each byte, one move of what is left over.
    fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buf.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        loop {
            let from = self.scanned.max(start);
            let Some(offset) = self.buf[from..]
                .iter()
                .position(|b| *b == b'\n' || *b == b'\r')
            else {
                self.scanned = self.buf.len();
                break;
            };
            let end = from + offset;
            if self.buf[end] == b'\r' && end + 1 == self.buf.len() {
                self.scanned = end; // a CR whose LF may be in the next chunk
                break;
            }
            let line = String::from_utf8_lossy(&self.buf[start..end]).into_owned();
            let width = if self.buf[end] == b'\r' && self.buf.get(end + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
            start = end + width;
            if line.is_empty() {
                events.extend(self.data.take());
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line.as_str(), ""),
            };
            if field == "data" {
                match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_string()),
                }
            }
        }
        self.buf.drain(..start);
        self.scanned = self.scanned.saturating_sub(start);
        events
    }
}

/// How a handshake went: the `initialize` exchange and the `notifications/initialized` POST.
#[derive(Clone, Debug)]
pub struct Handshake {
    /// `initialize` and its answer.
    pub init: Exchange,
    /// The `initialize` POST as HTTP.
    pub init_posted: Posted,
    /// The `notifications/initialized` POST, when `initialize` succeeded.
    pub initialized: Option<Posted>,
}

/// One Streamable HTTP session: its id, its negotiated revision and its log.
pub struct HttpSession {
    wire: Arc<Wire>,
    log: SharedLog,
    /// The `Mcp-Session-Id` the server issued (lossy UTF-8).
    pub session_id: Option<String>,
    /// The revision the server answered in `initialize`.
    pub revision: Option<String>,
    /// Why the session stopped answering, once a request got no answer within the bound.
    pub stalled: Option<String>,
    /// The client capabilities the handshake declares (none unless set before it); the
    /// server's requests for them get canned answers ([`crate::validate::checks::requests`]).
    pub declared: Value,
    next_id: i64,
    ended: bool,
}

impl HttpSession {
    /// A session not yet initialized, logged under `label`.
    pub fn new(wire: Arc<Wire>, label: &str) -> HttpSession {
        HttpSession {
            wire,
            log: Arc::new(Mutex::new(SessionLog::new(label))),
            session_id: None,
            revision: None,
            stalled: None,
            declared: json!({}),
            next_id: 0,
            ended: false,
        }
    }

    /// The session's log.
    pub fn log(&self) -> SharedLog {
        self.log.clone()
    }

    /// The next request id.
    pub fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Another handle on this session (same id, revision and log) for a request sent
    /// while others are in flight; it never ends the session itself.
    pub fn fork(&self) -> HttpSession {
        HttpSession {
            wire: self.wire.clone(),
            log: self.log.clone(),
            session_id: self.session_id.clone(),
            revision: self.revision.clone(),
            stalled: None,
            declared: self.declared.clone(),
            next_id: 0,
            ended: true,
        }
    }

    /// The headers every POST of this session carries: both Accept types, the content type,
    /// the session id and (from 2025-06-18) `MCP-Protocol-Version`.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut headers = vec![
            (
                "Accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        if let Some(id) = &self.session_id {
            headers.push(("Mcp-Session-Id".into(), id.clone()));
        }
        if let Some(revision) = self
            .revision
            .as_deref()
            .filter(|r| *r >= PROTOCOL_VERSION_HEADER_SINCE)
        {
            headers.push(("MCP-Protocol-Version".into(), revision.to_string()));
        }
        headers
    }

    /// Sends a request with `headers` (the session's, as changed by the caller), logs what
    /// comes back and answers server requests on the way.
    pub async fn send(
        &mut self,
        method: Method,
        headers: Vec<(String, String)>,
        body: Option<Vec<u8>>,
        until: Until,
    ) -> Posted {
        let sent = describe_request(&method, &self.wire.target(), &headers, body.as_deref());
        let answers = Arc::new(Mutex::new(Vec::new()));
        let collected = answers.clone();
        let on_message = move |message: &Value| {
            let mut collected = collected.lock().unwrap_or_else(|e| e.into_inner());
            // A flood of server requests gets the first few answered.
            if message.get("method").is_some()
                && message.get("id").is_some()
                && collected.len() < MAX_ANSWERS
            {
                collected.push(message.clone());
            }
        };
        let reply = self
            .wire
            .send(method, &headers, body, &until, on_message)
            .await;
        if let Ok(reply) = &reply {
            let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
            for message in &reply.messages {
                if reply.is_success() || message.get("jsonrpc").is_some() {
                    log.message(&message.to_string(), message);
                }
            }
            for frame in &reply.bad_frames {
                log.refused(frame, "an SSE event whose data is not JSON");
            }
        }
        let requests = std::mem::take(&mut *answers.lock().unwrap_or_else(|e| e.into_inner()));
        for request in requests {
            self.answer_server_request(&request).await;
        }
        Posted { sent, reply }
    }

    /// POSTs a JSON-RPC request with the session's headers and waits for its answer.
    pub async fn call(&mut self, message: Value) -> (Exchange, Posted) {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        if let Some(method) = message.get("method").and_then(Value::as_str) {
            self.lock_log()
                .methods
                .insert(id.to_string(), method.to_string());
        }
        let text = message.to_string();
        let mut headers = self.headers();
        if self.revision.as_deref() >= Some(super::schema::STATELESS) {
            headers.extend(standard_headers(&message));
        }
        let posted = self
            .send(
                Method::POST,
                headers,
                Some(text.clone().into_bytes()),
                Until::Response(id.clone()),
            )
            .await;
        let reply = match &posted.reply {
            Ok(reply) => match reply.response_to(&id) {
                Some(response) => Ok(response.clone()),
                None => {
                    let why = format!("no JSON-RPC response with id {id}: {}", reply.describe());
                    // A server that streams the byte limit without the answer is flooding:
                    // asking it again would only cost another 8 MiB of reading.
                    if reply.timed_out || reply.over_limit {
                        self.stalled = Some(why.clone());
                    }
                    Err(why)
                }
            },
            Err(e) => {
                if e.is_unreachable() {
                    self.stalled = Some(e.to_string());
                }
                Err(e.to_string())
            }
        };
        (Exchange { sent: text, reply }, posted)
    }

    /// A request with the next id.
    pub async fn request(&mut self, method: &str, params: Option<Value>) -> Exchange {
        self.request_posted(method, params).await.0
    }

    /// A request with the next id, with the HTTP exchange.
    pub async fn request_posted(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> (Exchange, Posted) {
        let id = self.next_id();
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.call(message).await
    }

    /// POSTs a notification with the session's headers; reads the whole (normally empty) body.
    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> Posted {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send(
            Method::POST,
            self.headers(),
            Some(message.to_string().into_bytes()),
            Until::End,
        )
        .await
    }

    /// `initialize` offering `revision` (the session id and revision are taken from the
    /// answer), then `notifications/initialized`.
    pub async fn handshake(&mut self, revision: &str) -> Handshake {
        let id = self.next_id();
        let message = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "initialize",
            "params": {
                "protocolVersion": revision,
                "capabilities": self.declared,
                "clientInfo": {"name": "mcp-conformance-validate", "version": env!("CARGO_PKG_VERSION")},
            },
        });
        let (init, init_posted) = self.call(message).await;
        if let Ok(reply) = &init_posted.reply {
            self.session_id = reply.header("mcp-session-id").map(str::to_string);
        }
        let mut initialized = None;
        if let Some(version) = init
            .result()
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
        {
            self.revision = Some(version.to_string());
            self.lock_log().revision = Some(version.to_string());
            initialized = Some(self.notify("notifications/initialized", None).await);
        }
        Handshake {
            init,
            init_posted,
            initialized,
        }
    }

    /// Ends the session with a DELETE (best effort, bounded, not logged), unless it was
    /// ended already or has no id.
    pub async fn close(mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        if self.session_id.is_none() {
            return;
        }
        let mut headers = self.headers();
        headers.retain(|(n, _)| n != "Content-Type");
        let wire = self.wire.clone();
        let bound = wire.timeout().min(Duration::from_secs(2));
        let _ = tokio::time::timeout(
            bound,
            wire.send(Method::DELETE, &headers, None, &Until::End, |_| {}),
        )
        .await;
    }

    /// Marks the session as ended (a check sent its DELETE itself).
    pub fn mark_ended(&mut self) {
        self.ended = true;
    }

    /// Answers a server request that came on a response: `ping` with `{}`, those for declared
    /// client capabilities with canned answers, others -32601.
    async fn answer_server_request(&mut self, message: &Value) {
        if message.get("id").is_none() || message.get("method").and_then(Value::as_str).is_none() {
            return;
        }
        let reply = crate::validate::checks::requests::answer(message, &self.declared);
        let headers = self.headers();
        let _ = self
            .wire
            .send(
                Method::POST,
                &headers,
                Some(reply.to_string().into_bytes()),
                &Until::End,
                |_| {},
            )
            .await;
    }

    fn lock_log(&self) -> std::sync::MutexGuard<'_, SessionLog> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The standard request headers of 2026-07-28 for a request: `Mcp-Method`, and `Mcp-Name`
/// (`params.name` or `params.uri`) for `tools/call`, `resources/read` and `prompts/get`, in
/// the Base64 sentinel form when it is not a plain header-safe value.
pub fn standard_headers(message: &Value) -> Vec<(String, String)> {
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return Vec::new();
    };
    let mut headers = vec![("Mcp-Method".to_string(), method.to_string())];
    let name = match method {
        "tools/call" | "prompts/get" => message.pointer("/params/name"),
        "resources/read" => message.pointer("/params/uri"),
        _ => None,
    };
    if let Some(name) = name.and_then(Value::as_str) {
        headers.push(("Mcp-Name".to_string(), mcp_refclient::header_value(name)));
    }
    headers
}

/// `POST /mcp [Accept: …; Mcp-Session-Id: …] body` for a report.
fn describe_request(
    method: &Method,
    target: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
) -> String {
    let shown: Vec<String> = headers.iter().map(|(n, v)| format!("{n}: {v}")).collect();
    let mut text = format!("{method} {target}");
    if !shown.is_empty() {
        text.push_str(&format!(" [{}]", shown.join("; ")));
    }
    if let Some(body) = body {
        text.push(' ');
        text.push_str(&String::from_utf8_lossy(body));
    }
    text
}

/// Removes a header (name without regard to case) from a request's list.
pub fn without(mut headers: Vec<(String, String)>, name: &str) -> Vec<(String, String)> {
    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    headers
}

/// Sets a header (replacing one of that name) in a request's list.
pub fn with(headers: Vec<(String, String)>, name: &str, value: &str) -> Vec<(String, String)> {
    let mut headers = without(headers, name);
    headers.push((name.to_string(), value.to_string()));
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_join_data_lines_across_chunks_and_line_endings() {
        let mut parser = SseParser::default();
        let mut events = parser.push(b"id: 1\ndata: \n\nevent: message\r\ndata: {\"a\":\r");
        events.extend(parser.push(b"\ndata: 1}\r\n\r\n: comment\rdata:x\r\r\n"));
        assert_eq!(events, ["", "{\"a\":\n1}", "x"]);
    }

    #[test]
    fn standard_headers_name_the_method_and_encode_an_unsafe_name() {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "Hello, 世界"}});
        assert_eq!(
            standard_headers(&call),
            [
                ("Mcp-Method".to_string(), "tools/call".to_string()),
                ("Mcp-Name".into(), "=?base64?SGVsbG8sIOS4lueVjA==?=".into())
            ]
        );
        let read = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "=?base64?literal?="}});
        assert_eq!(
            standard_headers(&read)[1].1,
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        assert_eq!(
            standard_headers(&list),
            [("Mcp-Method".to_string(), "tools/list".to_string())]
        );
    }

    /// A stream that sends the byte limit without the answer stalls the session like silence
    /// does: the next check is not asked, instead of costing another 8 MiB (with a fast reader
    /// a flooding server once chained a dozen such reads, past the run's bound).
    #[tokio::test]
    async fn a_stream_cut_at_the_byte_limit_stalls_the_session() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request).await;
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
            let event =
                "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n".repeat(4096);
            let mut sent = socket.write_all(head.as_bytes()).await;
            while sent.is_ok() {
                sent = socket.write_all(event.as_bytes()).await;
            }
        });
        let wire = Wire::new(
            &format!("http://127.0.0.1:{port}/mcp"),
            &[],
            None,
            Duration::from_secs(60),
        )
        .unwrap();
        let mut session = HttpSession::new(Arc::new(wire), "flood");
        let (exchange, _) = session
            .call(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await;
        let why = exchange.reply.unwrap_err();
        assert!(
            why.contains(&format!("stopped reading at the {MAX_BODY}-byte limit")),
            "{why}"
        );
        assert_eq!(session.stalled.as_deref(), Some(why.as_str()));
    }

    #[test]
    fn a_reply_describes_itself_with_status_type_and_body() {
        let reply = Reply {
            status: 406,
            headers: vec![(
                "content-type".into(),
                "application/json; charset=utf-8".into(),
            )],
            body: b"{\"error\":1}".to_vec(),
            messages: vec![],
            bad_frames: vec![],
            cut: None,
            dropped: 0,
            timed_out: false,
            over_limit: false,
        };
        assert_eq!(
            reply.describe(),
            "406 Not Acceptable (application/json): {\"error\":1}"
        );
    }
}
