//! One request over a fresh connection (TCP, or TLS trusting the system roots plus
//! `--ca-cert`), bounded by one `--timeout` from connect to the end of the body, and its
//! answer read: a JSON body to its end, an SSE body event by event, or only the head.

use super::headers::check_headers;
use super::reply::{Reply, Until, WireError, KEPT_MESSAGES, MAX_BODY};
use super::sse::SseParser;
use super::tls::tls_connector;
use crate::stdio::is_response_to;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use url::Url;

/// How much of an SSE body is kept to be quoted (its events are parsed as they come).
const KEPT_SSE_BODY: usize = 64 << 10;

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// The endpoint and how to reach it.
pub struct Wire {
    url: Url,
    headers: Vec<(HeaderName, HeaderValue)>,
    tls: Option<tokio_rustls::TlsConnector>,
    timeout: Duration,
    /// Why the server stalled, once a request to it ran out of time: later requests are not
    /// sent (each would wait a whole `--timeout` again, and a run's checks ask dozens).
    stalled: std::sync::Mutex<Option<String>>,
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
        let shown = crate::redact::public_url(url);
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
            stalled: std::sync::Mutex::new(None),
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

    async fn connect(&self, deadline: Instant, bound: Duration) -> Result<Box<dyn Io>, WireError> {
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
            Err(_) => return Err(fail(format!("no connection within {bound:?}"))),
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
            Err(_) => Err(fail(format!("no TLS handshake within {bound:?}"))),
        }
    }

    /// Why the server stalled, once a request to it ran out of time.
    pub fn stalled(&self) -> Option<String> {
        self.stalled
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Sends one request over a fresh connection and reads its answer as far as `until`
    /// says; `on_message` sees each message as it arrives (to answer server requests).
    ///
    /// Once a request awaiting a response or a whole body ran out of time or read the byte
    /// limit without its end, the server is stalled: no later request is sent
    /// ([`WireError::Stalled`]), so a run against a server that stopped answering, or floods,
    /// ends within its time and memory bounds. A stream read only to its head or its
    /// first notification may stay open by design and never stalls the server.
    pub async fn send(
        &self,
        method: Method,
        headers: &[(String, String)],
        body: Option<Vec<u8>>,
        until: &Until,
        on_message: impl FnMut(&Value) + Send,
    ) -> Result<Reply, WireError> {
        self.send_within(self.timeout, method, headers, body, until, on_message)
            .await
    }

    /// [`Wire::send`] bounded by `bound` instead of `--timeout` (a handshake's patience with
    /// a server slow to answer, see [`crate::patience`]).
    pub async fn send_within(
        &self,
        bound: Duration,
        method: Method,
        headers: &[(String, String)],
        body: Option<Vec<u8>>,
        until: &Until,
        on_message: impl FnMut(&Value) + Send,
    ) -> Result<Reply, WireError> {
        if let Some(why) = self.stalled() {
            return Err(WireError::Stalled(why));
        }
        let result = self
            .exchange(bound, method, headers, body, until, on_message)
            .await;
        let ran_out = match &result {
            Err(e @ WireError::NoAnswer(_)) => Some(e.to_string()),
            Ok(reply) if reply.timed_out || reply.over_limit => reply.cut.clone(),
            _ => None,
        };
        if let (Some(why), Until::Response(_) | Until::End) = (ran_out, until) {
            self.stalled
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(why);
        }
        result
    }

    /// One request and its answer, bounded by one `--timeout` (see [`Wire::send`]).
    async fn exchange(
        &self,
        bound: Duration,
        method: Method,
        headers: &[(String, String)],
        body: Option<Vec<u8>>,
        until: &Until,
        mut on_message: impl FnMut(&Value) + Send,
    ) -> Result<Reply, WireError> {
        let deadline = Instant::now() + bound;
        let io = self.connect(deadline, bound).await?;
        let handshake = hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(io));
        let (mut sender, connection) = match tokio::time::timeout(left(deadline), handshake).await {
            Ok(Ok(pair)) => pair,
            Ok(Err(e)) => return Err(WireError::Broken(e.to_string())),
            Err(_) => return Err(WireError::NoAnswer(bound)),
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
                Err(_) => return Err(WireError::NoAnswer(bound)),
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
            refused: false,
        };
        if matches!(until, Until::Head) {
            drop(task);
            return Ok(reply);
        }
        let sse = reply.is_sse();
        // Sized once from the announced length (up to the limit), not doubled as it grows:
        // several bodies at the limit are read at once.
        if !sse {
            let announced = parts_length(&reply).unwrap_or(0).min(MAX_BODY);
            reply.body.reserve_exact(announced);
        }
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
                    reply.cut = Some(format!("no end of the body within {bound:?}"));
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
                    let parsed = crate::weight::check(event.as_bytes()).and_then(|()| {
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
                                crate::text::cut(&event, crate::log::QUOTED_LINE)
                            ))
                        }
                        Err(_) => reply.dropped += 1,
                    }
                }
                let added = &reply.messages[before..];
                let done = match until {
                    Until::Response(id) => added.iter().any(|m| is_response_to(m, id)),
                    Until::Replay(ids) => added
                        .iter()
                        .any(|m| ids.iter().any(|id| is_response_to(m, id))),
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
            let parsed = crate::weight::check(&reply.body).and_then(|()| {
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
                    reply.refused = true;
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

/// The `Content-Length` a response announced.
fn parts_length(reply: &Reply) -> Option<usize> {
    reply.header("content-length")?.trim().parse().ok()
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
