//! The MCP authorization flow's pieces a caller supplies (the strict profile): the
//! pre-registered client, the user-agent step ([`Authorizer`]) and where tokens are kept
//! ([`TokenStore`]). The flow itself runs in the transport: on a `401` it reads
//! `WWW-Authenticate`, discovers the Protected Resource Metadata (RFC 9728) and the
//! authorization server's metadata (RFC 8414, OpenID Connect discovery) in the spec's order,
//! refuses an authorization server that does not advertise PKCE `S256`, sends `resource`
//! (RFC 8707) in the authorization and the token request, and retries the request once with
//! the token. A client holding a private key ([`ClientKey`]) authenticates at the token
//! endpoint with a signed assertion (`private_key_jwt`, RFC 7523) instead of a secret.
//! Tokens, codes, the `code_verifier`, the client secret, the private key and the assertions
//! never appear in an error or a log line.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::BoxFuture;
use crate::McpError;

pub use super::wire::assertion::{ClientKey, KeyError, ASSERTION_LIFETIME};

/// The user-agent step: given the authorization URL, return the URL of the redirect it ended
/// at (the client's `redirect_uri` with `code` and `state`, or `error`).
pub trait Authorizer: Send + Sync {
    /// Opens `authorization_url` and returns where the authorization server sent the user
    /// agent back.
    fn authorize(&self, authorization_url: String) -> BoxFuture<'_, Result<String, McpError>>;
}

/// Tokens issued for one MCP server. Their `Debug` shows neither.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthTokens {
    /// The access token, sent as `Authorization: Bearer` to that server only.
    pub access_token: String,
    /// The refresh token, when one was issued.
    pub refresh_token: Option<String>,
}

impl std::fmt::Debug for OAuthTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthTokens")
            .field("access_token", &"[sensitive]")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "[sensitive]"),
            )
            .finish()
    }
}

/// Where tokens are kept, by the canonical URI of the MCP server they were issued for.
pub trait TokenStore: Send + Sync {
    /// The tokens kept for `resource`.
    fn load(&self, resource: &str) -> Option<OAuthTokens>;
    /// Keeps `tokens` for `resource`, replacing any kept before.
    fn save(&self, resource: &str, tokens: OAuthTokens);
}

/// A [`TokenStore`] in memory: tokens live as long as it does.
#[derive(Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, OAuthTokens>>,
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, resource: &str) -> Option<OAuthTokens> {
        let tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        tokens.get(resource).cloned()
    }

    fn save(&self, resource: &str, tokens: OAuthTokens) {
        let mut all = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        all.insert(resource.to_string(), tokens);
    }
}

/// The authorization flow's settings: a pre-registered client (or none), its redirect URI,
/// the user-agent step and the token store.
#[derive(Clone)]
pub struct OAuthSettings {
    /// The pre-registered client id; `None`: the client registers at each authorization
    /// server that offers dynamic client registration (RFC 7591), once per issuer.
    pub client_id: Option<String>,
    /// The HTTPS URL of the client's metadata document (a Client ID Metadata Document): its
    /// client id, without a pre-registered one, at an authorization server that advertises
    /// `client_id_metadata_document_supported`.
    pub client_metadata_url: Option<String>,
    /// Machine to machine: the token is asked for with the client-credentials grant (the
    /// OAuth Client Credentials extension) and the pre-registered client's credentials; the
    /// user agent is never involved.
    pub client_credentials: bool,
    /// The pre-registered client's secret (a confidential client authenticates with
    /// `client_secret_basic`); `None` for a public client.
    pub client_secret: Option<String>,
    /// The pre-registered client's EC P-256 private key, for `private_key_jwt` (RFC 7523
    /// section 2.2): each token request then carries a new ES256 `client_assertion` signed
    /// with it instead of the secret (where the authorization server lists `private_key_jwt`
    /// in `token_endpoint_auth_methods_supported`, or where no secret is held). A secret:
    /// never shown, only its signatures are sent.
    pub private_key: Option<ClientKey>,
    /// The redirect URI registered for the client.
    pub redirect_uri: String,
    /// The user-agent step.
    pub authorizer: Arc<dyn Authorizer>,
    /// Where tokens are kept.
    pub store: Arc<dyn TokenStore>,
}

impl OAuthSettings {
    /// A public client `client_id` with `redirect_uri`, tokens kept in memory.
    pub fn new(
        client_id: impl Into<String>,
        redirect_uri: impl Into<String>,
        authorizer: Arc<dyn Authorizer>,
    ) -> Self {
        OAuthSettings {
            client_id: Some(client_id.into()),
            client_metadata_url: None,
            client_credentials: false,
            client_secret: None,
            private_key: None,
            redirect_uri: redirect_uri.into(),
            authorizer,
            store: Arc::new(MemoryTokenStore::default()),
        }
    }
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[sensitive]"),
            )
            .field(
                "private_key",
                &self.private_key.as_ref().map(|_| "[sensitive]"),
            )
            .finish_non_exhaustive()
    }
}

/// An [`Authorizer`] for an authorization server that approves at once (a test server): it
/// plays the user agent without a browser, following the server's redirects (plain HTTP, at
/// most [`super::MAX_REDIRECTS`]) until one leads to `redirect_uri`, which it returns
/// without requesting it.
#[derive(Clone, Debug)]
pub struct FollowRedirects {
    /// The redirect URI the flow ends at.
    pub redirect_uri: String,
}

impl Authorizer for FollowRedirects {
    fn authorize(&self, authorization_url: String) -> BoxFuture<'_, Result<String, McpError>> {
        Box::pin(async move {
            let mut url = url::Url::parse(&authorization_url)
                .map_err(|e| McpError::Transport(format!("invalid authorization URL: {e}")))?;
            for _ in 0..=super::MAX_REDIRECTS {
                if url.as_str().starts_with(&self.redirect_uri) {
                    return Ok(url.to_string());
                }
                let location = get_location(&url).await?;
                url = url.join(&location).map_err(|_| {
                    McpError::Transport(
                        "the authorization server redirected to an invalid URL".into(),
                    )
                })?;
            }
            Err(McpError::Transport(
                "the authorization server never redirected to the redirect URI".into(),
            ))
        })
    }
}

/// One plain-HTTP GET of `url`: the `Location` of its redirect.
async fn get_location(url: &url::Url) -> Result<String, McpError> {
    use http_body_util::Empty;
    use hyper::body::Bytes;
    let origin = crate::redact::origin_of(url);
    let fail = |what: String| McpError::Transport(format!("authorization at {origin}: {what}"));
    if url.scheme() != "http" {
        return Err(fail(
            "only plain-HTTP authorization servers are followed".into(),
        ));
    }
    let host = url.host_str().unwrap_or_default().to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| fail(format!("connect: {e}")))?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake::<_, Empty<Bytes>>(hyper_util::rt::TokioIo::new(tcp))
            .await
            .map_err(|e| fail(format!("handshake: {e}")))?;
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_string(),
    };
    let request = hyper::Request::get(target)
        .header(hyper::header::HOST, format!("{host}:{port}"))
        .body(Empty::new())
        .map_err(|e| fail(format!("invalid request: {e}")))?;
    let response = sender.send_request(request).await;
    task.abort();
    let response = response.map_err(|e| fail(format!("no answer: {e}")))?;
    if !response.status().is_redirection() {
        return Err(fail(format!(
            "answered {} instead of a redirect",
            response.status().as_u16()
        )));
    }
    response
        .headers()
        .get(hyper::header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .map(str::to_string)
        .ok_or_else(|| fail("a redirect without a Location".into()))
}
