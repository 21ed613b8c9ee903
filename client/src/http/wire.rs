//! One HTTP/1.1 exchange at a time over a fresh connection (TCP, or TLS trusting only the
//! configured roots), with redirects, caller headers and the bearer token handled here.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio_rustls::rustls;
use url::Url;

use super::headers::{valid_value, HeaderList};
use super::{HttpServer, Redirects, TokenProvider, MAX_REDIRECTS};
use crate::error::Fate;
use crate::redact::{origin_of, quote};
use crate::stdio::fmt_duration;
use crate::McpError;

/// How much of an error status's body is read to quote it.
const ERROR_BODY_BYTES: usize = 8 * 1024;

/// How long an error status's body is waited for, at most.
const ERROR_BODY_WAIT: Duration = Duration::from_secs(2);

/// What one exchange is for, as its errors name it.
pub(crate) struct Ctx {
    /// `HTTP error reaching <origin>` or `HTTP error on '<method>' reaching <origin>`.
    pub(crate) prefix: String,
    /// The MCP method (or what the exchange does).
    pub(crate) method: String,
    /// Set where the connection itself failed (refused, reset, broken stream): whether the
    /// request may have reached the server. `Alive` otherwise.
    fate: std::sync::Mutex<Fate>,
}

impl Ctx {
    /// A request (the handshake's `initialize` included).
    pub(crate) fn call(endpoint: &Endpoint, method: &str) -> Ctx {
        Ctx {
            prefix: format!("HTTP error reaching {}", endpoint.origin),
            method: method.into(),
            fate: Fate::Alive.into(),
        }
    }

    /// A notification (or a response the client sends).
    pub(crate) fn notification(endpoint: &Endpoint, method: &str) -> Ctx {
        Ctx {
            prefix: format!("HTTP error on '{method}' reaching {}", endpoint.origin),
            method: method.into(),
            fate: Fate::Alive.into(),
        }
    }

    /// What the exchange's failure says about the connection.
    pub(crate) fn fate(&self) -> Fate {
        *self.fate.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A connection failure: `fate` says whether the request may have gone out.
    fn dead(&self, fate: Fate, what: impl std::fmt::Display) -> McpError {
        *self.fate.lock().unwrap_or_else(|p| p.into_inner()) = fate;
        self.transport(what)
    }

    pub(crate) fn transport(&self, what: impl std::fmt::Display) -> McpError {
        McpError::Transport(format!("{}: {what}", self.prefix))
    }

    pub(crate) fn protocol(&self, what: impl std::fmt::Display) -> McpError {
        McpError::Protocol(format!("{}: {what}", self.prefix))
    }
}

/// What to send.
pub(crate) struct Outgoing<'a> {
    pub(crate) method: Method,
    pub(crate) url: &'a Url,
    pub(crate) body: Option<Bytes>,
    /// Headers of the transport's own (`Accept`, `Content-Type`, `Mcp-Session-Id`, …).
    pub(crate) extra: Vec<(HeaderName, HeaderValue)>,
}

/// Aborts the connection task when the reply is dropped, so a stream held open is let go.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A response whose body is read as it comes.
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Incoming,
    /// The URL that answered (after redirects).
    pub(crate) url: Url,
    _conn: AbortOnDrop,
}

