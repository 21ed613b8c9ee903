//! The authorization flow on a `401` (see [`crate::http::oauth`]): discovery, PKCE, the
//! user-agent step and the token request, then the request again with the token.

use base64::Engine;
use hyper::body::Bytes;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, StatusCode};
use serde_json::{json, Value};
use url::Url;

use crate::http::oauth::{OAuthSettings, OAuthTokens};
use crate::redact::origin_of;
use crate::{Breakage, McpError};

use super::{bearer, Ctx, Endpoint, Outgoing, Reply};

/// How many times one request is authorized again for a `403 insufficient_scope` (the
/// step-up flow) before the 403 is the answer: the spec's "no more than a few times".
pub(crate) const MAX_STEP_UPS: usize = 1;

/// The `StepUpUnlimited` test switch's bound: high enough to be seen, never endless.
const UNLIMITED_STEP_UPS: usize = 5;

/// What a `WWW-Authenticate: Bearer` challenge says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    /// `resource_metadata`: the URL of the Protected Resource Metadata.
    pub(crate) resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs.
    pub(crate) scope: Option<String>,
    /// `error`: `invalid_token`, `insufficient_scope`, ….
    pub(crate) error: Option<String>,
}

impl Challenge {
    /// The parameters of the `Bearer` challenge among `headers`' `WWW-Authenticate` values.
    pub(crate) fn parse(headers: &HeaderMap) -> Challenge {
        let mut challenge = Challenge::default();
        for value in headers.get_all(header::WWW_AUTHENTICATE) {
            let Ok(text) = value.to_str() else { continue };
            let Some(rest) = strip_scheme(text.trim_start()) else {
                continue;
            };
            for (name, value) in auth_params(rest) {
                match name.to_ascii_lowercase().as_str() {
                    "resource_metadata" => challenge.resource_metadata = Some(value),
                    "scope" => challenge.scope = Some(value),
                    "error" => challenge.error = Some(value),
                    _ => {}
                }
            }
        }
        challenge
    }
}

fn strip_scheme(text: &str) -> Option<&str> {
    let (scheme, rest) = text.split_at(text.find(' ').unwrap_or(text.len()));
    scheme.eq_ignore_ascii_case("bearer").then_some(rest)
}

/// `name=value` and `name="quoted \" value"` pairs separated by commas (RFC 9110 §11.2).
fn auth_params(text: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let name: String = std::iter::from_fn(|| chars.next_if(|c| *c != '=' && *c != ','))
            .collect::<String>()
            .trim()
            .to_string();
        if name.is_empty() || chars.next() != Some('=') {
            return params;
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            value = std::iter::from_fn(|| chars.next_if(|c| *c != ','))
                .collect::<String>()
                .trim()
                .to_string();
        }
        params.push((name, value));
    }
}

/// The Protected Resource Metadata URLs to try, in the spec's order.
pub(crate) fn resource_metadata_urls(
    resource: &Url,
    challenge: &Challenge,
    broken: impl Fn(Breakage) -> bool,
) -> Vec<Url> {
    if let Some(url) = challenge
        .resource_metadata
        .as_deref()
        .and_then(|u| Url::parse(u).ok())
        .filter(|_| !broken(Breakage::ChallengeMetadataIgnored))
    {
        return vec![url];
    }
    let mut urls = Vec::new();
    let path = resource.path().trim_end_matches('/');
    let root = |p: &str| {
        let mut url = resource.clone();
        url.set_path(p);
        url.set_query(None);
        url.set_fragment(None);
        url
    };
    if !path.is_empty() && !broken(Breakage::PrmPathAwareSkipped) {
        urls.push(root(&format!(
            "/.well-known/oauth-protected-resource{path}"
        )));
    }
    urls.push(root("/.well-known/oauth-protected-resource"));
    urls
}

/// The authorization server metadata URLs of `issuer`, in the spec's priority order.
pub(crate) fn server_metadata_urls(issuer: &Url, broken: impl Fn(Breakage) -> bool) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/').to_string();
    let at = |p: String| {
        let mut url = issuer.clone();
        url.set_path(&p);
        url.set_query(None);
        url.set_fragment(None);
        url
    };
    let mut urls = vec![at(format!("/.well-known/oauth-authorization-server{path}"))];
    if broken(Breakage::OAuthMetadataOnly) {
        return urls;
    }
    urls.push(at(format!("/.well-known/openid-configuration{path}")));
    if !path.is_empty() {
        urls.push(at(format!("{path}/.well-known/openid-configuration")));
    }
    urls
}

