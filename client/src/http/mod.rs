//! The HTTP transports: Streamable HTTP ([`streamable`]) and the legacy HTTP+SSE transport of
//! 2024-11-05 ([`legacy`]), over one HTTP/1.1 client ([`wire`]) that follows redirects,
//! sets headers and attaches tokens itself.

mod headers;
pub(crate) mod legacy;
mod listen;
pub mod oauth;
mod sse;
pub(crate) mod streamable;
mod wire;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

pub use headers::HeaderList;

use crate::McpError;

/// A boxed future, as [`TokenProvider`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Supplies the bearer token of an HTTP server: asked on every request; on a 401,
/// `refresh()` runs once and the request is retried with the new token. The token never
/// appears in errors, logs or debug output.
pub trait TokenProvider: Send + Sync {
    /// The current token.
    fn token(&self) -> BoxFuture<'_, Result<String, McpError>>;
    /// A new token, after the server refused the current one.
    fn refresh(&self) -> BoxFuture<'_, Result<String, McpError>>;
}

/// Which redirects the HTTP transports follow (at most [`MAX_REDIRECTS`] hops).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Redirects {
    /// Within the URL's own origin (scheme, host and port) only.
    #[default]
    SameOrigin,
    /// None: every redirect is an error.
    None,
    /// Anywhere; `Authorization` and `Cookie` are dropped on a hop to another host.
    Any,
}

/// The most redirects followed for one request; one more is an error.
pub const MAX_REDIRECTS: usize = 10;

/// The default bound on a response body (and on one SSE event): 16 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// An MCP server reached over HTTP.
#[derive(Clone)]
pub struct HttpServer {
    /// The endpoint (Streamable HTTP) or the SSE stream's URL (legacy HTTP+SSE).
    pub url: String,
    /// Headers sent on every request.
    pub headers: HeaderList,
    /// Which redirects are followed.
    pub redirects: Redirects,
    /// Supplies `Authorization: Bearer <token>`, refreshed once on a 401.
    pub token_provider: Option<Arc<dyn TokenProvider>>,
    /// The authorization flow (strict): on a 401, discover the authorization server,
    /// authorize with PKCE and `resource`, and retry with the token. Takes the place of
    /// `token_provider` when both are set.
    pub oauth: Option<oauth::OAuthSettings>,
    /// PEM root certificates trusted for `https` (the only ones trusted).
    pub root_certificates: Vec<Vec<u8>>,
    /// The bound on a response body and on one SSE event, in bytes (default 16 MiB).
    pub max_body_bytes: usize,
}

impl HttpServer {
    /// A server at `url` with no headers, same-origin redirects and the default bounds.
    pub fn new(url: impl Into<String>) -> Self {
        HttpServer {
            url: url.into(),
            ..Default::default()
        }
    }
}

impl Default for HttpServer {
    fn default() -> Self {
        HttpServer {
            url: String::new(),
            headers: HeaderList::default(),
            redirects: Redirects::default(),
            token_provider: None,
            oauth: None,
            root_certificates: Vec::new(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let origin = url::Url::parse(&self.url)
            .map(|u| crate::redact::origin_of(&u))
            .unwrap_or_else(|_| "[invalid url]".into());
        f.debug_struct("HttpServer")
            .field("origin", &origin)
            .field("headers", &self.headers)
            .field("redirects", &self.redirects)
            .field(
                "token_provider",
                &self.token_provider.as_ref().map(|_| "[sensitive]"),
            )
            .field("oauth", &self.oauth)
            .field("root_certificates", &self.root_certificates.len())
            .field("max_body_bytes", &self.max_body_bytes)
            .finish()
    }
}

/// The error of a call that ran out of its whole-call bound.
pub(crate) fn timed_out(method: &str, bound: Duration) -> McpError {
    McpError::Timeout(format!(
        "MCP call '{method}' timed out after {}; the server may still carry it out",
        crate::stdio::fmt_duration(bound)
    ))
}