impl Reply {
    /// The content type's media type, lowercased (`text/event-stream`), if any.
    pub(crate) fn media_type(&self) -> Option<String> {
        let value = self.headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
        Some(
            value
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase(),
        )
    }
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// The server, and how it is reached.
pub(crate) struct Endpoint {
    pub(crate) url: Url,
    pub(crate) origin: String,
    headers: HeaderList,
    redirects: Redirects,
    token_provider: Option<Arc<dyn TokenProvider>>,
    tls: tokio_rustls::TlsConnector,
    pub(crate) max_body: usize,
    pub(crate) idle: Duration,
    /// Header values and tokens sent so far: a server may echo them in a body the client
    /// quotes, and they never reach an error text.
    secrets: std::sync::Mutex<Vec<String>>,
    /// Test-only rule switches.
    hooks: crate::TestHooks,
    /// `TokenCachedAtConnect`: the one token ever asked for.
    cached_token: std::sync::Mutex<Option<String>>,
}

impl Endpoint {
    /// Checks the URL and the root certificates; sends nothing.
    pub(crate) fn new(
        server: &HttpServer,
        config: &crate::ClientConfig,
    ) -> Result<Endpoint, McpError> {
        let idle = config.timeouts().idle_read;
        let url = Url::parse(&server.url)
            .map_err(|e| McpError::Transport(format!("invalid MCP server URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(McpError::Transport(format!(
                "invalid MCP server URL: '{}' is not an http or https URL with a host",
                origin_of(&url)
            )));
        }
        let origin = origin_of(&url);
        let mut roots = rustls::RootCertStore::empty();
        for (i, pem) in server.root_certificates.iter().enumerate() {
            use rustls_pki_types::pem::PemObject;
            let certs: Vec<_> = rustls_pki_types::CertificateDer::pem_slice_iter(pem)
                .collect::<Result<_, _>>()
                .map_err(|e| {
                    McpError::Transport(format!("root certificate {} is not valid PEM: {e}", i + 1))
                })?;
            if certs.is_empty() {
                return Err(McpError::Transport(format!(
                    "root certificate {} holds no PEM certificate",
                    i + 1
                )));
            }
            for cert in certs {
                roots.add(cert).map_err(|e| {
                    McpError::Transport(format!("root certificate {} was refused: {e}", i + 1))
                })?;
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| McpError::Transport(format!("TLS setup failed: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Endpoint {
            url,
            origin,
            headers: server.headers.clone(),
            redirects: server.redirects,
            token_provider: server.token_provider.clone(),
            tls: tokio_rustls::TlsConnector::from(Arc::new(tls)),
            max_body: server.max_body_bytes.max(1),
            idle,
            secrets: std::sync::Mutex::new(
                server
                    .headers
                    .entries()
                    .iter()
                    .filter_map(|(_, v)| v.to_str().ok().map(str::to_string))
                    .collect(),
            ),
            hooks: config.hooks.clone(),
            cached_token: std::sync::Mutex::new(None),
        })
    }

    /// `text` with every header value and token sent so far, and every key-like part of the
    /// configured URL and of `answering`, replaced by `[redacted]`.
    pub(crate) fn scrub(&self, text: &str, answering: Option<&Url>) -> String {
        let mut text = crate::redact::redact(text, &self.url);
        if let Some(answering) = answering {
            text = crate::redact::redact(&text, answering);
        }
        for part in self.remembered_parts() {
            if part.len() >= MIN_SECRET_CHARS {
                text = text.replace(&part, crate::redact::REDACTED);
            }
        }
        text
    }

    /// Every remembered secret (header values, tokens) and, for a bearer value, the token
    /// alone without its scheme word: what [`Endpoint::scrub`] hides besides the URL's parts.
    fn remembered_parts(&self) -> Vec<String> {
        let secrets = self.secrets.lock().unwrap_or_else(|e| e.into_inner());
        let mut parts = Vec::with_capacity(secrets.len());
        for secret in secrets.iter() {
            parts.push(secret.clone());
            parts.extend(secret.strip_prefix("Bearer ").map(str::to_string));
        }
        parts
    }

    /// [`crate::redact::hide_cut_secret`] against every secret [`Endpoint::scrub`] hides.
    fn hide_cut_secret(&self, text: &str) -> String {
        let mut all = crate::redact::key_like_parts(&self.url);
        all.extend(self.remembered_parts());
        crate::redact::hide_cut_secret(text, all.iter().map(String::as_str), MIN_SECRET_CHARS)
    }

    fn remember_secret(&self, value: &HeaderValue) {
        if let Ok(text) = value.to_str() {
            let mut secrets = self.secrets.lock().unwrap_or_else(|e| e.into_inner());
            if !secrets.iter().any(|s| s == text) {
                secrets.push(text.to_string());
            }
        }
    }

    /// Whether the test hooks break `rule`.
    pub(crate) fn broken(&self, rule: crate::Breakage) -> bool {
        self.hooks.broken.contains(&rule)
    }

    /// Whether two URLs share scheme, host and port (`PortBlindOrigin`: the port is not
    /// compared).
    fn same_origin(&self, a: &Url, b: &Url) -> bool {
        if self.broken(crate::Breakage::PortBlindOrigin) {
            return port_blind_same_origin(a, b);
        }
        origin_of(a) == origin_of(b)
    }

    /// Asks the provider for the token of this request (`TokenCachedAtConnect`: only once).
    async fn ask_token(&self, provider: &dyn TokenProvider) -> Result<String, McpError> {
        if !self.broken(crate::Breakage::TokenCachedAtConnect) {
            return provider.token().await;
        }
        let cached = self
            .cached_token
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        match cached {
            Some(token) => Ok(token),
            None => {
                let token = provider.token().await?;
                *self.cached_token.lock().unwrap_or_else(|e| e.into_inner()) = Some(token.clone());
                Ok(token)
            }
        }
    }

    /// Whether a token provider is configured.
    pub(crate) fn has_token_provider(&self) -> bool {
        self.token_provider.is_some()
    }

    /// `text` from the server, redacted against the configured and the answering URL and
    /// cut to a readable length.
    pub(crate) fn quote(&self, text: &str, answering: &Url) -> String {
        quote(&self.scrub(text, None), answering)
    }

    /// Sends with the bearer token (refreshed once on a 401) and follows redirects.
    pub(crate) async fn send(&self, out: &Outgoing<'_>, ctx: &Ctx) -> Result<Reply, McpError> {
        let Some(provider) = &self.token_provider else {
            return self.send_redirecting(out, None, ctx).await;
        };
        let token = bearer(self.ask_token(provider.as_ref()).await?, ctx)?;
        self.remember_secret(&token);
        let reply = self.send_redirecting(out, Some(&token), ctx).await?;
        if reply.status != StatusCode::UNAUTHORIZED {
            return Ok(reply);
        }
        drop(reply);
        tracing::debug!(target: "mcp_refclient", origin = %self.origin, "401: refreshing the token once");
        let token = bearer(provider.refresh().await?, ctx)?;
        self.remember_secret(&token);
        self.send_redirecting(out, Some(&token), ctx).await
    }

    async fn send_redirecting(
        &self,
        out: &Outgoing<'_>,
        token: Option<&HeaderValue>,
        ctx: &Ctx,
    ) -> Result<Reply, McpError> {
        let mut url = out.url.clone();
        let mut method = out.method.clone();
        let mut body = out.body.clone();
        for hop in 0..=MAX_REDIRECTS {
            let same_host = url.host_str() == self.url.host_str()
                && url.port_or_known_default() == self.url.port_or_known_default();
            let mut headers = HeaderMap::new();
            for (name, value) in self.headers.entries() {
                if !same_host && (name == header::AUTHORIZATION || name == header::COOKIE) {
                    continue;
                }
                headers.insert(name.clone(), value.clone());
            }
            if let (Some(token), true) = (token, same_host) {
                headers.insert(header::AUTHORIZATION, token.clone());
            }
            for (name, value) in &out.extra {
                headers.insert(name.clone(), value.clone());
            }
            let reply = self
                .send_once(&url, &method, body.clone(), headers, ctx)
                .await?;
            let status = reply.status.as_u16();
            if !matches!(status, 301 | 302 | 303 | 307 | 308) {
                return Ok(reply);
            }
            let from = origin_of(&url);
            let location = reply
                .headers
                .get(header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned);
            drop(reply);
            let Some(location) = location else {
                return Err(ctx.protocol(format!(
                    "a {status} redirect from {from} without a valid Location"
                )));
            };
            let next = url.join(&location).map_err(|_| {
                ctx.protocol(format!(
                    "a {status} redirect from {from} to an invalid Location"
                ))
            })?;
            let to = origin_of(&next);
            if !matches!(next.scheme(), "http" | "https") {
                return Err(ctx.transport(format!(
                    "redirect from {from} to {} refused: not http or https",
                    next.scheme()
                )));
            }
            match self.redirects {
                Redirects::None => {
                    return Err(ctx.transport(format!(
                        "redirect from {from} to {to} refused: redirects are disabled"
                    )))
                }
                Redirects::SameOrigin if !self.same_origin(&url, &next) => {
                    let why = if url.scheme() == "https" && next.scheme() == "http" {
                        "another origin (https to http)"
                    } else {
                        "another origin"
                    };
                    return Err(
                        ctx.transport(format!("redirect from {from} to {to} refused: {why}"))
                    );
                }
                _ => {}
            }
            if hop == MAX_REDIRECTS {
                return Err(ctx.transport(format!(
                    "too many redirects: more than {MAX_REDIRECTS} (the limit is {MAX_REDIRECTS}), the last from {from} to {to}"
                )));
            }
            if method == Method::POST && matches!(status, 301..=303) {
                return Err(ctx.transport(format!(
                    "redirect from {from} to {to} refused: a {status} turns the POST into a GET, which an MCP endpoint cannot answer (a server should redirect with 307 or 308)"
                )));
            }
            if status == 303 && method != Method::GET {
                method = Method::GET;
                body = None;
            }
            tracing::debug!(target: "mcp_refclient", "following a {status} redirect from {from} to {to}");
            url = next;
        }
        unreachable!("the loop returns at its last hop")
    }

    /// One request on a fresh connection; waits for the response head, bounded by the idle
    /// timeout.
    async fn send_once(
        &self,
        url: &Url,
        method: &Method,
        body: Option<Bytes>,
        headers: HeaderMap,
        ctx: &Ctx,
    ) -> Result<Reply, McpError> {
        let idle = self.idle;
        let stalled = || {
            McpError::Timeout(format!(
                "{}: no response for {} (idle read timeout) to '{}'; the server may still carry it out",
                ctx.prefix,
                fmt_duration(idle),
                ctx.method
            ))
        };
        let io = tokio::time::timeout(idle, self.connect(url, ctx))
            .await
            .map_err(|_| {
                ctx.transport(format!(
                    "connecting timed out after {} (idle read timeout)",
                    fmt_duration(idle)
                ))
            })??;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(io))
                .await
                .map_err(|e| ctx.dead(Fate::DeadUnsent, e))?;
        let task = AbortOnDrop(tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(target: "mcp_refclient", "HTTP connection ended: {e}");
            }
        }));
        let host = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or("")),
            None => url.host_str().unwrap_or("").to_string(),
        };
        let target = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        };
        let mut request = Request::builder()
            .method(method.clone())
            .uri(target)
            .header(header::HOST, host)
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|e| ctx.transport(format!("invalid request: {e}")))?;
        request.headers_mut().extend(headers);
        let response = tokio::time::timeout(idle, sender.send_request(request))
            .await
            .map_err(|_| stalled())?
            // Some of the request may have gone out before the connection broke.
            .map_err(|e| ctx.dead(Fate::DeadMaybeSent, e))?;
        let (parts, body) = response.into_parts();
        Ok(Reply {
            status: parts.status,
            headers: parts.headers,
            body,
            url: url.clone(),
            _conn: task,
        })
    }

    async fn connect(&self, url: &Url, ctx: &Ctx) -> Result<Box<dyn Io>, McpError> {
        let port = url.port_or_known_default().unwrap_or(80);
        let tcp = match url.host() {
            Some(url::Host::Ipv4(ip)) => TcpStream::connect((ip, port)).await,
            Some(url::Host::Ipv6(ip)) => TcpStream::connect((ip, port)).await,
            Some(url::Host::Domain(name)) => TcpStream::connect((name, port)).await,
            None => return Err(ctx.transport("the URL has no host")),
        }
        .map_err(|e| ctx.dead(Fate::DeadUnsent, e))?;
        let _ = tcp.set_nodelay(true);
        if url.scheme() != "https" {
            return Ok(Box::new(tcp));
        }
        let name = match url.host() {
            Some(url::Host::Ipv4(ip)) => {
                rustls_pki_types::ServerName::IpAddress(std::net::IpAddr::V4(ip).into())
            }
            Some(url::Host::Ipv6(ip)) => {
                rustls_pki_types::ServerName::IpAddress(std::net::IpAddr::V6(ip).into())
            }
            Some(url::Host::Domain(name)) => {
                rustls_pki_types::ServerName::try_from(name.to_string())
                    .map_err(|e| ctx.transport(format!("invalid TLS server name: {e}")))?
            }
            None => return Err(ctx.transport("the URL has no host")),
        };
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|e| ctx.transport(format!("TLS handshake failed: {e}")))?;
        Ok(Box::new(tls))
    }

    /// The next body chunk, bounded by the idle timeout (reset on every read); `None` at
    /// the end.
    pub(crate) async fn next_chunk(
        &self,
        reply: &mut Reply,
        ctx: &Ctx,
    ) -> Result<Option<Bytes>, McpError> {
        loop {
            let frame = tokio::time::timeout(self.idle, reply.body.frame()).await.map_err(|_| {
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
            if body.len() + chunk.len() > self.max_body {
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
        McpError::Http {
            status: reply.status.as_u16(),
            message,
        }
    }
}

/// The test-only `PortBlindOrigin` comparison: scheme and host, the port forgotten.
fn port_blind_same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme() && a.host_str() == b.host_str()
}

/// Shorter values are not worth hiding (and would blot out common words).
const MIN_SECRET_CHARS: usize = 4;

/// The text of a non-success status: `<prefix>: <status> <reason><note>: <quoted body>`, the
/// body redacted against `url` and cut to a readable length.
pub(crate) fn status_text(
    prefix: &str,
    status: StatusCode,
    note: &str,
    body: &str,
    url: &Url,
) -> String {
    let quoted = quote(body, url);
    let reason = status
        .canonical_reason()
        .map(|r| format!(" {r}"))
        .unwrap_or_default();
    let mut message = format!("{prefix}: {}{reason}{note}", status.as_u16());
    if !quoted.is_empty() {
        message.push_str(": ");
        message.push_str(&quoted);
    }
    message
}

/// `Bearer <token>` as a sensitive header value; a token that cannot be one is refused
/// without being shown.
fn bearer(token: String, ctx: &Ctx) -> Result<HeaderValue, McpError> {
    valid_value(&format!("Bearer {token}")).ok_or_else(|| {
        ctx.transport(
            "the token provider gave a token that is not a valid header value (not shown)",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::KEY_LIKE_CHARS;

    /// A small deterministic PRNG (xorshift64*), so the property test needs no dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        /// A key-like word: a `sk-`/`tok_` style prefix and enough random characters.
        fn key(&mut self) -> String {
            const ALPHABET: &[u8] =
                b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
            let prefix = ["sk-live-", "tok_", "key", "Zx9"][self.below(4) as usize];
            let len = KEY_LIKE_CHARS + self.below(20) as usize;
            let mut key = prefix.to_string();
            while key.len() < len {
                key.push(ALPHABET[self.below(ALPHABET.len() as u64) as usize] as char);
            }
            key
        }

        /// A short part (under 8 characters), which stays.
        fn short(&mut self) -> String {
            ["mcp", "v1", "api", "a", "x=1", "rpc"][self.below(6) as usize].to_string()
        }
    }

    #[test]
    fn no_key_like_part_of_thousands_of_urls_reaches_an_error() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..5000 {
            let mut keys = Vec::new();
            let host = ["127.0.0.1", "localhost", "[::1]"][rng.below(3) as usize];
            let port = 1024 + rng.below(60000);
            let scheme = if rng.below(2) == 0 { "http" } else { "https" };
            let mut userinfo = String::new();
            if rng.below(3) == 0 {
                let (user, pass) = (rng.key(), rng.key());
                userinfo = format!("{user}:{pass}@");
                keys.extend([user, pass]);
            }
            let mut path = String::new();
            for _ in 0..1 + rng.below(4) {
                let segment = if rng.below(2) == 0 {
                    rng.short()
                } else {
                    rng.key()
                };
                if segment.len() >= KEY_LIKE_CHARS {
                    keys.push(segment.clone());
                }
                path.push('/');
                path.push_str(&segment);
            }
            let mut pairs = Vec::new();
            for _ in 0..rng.below(4) {
                let (name, value) = if rng.below(2) == 0 {
                    ("k", rng.key())
                } else {
                    ("apikey", rng.short())
                };
                let pair = format!("{name}={value}");
                if value.len() >= KEY_LIKE_CHARS {
                    keys.push(value.clone());
                }
                if pair.len() >= KEY_LIKE_CHARS {
                    keys.push(pair.clone());
                }
                pairs.push(pair);
            }
            let query = if pairs.is_empty() {
                String::new()
            } else {
                format!("?{}", pairs.join("&"))
            };
            let text = format!("{scheme}://{userinfo}{host}:{port}{path}{query}");
            let url = Url::parse(&text).unwrap();
            let origin = crate::redact::origin_of(&url);
            // A body that quotes the URL, its parts one by one, and a JSON-RPC-ish message.
            let body = format!(
                "no route for {text}; parts: {}; {{\"error\":{{\"message\":\"bad key {}\"}}}}",
                keys.join(" / "),
                keys.first().cloned().unwrap_or_default()
            );
            let status = [400u16, 401, 403, 404, 500, 502][rng.below(6) as usize];
            let prefix = format!("HTTP error reaching {origin}");
            let message = status_text(
                &prefix,
                StatusCode::from_u16(status).unwrap(),
                "",
                &body,
                &url,
            );
            assert!(
                message.starts_with(&format!("HTTP error reaching {origin}: {status}")),
                "round {round}: {message}"
            );
            for key in &keys {
                assert!(
                    !message.contains(key.as_str()),
                    "round {round}: '{key}' in {message}"
                );
            }
            let note = crate::redact::redact(&body, &url);
            for key in &keys {
                assert!(
                    !note.contains(key.as_str()),
                    "round {round}: '{key}' in {note}"
                );
            }
        }
    }

    #[test]
    fn short_parts_stay_readable() {
        let url = Url::parse("http://127.0.0.1:4000/mcp?a=1").unwrap();
        let text = status_text(
            "HTTP error reaching http://127.0.0.1:4000",
            StatusCode::NOT_FOUND,
            "",
            "no /mcp?a=1 here",
            &url,
        );
        assert_eq!(
            text,
            "HTTP error reaching http://127.0.0.1:4000: 404 Not Found: no /mcp?a=1 here"
        );
    }
}