/// The scope to ask for: the challenge's, else every one of `scopes_supported`, else none.
pub(crate) fn select_scope(
    challenge: &Challenge,
    metadata: &Value,
    broken: impl Fn(Breakage) -> bool,
) -> Option<String> {
    if let Some(scope) = challenge
        .scope
        .clone()
        .filter(|_| !broken(Breakage::ChallengeScopeIgnored))
    {
        return Some(scope);
    }
    if broken(Breakage::ScopesSupportedIgnored) {
        return None;
    }
    let scopes: Vec<&str> = metadata
        .get("scopes_supported")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// Whether the authorization server's metadata lists `value` in its array `field`.
pub(crate) fn metadata_lists(metadata: &Value, field: &str, value: &str) -> bool {
    metadata
        .get(field)
        .and_then(Value::as_array)
        .is_some_and(|list| list.iter().any(|v| v.as_str() == Some(value)))
}

/// The scope that asks for a refresh token (OpenID Connect Core 1.0 section 11).
const OFFLINE_ACCESS: &str = "offline_access";

/// `scope` with `offline_access` added when the authorization server's metadata lists it in
/// `scopes_supported`; no scope stays none.
pub(crate) fn with_offline_access(
    scope: Option<String>,
    metadata: &Value,
    broken: impl Fn(Breakage) -> bool,
) -> Option<String> {
    let listed = metadata_lists(metadata, "scopes_supported", OFFLINE_ACCESS);
    let scope = scope?;
    if !(listed || broken(Breakage::OfflineAccessAlways))
        || scope.split_whitespace().any(|s| s == OFFLINE_ACCESS)
    {
        return Some(scope);
    }
    Some(format!("{scope} {OFFLINE_ACCESS}"))
}

/// The scopes of `previous` and then of `added`, each once; none when both are empty.
pub(crate) fn scope_union(previous: Option<&str>, added: Option<&str>) -> Option<String> {
    let mut scopes: Vec<&str> = Vec::new();
    for scope in [previous, added]
        .into_iter()
        .flatten()
        .flat_map(str::split_whitespace)
    {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// A random base64url string of `bytes` random bytes.
pub(super) fn random(bytes: usize) -> Result<String, McpError> {
    use ring::rand::SecureRandom;
    let mut buf = vec![0u8; bytes];
    ring::rand::SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| McpError::Transport("authorization: no random numbers".into()))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

/// The PKCE `S256` challenge of `verifier`.
pub(crate) fn s256(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// Whether the Protected Resource Metadata's `resource` is `resource`, the MCP server's
/// canonical URI (RFC 9728 section 3.3; scheme and host without regard to case).
pub(crate) fn prm_names_resource(prm: &Value, resource: &str) -> bool {
    prm.get("resource")
        .and_then(Value::as_str)
        .and_then(|r| Url::parse(r).ok())
        .is_some_and(|r| r.as_str() == resource)
}

/// The client the flow runs as at one authorization server: pre-registered or registered.
#[derive(Clone)]
pub(crate) struct FlowClient {
    /// The client id.
    pub(super) id: String,
    /// Its secret, for a confidential client.
    pub(super) secret: Option<String>,
}

/// The client metadata document's URL, to use as the client id where the authorization
/// server's metadata says `client_id_metadata_document_supported`.
fn metadata_document(
    oauth: &OAuthSettings,
    metadata: &Value,
    broken: impl Fn(Breakage) -> bool,
) -> Option<String> {
    let supported = metadata
        .get("client_id_metadata_document_supported")
        .and_then(Value::as_bool)
        == Some(true);
    oauth
        .client_metadata_url
        .clone()
        .filter(|_| supported && !broken(Breakage::MetadataDocumentIgnored))
}

/// The revision whose clients, finding no Protected Resource Metadata, take the MCP server's
/// origin for the authorization server, and its default endpoints when it has no metadata.
pub(crate) const LEGACY_DISCOVERY_REVISION: &str = "2025-03-26";

/// The 2025-03-26 authorization base URL: the MCP server's URL without its path.
pub(crate) fn authorization_base(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The metadata of a 2025-03-26 authorization server without any: its default endpoints
/// at the authorization base URL `base`. PKCE `S256` is taken as supported: OAuth 2.1
/// requires it of every authorization server.
pub(crate) fn default_endpoints(base: &str) -> Value {
    json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "code_challenge_methods_supported": ["S256"],
    })
}

/// `url` as the canonical URI of the MCP server: no query, no fragment.
pub(crate) fn canonical_resource(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

impl Endpoint {
    /// Sends with the token kept for this server; on a `401`, runs the authorization flow
    /// once and sends again with its token.
    pub(crate) async fn send_authorized(
        &self,
        out: &Outgoing<'_>,
        oauth: &OAuthSettings,
        ctx: &Ctx,
    ) -> Result<Reply, McpError> {
        let resource = canonical_resource(&self.url);
        let token = match oauth.store.load(&resource) {
            Some(tokens) => Some(self.bearer_of(tokens.access_token, ctx)?),
            None => None,
        };
        let mut reply = self.send_with_token(out, token.as_ref(), ctx).await?;
        let mut authorized = false;
        let mut step_ups = 0;
        let limit = match self.broken(Breakage::StepUpUnlimited) {
            true => UNLIMITED_STEP_UPS,
            false => MAX_STEP_UPS,
        };
        loop {
            let challenge = Challenge::parse(&reply.headers);
            let insufficient = reply.status == StatusCode::FORBIDDEN
                && challenge.error.as_deref() == Some("insufficient_scope");
            let mut refresh = None;
            match (reply.status, insufficient) {
                (StatusCode::UNAUTHORIZED, _) if !authorized => {
                    authorized = true;
                    refresh = self.refresh_token_of(oauth, &resource);
                }
                (_, true) if step_ups < limit && !self.broken(Breakage::NoStepUp) => {
                    step_ups += 1;
                }
                _ => return Ok(reply),
            }
            drop(reply);
            tracing::debug!(target: "mcp_refclient", origin = %self.origin, step_ups, "authorizing");
            let tokens = self
                .authorize(oauth, &challenge, refresh, &resource, ctx)
                .await?;
            let token = self.bearer_of(tokens.access_token.clone(), ctx)?;
            oauth.store.save(&resource, tokens);
            reply = self.send_with_token(out, Some(&token), ctx).await?;
        }
    }

    /// Whether the authorization response's `iss` is `issuer`: a plain string comparison,
    /// nothing normalized (`IssNormalized`: a trailing slash ignored).
    fn same_issuer(&self, iss: &str, issuer: &str) -> bool {
        iss == issuer || self.broken_iss_normalized(iss, issuer)
    }

    /// `IssNormalized`: `iss` taken for `issuer` when they differ by a trailing slash.
    fn broken_iss_normalized(&self, iss: &str, issuer: &str) -> bool {
        self.broken(Breakage::IssNormalized)
            && iss.trim_end_matches('/') == issuer.trim_end_matches('/')
    }

    /// The scope to ask for: on a step-up (`insufficient_scope`), the one asked for last
    /// with the challenge's added; it becomes the one asked for last.
    fn step_up_scope(&self, challenge: &Challenge, scope: Option<String>) -> Option<String> {
        let mut last = self.last_scope.lock().unwrap_or_else(|e| e.into_inner());
        let step_up = challenge.error.as_deref() == Some("insufficient_scope")
            && !self.broken(Breakage::StepUpScopesReplaced);
        let scope = match step_up {
            true => scope_union(last.as_deref(), scope.as_deref()),
            false => scope,
        };
        last.clone_from(&scope);
        scope
    }

    /// The refresh token kept for `resource`, to try before a new authorization.
    fn refresh_token_of(&self, oauth: &OAuthSettings, resource: &str) -> Option<String> {
        if self.broken(Breakage::NoRefresh) {
            return None;
        }
        oauth.store.load(resource)?.refresh_token
    }

    async fn send_with_token(
        &self,
        out: &Outgoing<'_>,
        token: Option<&HeaderValue>,
        ctx: &Ctx,
    ) -> Result<Reply, McpError> {
        if let (Some(token), true) = (token, self.broken(Breakage::TokenInQuery)) {
            let mut url = out.url.clone();
            let value = token.to_str().unwrap_or_default();
            let value = value.strip_prefix("Bearer ").unwrap_or(value);
            url.query_pairs_mut().append_pair("access_token", value);
            let moved = Outgoing {
                method: out.method.clone(),
                url: &url,
                body: out.body.clone(),
                extra: out.extra.clone(),
            };
            return self.send_redirecting(&moved, Some(token), ctx).await;
        }
        self.send_redirecting(out, token, ctx).await
    }

    fn bearer_of(&self, token: String, ctx: &Ctx) -> Result<HeaderValue, McpError> {
        self.remember_text(&token);
        let value = bearer(token, ctx)?;
        self.remember_secret(&value);
        Ok(value)
    }

    /// The flow: metadata, then the `refresh_token` grant when there is a refresh token to
    /// try, else (or when it is refused) PKCE, the user agent, the token.
    async fn authorize(
        &self,
        oauth: &OAuthSettings,
        challenge: &Challenge,
        refresh: Option<String>,
        resource: &str,
        ctx: &Ctx,
    ) -> Result<OAuthTokens, McpError> {
        let fail = |what: String| {
            McpError::Transport(format!("authorization for {}: {what}", self.origin))
        };
        if let Some(secret) = &oauth.client_secret {
            self.remember_text(secret);
        }
        let broken = |b| self.broken(b);
        // Protected Resource Metadata.
        let mut prm = None;
        let mut tried = Vec::new();
        for url in resource_metadata_urls(&self.url, challenge, broken) {
            tried.push(url.path().to_string());
            if let Some(doc) = self.get_json(&url, ctx).await? {
                prm = Some(doc);
                break;
            }
        }
        let legacy = self.legacy_discovery && prm.is_none();
        let prm = match prm {
            Some(prm) => prm,
            // 2025-03-26: the authorization server at the MCP server's origin.
            None if legacy => json!({ "authorization_servers": [authorization_base(&self.url)] }),
            None => {
                return Err(fail(format!(
                    "no protected resource metadata found (tried {})",
                    tried.join(", ")
                )))
            }
        };
        if !legacy
            && !prm_names_resource(&prm, resource)
            && !self.broken(Breakage::PrmResourceUnchecked)
        {
            return Err(fail(
                "refused: the protected resource metadata is for another resource than this MCP server (RFC 9728 section 3.3)".into(),
            ));
        }
        let issuer = prm
            .get("authorization_servers")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                fail("the protected resource metadata names no authorization server".into())
            })?;
        let issuer_url = Url::parse(&issuer).map_err(|_| {
            fail("the protected resource metadata names an invalid authorization server".into())
        })?;
        // Authorization server metadata, in the spec's priority order.
        let mut metadata = None;
        let mut tried = Vec::new();
        let urls = match legacy && self.broken(Breakage::LegacyMetadataSkipped) {
            true => Vec::new(),
            false => server_metadata_urls(&issuer_url, broken),
        };
        for url in urls {
            tried.push(url.path().to_string());
            if let Some(doc) = self.get_json(&url, ctx).await? {
                metadata = Some(doc);
                break;
            }
        }
        let metadata = match metadata {
            Some(metadata) => metadata,
            None if legacy && !self.broken(Breakage::NoDefaultEndpoints) => {
                default_endpoints(&issuer)
            }
            None => {
                return Err(fail(format!(
                    "no authorization server metadata found at {} (tried {})",
                    origin_of(&issuer_url),
                    tried.join(", ")
                )))
            }
        };
        let named = metadata.get("issuer").and_then(Value::as_str);
        if named != Some(issuer.as_str()) && !self.broken(Breakage::IssuerUnchecked) {
            return Err(fail(format!(
                "refused: the authorization server metadata's issuer is not {} (RFC 8414 section 3.3)",
                origin_of(&issuer_url)
            )));
        }
        let s256_supported = metadata_lists(&metadata, "code_challenge_methods_supported", "S256");
        if !s256_supported && !self.broken(Breakage::PkceSupportUnchecked) {
            return Err(fail(
                "refused: the authorization server does not advertise PKCE S256 in code_challenge_methods_supported".into(),
            ));
        }
        let endpoint = |name: &str| {
            metadata
                .get(name)
                .and_then(Value::as_str)
                .and_then(|s| Url::parse(s).ok())
                .ok_or_else(|| fail(format!("the authorization server metadata has no {name}")))
        };
        let authorization_endpoint = endpoint("authorization_endpoint")?;
        let token_endpoint = endpoint("token_endpoint")?;
        let client = self.client_at(oauth, &issuer, &metadata, ctx).await?;
        if let Some(refresh) = refresh {
            let refreshed = self
                .refreshed(&client, &metadata, &token_endpoint, &refresh, resource, ctx)
                .await?;
            if let Some(tokens) = refreshed {
                return Ok(tokens);
            }
        }
        let scope = with_offline_access(select_scope(challenge, &prm, broken), &metadata, broken);
        let scope = self.step_up_scope(challenge, scope);
        if oauth.client_credentials && !self.broken(Breakage::ClientCredentialsIgnored) {
            return self
                .client_credentials(
                    &client,
                    &metadata,
                    &token_endpoint,
                    scope.as_deref(),
                    resource,
                    ctx,
                )
                .await;
        }
        let verifier = random(32)?;
        self.remember_text(&verifier);
        let state = random(16)?;
        let pkce = !self.broken(Breakage::NoPkce);
        let send_resource = !self.broken(Breakage::NoResourceParameter);
        let mut url = authorization_endpoint;
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("response_type", "code");
            query.append_pair("client_id", &client.id);
            query.append_pair("redirect_uri", &oauth.redirect_uri);
            if pkce {
                query.append_pair("code_challenge", &s256(&verifier));
                query.append_pair("code_challenge_method", "S256");
            }
            query.append_pair("state", &state);
            if send_resource {
                query.append_pair("resource", resource);
            }
            if let Some(scope) = &scope {
                query.append_pair("scope", scope);
            }
        }
        let back = oauth.authorizer.authorize(url.to_string()).await?;
        let back = Url::parse(&back)
            .map_err(|_| fail("the user agent came back with an invalid URL".into()))?;
        let param = |name: &str| {
            back.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        if param("state").as_deref() != Some(state.as_str())
            && !self.broken(Breakage::StateUnchecked)
        {
            return Err(fail(
                "the redirect's state is not the one sent; refused".into(),
            ));
        }
        // RFC 9207 section 2.4, before anything of the response is acted on.
        let iss_advertised = metadata
            .get("authorization_response_iss_parameter_supported")
            .and_then(Value::as_bool)
            == Some(true);
        let refused = || {
            param("error").map(|error| {
                fail(format!(
                    "the authorization server refused: {}",
                    error_code(&error)
                ))
            })
        };
        if let (true, Some(refused)) = (self.broken(Breakage::ErrorActedBeforeIss), refused()) {
            return Err(refused);
        }
        if !self.broken(Breakage::IssUnchecked) {
            match (iss_advertised, param("iss")) {
                (_, Some(iss)) if !self.same_issuer(&iss, &issuer) => {
                    return Err(fail(
                        "the authorization response's iss is not the authorization server's issuer; refused"
                            .into(),
                    ))
                }
                (true, None) => {
                    return Err(fail(
                        "the authorization response carries no iss, which the authorization server advertises; refused"
                            .into(),
                    ))
                }
                _ => {}
            }
        }
        if let Some(refused) = refused() {
            return Err(refused);
        }
        let code = param("code").ok_or_else(|| fail("the redirect carries no code".into()))?;
        self.remember_text(&code);
        let (body, headers) = {
            let mut form = form_urlencoded_pairs(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &oauth.redirect_uri),
            ]);
            if pkce {
                form.append_pair("code_verifier", &verifier);
            }
            if send_resource {
                form.append_pair("resource", resource);
            }
            self.client_authenticated(&client, &metadata, form)?
        };
        let tokens = self.exchange(&token_endpoint, body, headers, ctx).await?;
        tracing::debug!(target: "mcp_refclient", origin = %self.origin, "authorized");
        Ok(tokens)
    }

    /// The client-credentials grant (the OAuth Client Credentials extension): the token
    /// asked for with the client's own credentials, `resource` and `scope`, no user agent.
    async fn client_credentials(
        &self,
        client: &FlowClient,
        metadata: &Value,
        token_endpoint: &Url,
        scope: Option<&str>,
        resource: &str,
        ctx: &Ctx,
    ) -> Result<OAuthTokens, McpError> {
        let (body, headers) = {
            let mut form = form_urlencoded_pairs(&[
                ("grant_type", "client_credentials"),
                ("resource", resource),
            ]);
            if let Some(scope) = scope {
                form.append_pair("scope", scope);
            }
            self.client_authenticated(client, metadata, form)?
        };
        self.exchange(token_endpoint, body, headers, ctx).await
    }

    /// A token request and its answer: the tokens, or an error naming the status and the
    /// OAuth error code alone.
    async fn exchange(
        &self,
        token_endpoint: &Url,
        body: Bytes,
        headers: HeaderMap,
        ctx: &Ctx,
    ) -> Result<OAuthTokens, McpError> {
        let fail = |what: String| self.flow_error(&what);
        let mut reply = self
            .send_once(token_endpoint, &Method::POST, Some(body), headers, ctx)
            .await?;
        let status = reply.status;
        let text = self.read_to_end(&mut reply, ctx).await?;
        let json: Option<Value> = serde_json::from_slice(&text).ok();
        if !status.is_success() {
            if self.broken(Breakage::TokenErrorQuoted) {
                return Err(fail(format!(
                    "the token request was refused: {}: {}",
                    status.as_u16(),
                    String::from_utf8_lossy(&text)
                )));
            }
            let code = json
                .as_ref()
                .and_then(|j| j.get("error"))
                .and_then(Value::as_str)
                .map(error_code)
                .unwrap_or_else(|| "no error code".into());
            return Err(fail(format!(
                "the token request was refused: {} ({code})",
                status.as_u16()
            )));
        }
        self.tokens_of(json, &fail)
    }

    /// The token request's body and headers: `form` with the client's authentication, the
    /// way the authorization server's metadata lists in `token_endpoint_auth_methods_supported`.
    fn client_authenticated(
        &self,
        client: &FlowClient,
        metadata: &Value,
        mut form: url::form_urlencoded::Serializer<'static, String>,
    ) -> Result<(Bytes, HeaderMap), McpError> {
        let mut headers = HeaderMap::new();
        // RFC 8414: without token_endpoint_auth_methods_supported, client_secret_basic.
        let methods: Vec<&str> = metadata
            .get("token_endpoint_auth_methods_supported")
            .and_then(Value::as_array)
            .map(|m| m.iter().filter_map(Value::as_str).collect())
            .unwrap_or_else(|| vec!["client_secret_basic"]);
        let post = !methods.contains(&"client_secret_basic")
            && methods.contains(&"client_secret_post")
            && !self.broken(Breakage::SecretAlwaysBasic);
        let assertion = self.assertion_authenticated(client, metadata, &mut form)?;
        match &client.secret {
            _ if assertion => {}
            Some(secret) if post => {
                form.append_pair("client_id", &client.id);
                form.append_pair("client_secret", secret);
            }
            Some(secret) => {
                let pair = format!("{}:{}", form_encode(&client.id), form_encode(secret));
                let basic = base64::engine::general_purpose::STANDARD.encode(pair);
                let value = HeaderValue::from_str(&format!("Basic {basic}")).map_err(|_| {
                    self.flow_error(
                        "the client credentials are not a valid header value (not shown)",
                    )
                })?;
                self.remember_secret(&value);
                headers.insert(header::AUTHORIZATION, value);
            }
            None => {
                form.append_pair("client_id", &client.id);
            }
        }
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        Ok((Bytes::from(form.finish()), headers))
    }

    /// The client to authorize as at `issuer`, in the specification's priority order: the
    /// pre-registered one, else the client metadata document's URL where the authorization
    /// server supports it, else the client registered there before, else one registered now
    /// at its `registration_endpoint`.
    async fn client_at(
        &self,
        oauth: &OAuthSettings,
        issuer: &str,
        metadata: &Value,
        ctx: &Ctx,
    ) -> Result<FlowClient, McpError> {
        if let Some(id) = &oauth.client_id {
            return Ok(FlowClient {
                id: id.clone(),
                secret: oauth.client_secret.clone(),
            });
        }
        if let Some(url) = metadata_document(oauth, metadata, |b| self.broken(b)) {
            return Ok(FlowClient {
                id: url,
                secret: None,
            });
        }
        if let Some(client) = self.registered_at(issuer) {
            return Ok(client);
        }
        let endpoint = metadata
            .get("registration_endpoint")
            .and_then(Value::as_str)
            .and_then(|s| Url::parse(s).ok())
            .ok_or_else(|| {
                self.flow_error(
                    "no client id for this authorization server, which offers no dynamic client registration",
                )
            })?;
        let client = self.register(oauth, &endpoint, ctx).await?;
        let mut known = self.registered.lock().unwrap_or_else(|e| e.into_inner());
        known.insert(issuer.to_string(), client.clone());
        Ok(client)
    }

    /// The client registered at `issuer` before (`RegistrationReused`: at any issuer).
    fn registered_at(&self, issuer: &str) -> Option<FlowClient> {
        let known = self.registered.lock().unwrap_or_else(|e| e.into_inner());
        match self.broken(Breakage::RegistrationReused) {
            true => known.values().next().cloned(),
            false => known.get(issuer).cloned(),
        }
    }

    /// Dynamic client registration (RFC 7591): a public client with the flow's redirect URI.
    async fn register(
        &self,
        oauth: &OAuthSettings,
        endpoint: &Url,
        ctx: &Ctx,
    ) -> Result<FlowClient, McpError> {
        let mut request = json!({
            "client_name": env!("CARGO_PKG_NAME"),
            "redirect_uris": [oauth.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        });
        // The reference client runs on the user's machine, its redirect URI a loopback one.
        if !self.broken(Breakage::NoApplicationType) {
            request["application_type"] = json!("native");
        }
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        let body = Bytes::from(request.to_string());
        let mut reply = self
            .send_once(endpoint, &Method::POST, Some(body), headers, ctx)
            .await?;
        let status = reply.status;
        let text = self.read_to_end(&mut reply, ctx).await?;
        let json: Value = serde_json::from_slice(&text).unwrap_or_default();
        if self.broken_refusal_ignored(status) {
            return Ok(FlowClient {
                id: String::new(),
                secret: None,
            });
        }
        if !status.is_success() {
            let code = json.get("error").and_then(Value::as_str).map(error_code);
            return Err(self.flow_error(&format!(
                "the dynamic client registration was refused: {} ({})",
                status.as_u16(),
                code.unwrap_or_else(|| "no error code".into())
            )));
        }
        let id = json
            .get("client_id")
            .and_then(Value::as_str)
            .ok_or_else(|| self.flow_error("the registration response has no client_id"))?;
        let secret = json
            .get("client_secret")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(secret) = &secret {
            self.remember_text(secret);
        }
        let secret = secret.filter(|_| !self.broken(Breakage::RegistrationSecretDropped));
        Ok(FlowClient {
            id: id.to_string(),
            secret,
        })
    }

    /// `RegistrationRefusalIgnored`: a refused registration taken for an empty client.
    fn broken_refusal_ignored(&self, status: StatusCode) -> bool {
        self.broken(Breakage::RegistrationRefusalIgnored) && !status.is_success()
    }

    /// An error of the authorization flow, naming the MCP server by origin.
    fn flow_error(&self, what: &str) -> McpError {
        McpError::Transport(format!("authorization for {}: {what}", self.origin))
    }

    /// The tokens of a successful token response, remembered as secrets.
    fn tokens_of(
        &self,
        json: Option<Value>,
        fail: &impl Fn(String) -> McpError,
    ) -> Result<OAuthTokens, McpError> {
        let json = json.ok_or_else(|| fail("the token response is not JSON".into()))?;
        let access_token = json
            .get("access_token")
            .and_then(Value::as_str)
            .ok_or_else(|| fail("the token response has no access_token".into()))?
            .to_string();
        self.remember_text(&access_token);
        let refresh_token = json
            .get("refresh_token")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(refresh) = &refresh_token {
            self.remember_text(refresh);
        }
        Ok(OAuthTokens {
            access_token,
            refresh_token,
        })
    }

    /// The `refresh_token` grant (RFC 6749 section 6) with `resource`: the new tokens, the
    /// refresh token used kept when no other is issued; `None` when the grant is refused.
    async fn refreshed(
        &self,
        client: &FlowClient,
        metadata: &Value,
        token_endpoint: &Url,
        refresh_token: &str,
        resource: &str,
        ctx: &Ctx,
    ) -> Result<Option<OAuthTokens>, McpError> {
        self.remember_text(refresh_token);
        let (body, headers) = {
            let mut form = form_urlencoded_pairs(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh_token),
            ]);
            if !self.broken(Breakage::NoResourceParameter) {
                form.append_pair("resource", resource);
            }
            self.client_authenticated(client, metadata, form)?
        };
        let mut reply = self
            .send_once(token_endpoint, &Method::POST, Some(body), headers, ctx)
            .await?;
        let status = reply.status;
        let text = self.read_to_end(&mut reply, ctx).await?;
        if !status.is_success() {
            tracing::debug!(target: "mcp_refclient", origin = %self.origin, status = status.as_u16(), "refresh refused");
            return Ok(None);
        }
        let fail = |what: String| self.flow_error(&what);
        let mut tokens = self.tokens_of(serde_json::from_slice(&text).ok(), &fail)?;
        if tokens.refresh_token.is_none() || self.broken(Breakage::RotationIgnored) {
            tokens.refresh_token = Some(refresh_token.to_string());
        }
        tracing::debug!(target: "mcp_refclient", origin = %self.origin, "refreshed");
        Ok(Some(tokens))
    }

    /// GETs a metadata document: `Some` for a 200 with a JSON object, `None` for anything
    /// else but a broken connection. Carries no token.
    async fn get_json(&self, url: &Url, ctx: &Ctx) -> Result<Option<Value>, McpError> {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        // 2025-03-26: the protocol version goes along, so the server may answer by it.
        if self.legacy_discovery && !self.broken(Breakage::NoDiscoveryVersionHeader) {
            headers.insert(
                "mcp-protocol-version",
                HeaderValue::from_static(LEGACY_DISCOVERY_REVISION),
            );
        }
        if let (true, Some(token)) = (
            self.broken(Breakage::BearerToAuthorizationServer),
            self.oauth
                .as_ref()
                .and_then(|o| o.store.load(&canonical_resource(&self.url))),
        ) {
            if let Ok(value) = HeaderValue::from_str(&format!("Bearer {}", token.access_token)) {
                headers.insert(header::AUTHORIZATION, value);
            }
        }
        let mut reply = self
            .send_once(url, &Method::GET, None, headers, ctx)
            .await?;
        if reply.status != StatusCode::OK {
            return Ok(None);
        }
        let body = self.read_to_end(&mut reply, ctx).await?;
        Ok(serde_json::from_slice::<Value>(&body)
            .ok()
            .filter(Value::is_object))
    }
}

