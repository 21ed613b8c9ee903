//! One HTTP/1.1 exchange at a time over a fresh connection (TCP, or TLS trusting only the
//! configured roots), with redirects, caller headers and the bearer token handled here.

pub(crate) mod assertion;
mod body;
mod oauth;
mod send;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, StatusCode};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinHandle;
use tokio_rustls::rustls;
use url::Url;

use super::headers::{valid_value, HeaderList};
use super::{HttpServer, Redirects, TokenProvider};
use crate::error::Fate;
use crate::redact::{origin_of, quote};
use crate::McpError;

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
    /// The authorization flow run on a 401 (strict), when configured.
    oauth: Option<super::oauth::OAuthSettings>,
    tls: tokio_rustls::TlsConnector,
    pub(crate) max_body: usize,
    pub(crate) idle: Duration,
    /// Header values and tokens sent so far: a server may echo them in a body the client
    /// quotes, and they never reach an error text.
    secrets: std::sync::Mutex<Vec<String>>,
    /// The scope the last authorization asked for, which a step-up adds to.
    last_scope: std::sync::Mutex<Option<String>>,
    /// The clients registered dynamically, by the issuer of the authorization server that
    /// registered them.
    registered: std::sync::Mutex<std::collections::HashMap<String, oauth::FlowClient>>,
    /// Configured for 2025-03-26: without Protected Resource Metadata, the authorization
    /// server is looked for at the MCP server's origin.
    legacy_discovery: bool,
    /// Test-only rule switches.
    hooks: crate::TestHooks,
    /// `TokenCachedAtConnect`: the one token ever asked for.
    cached_token: std::sync::Mutex<Option<String>>,
    /// `AssertionReused`: the first client assertion signed.
    first_assertion: std::sync::Mutex<Option<String>>,
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
            oauth: server.oauth.clone(),
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
            last_scope: std::sync::Mutex::default(),
            registered: std::sync::Mutex::default(),
            legacy_discovery: config.revision.as_deref() == Some(oauth::LEGACY_DISCOVERY_REVISION),
            hooks: config.hooks.clone(),
            cached_token: std::sync::Mutex::new(None),
            first_assertion: std::sync::Mutex::new(None),
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

    /// Remembers a secret (a header value, a credential of the authorization flow: a code, a
    /// verifier, a token) so that no error text quotes it.
    fn remember_text(&self, text: &str) {
        let mut secrets = self.secrets.lock().unwrap_or_else(|e| e.into_inner());
        if !secrets.iter().any(|s| s == text) {
            secrets.push(text.to_string());
        }
    }

    fn remember_secret(&self, value: &HeaderValue) {
        if let Ok(text) = value.to_str() {
            self.remember_text(text);
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