fn form_urlencoded_pairs(
    pairs: &[(&str, &str)],
) -> url::form_urlencoded::Serializer<'static, String> {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        form.append_pair(k, v);
    }
    form
}

fn form_encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// An OAuth error code as quoted: its own characters only (RFC 6749 limits them), cut short.
fn error_code(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(40)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: Breakage) -> bool {
        false
    }

    #[test]
    fn a_challenge_is_parsed_with_quoted_and_bare_values() {
        let mut headers = HeaderMap::new();
        headers.append(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(
                "Bearer error=\"invalid_token\", resource_metadata=\"http://a/.well-known/oauth-protected-resource\", scope=\"files:read files:write\"",
            ),
        );
        let c = Challenge::parse(&headers);
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://a/.well-known/oauth-protected-resource")
        );
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        let mut headers = HeaderMap::new();
        headers.append(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=x, scope=nope"),
        );
        assert_eq!(Challenge::parse(&headers), Challenge::default());
    }

    #[test]
    fn discovery_urls_follow_the_spec_order() {
        let mcp = Url::parse("https://ex.com/public/mcp").unwrap();
        let urls: Vec<String> = resource_metadata_urls(&mcp, &Challenge::default(), none)
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            urls,
            [
                "https://ex.com/.well-known/oauth-protected-resource/public/mcp",
                "https://ex.com/.well-known/oauth-protected-resource"
            ]
        );
        let issuer = Url::parse("https://auth.ex.com/tenant1").unwrap();
        let urls: Vec<String> = server_metadata_urls(&issuer, none)
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            urls,
            [
                "https://auth.ex.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.ex.com/.well-known/openid-configuration/tenant1",
                "https://auth.ex.com/tenant1/.well-known/openid-configuration"
            ]
        );
        let issuer = Url::parse("https://auth.ex.com").unwrap();
        assert_eq!(server_metadata_urls(&issuer, none).len(), 2);
    }

    #[test]
    fn offline_access_is_added_only_where_the_authorization_server_lists_it() {
        let listed = serde_json::json!({"scopes_supported": ["mcp", "offline_access"]});
        let unlisted = serde_json::json!({"scopes_supported": ["mcp"]});
        let add = |scope: Option<&str>, metadata: &Value| {
            with_offline_access(scope.map(str::to_string), metadata, none)
        };
        assert_eq!(
            add(Some("mcp"), &listed).as_deref(),
            Some("mcp offline_access")
        );
        assert_eq!(
            add(Some("mcp offline_access"), &listed).as_deref(),
            Some("mcp offline_access")
        );
        assert_eq!(add(Some("mcp"), &unlisted).as_deref(), Some("mcp"));
        assert_eq!(add(None, &listed), None);
    }

    #[test]
    fn the_2025_03_26_authorization_base_drops_the_path_and_its_endpoints_are_at_its_root() {
        let base = authorization_base(&Url::parse("https://api.example.com/v1/mcp?x=1").unwrap());
        assert_eq!(base, "https://api.example.com");
        let metadata = default_endpoints(&base);
        assert_eq!(metadata["issuer"], "https://api.example.com");
        assert_eq!(
            metadata["authorization_endpoint"],
            "https://api.example.com/authorize"
        );
        assert_eq!(metadata["token_endpoint"], "https://api.example.com/token");
    }

    #[test]
    fn a_step_up_asks_for_the_scopes_asked_before_and_the_challenged_ones() {
        assert_eq!(
            scope_union(Some("a b"), Some("b c")).as_deref(),
            Some("a b c")
        );
        assert_eq!(scope_union(None, Some("c")).as_deref(), Some("c"));
        assert_eq!(scope_union(Some("a"), None).as_deref(), Some("a"));
        assert_eq!(scope_union(None, None), None);
    }

    #[test]
    fn the_metadata_must_name_this_resource() {
        let resource = canonical_resource(&Url::parse("http://127.0.0.1:8/mcp?x=1").unwrap());
        let named = |r: &str| prm_names_resource(&serde_json::json!({ "resource": r }), &resource);
        assert!(named("http://127.0.0.1:8/mcp"));
        assert!(named("HTTP://127.0.0.1:8/mcp"));
        assert!(!named("https://evil.example.com/mcp"));
        assert!(!named("http://127.0.0.1:8/other/mcp"));
        assert!(!named("http://127.0.0.1:8/mcp?x=1"));
        assert!(!prm_names_resource(&serde_json::json!({}), &resource));
    }

    #[test]
    fn s256_is_rfc_7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn scope_comes_from_the_challenge_else_scopes_supported_else_none() {
        let prm = serde_json::json!({"scopes_supported": ["a", "b"]});
        let challenge = Challenge {
            scope: Some("c".into()),
            ..Challenge::default()
        };
        assert_eq!(select_scope(&challenge, &prm, none).as_deref(), Some("c"));
        assert_eq!(
            select_scope(&Challenge::default(), &prm, none).as_deref(),
            Some("a b")
        );
        assert_eq!(
            select_scope(&Challenge::default(), &serde_json::json!({}), none),
            None
        );
    }
}
