//! `validate --oauth CLIENT_ID`: the access token obtained through the authorization-code
//! grant with PKCE (S256), headless, as a pre-registered public client — for a test
//! authorization server that approves at once: its authorization endpoint answers with a
//! redirect to the redirect URI (after at most [`MAX_HOPS`] redirects of its own), which is
//! read, never opened. Every credential of the flow (the code, the `code_verifier`, the
//! access token) is registered as a secret before it is sent, so no report or error shows it.
//!
//! The discovery is the one clients do: the `401`'s challenge, the Protected Resource
//! Metadata (its `resource_metadata` URL, else the well-known URLs), the first authorization
//! server's metadata in the specification's order, whose `issuer` must be the one named and
//! which must list `S256`. The authorization request carries `resource` (the canonical URI of
//! the server) and the challenge's `scope` (else the metadata's `scopes_supported`, else
//! none); the response's `state` must be the request's, and its `iss` the issuer where the
//! server advertises it or sends one.

use crate::checks::auth::{
    bearer_challenge, canonical, challenges, resource_metadata_sources, server_metadata_urls, Gate,
    Prober,
};
use crate::http::{Until, Wire};
use crate::outcome::excerpt;
use crate::redact;
use base64::Engine;
use hyper::Method;
use serde_json::Value;
use url::Url;

/// Where the authorization server is asked to send the browser back: never listened on, only
/// read from the redirect's `Location`.
pub const REDIRECT_URI: &str = "http://127.0.0.1/callback";

/// The most redirects of the authorization server's own followed before the one to
/// [`REDIRECT_URI`].
pub const MAX_HOPS: usize = 5;

/// Who plays the user agent: opens the authorization URL and comes back to the redirect URI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserAgent {
    /// No one: a test authorization server that approves at once, its redirects followed up
    /// to [`REDIRECT_URI`], which is read, never opened.
    Headless,
    /// A person (`--oauth-browser`): the URL printed, the redirect URI a listener on a
    /// loopback port (`0`: any free one), waited on at most `wait` (see [`crate::loopback`]).
    Browser {
        /// The loopback port listened on.
        port: u16,
        /// The longest wait for the browser.
        wait: std::time::Duration,
    },
}

/// Why no token was obtained: one line, lowercase, no credential in it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GrantError {
    /// `initialize` without a token was not answered with 401.
    #[error("the server does not ask for authorization: {0}")]
    NotAsked(String),
    /// No Protected Resource Metadata naming an authorization server.
    #[error("no Protected Resource Metadata naming an authorization server: {0}")]
    NoResourceMetadata(String),
    /// No usable authorization server metadata.
    #[error("no usable metadata for the authorization server {issuer}: {why}")]
    NoServerMetadata {
        /// The issuer named.
        issuer: String,
        /// What was found instead.
        why: String,
    },
    /// `S256` is not listed: PKCE cannot be used, so the flow stops before anything is asked.
    #[error("the authorization server does not list `S256` in `code_challenge_methods_supported` ({0}): no authorization is asked without PKCE")]
    NoPkce(String),
    /// The authorization endpoint did not send the browser back to the redirect URI.
    #[error("the authorization endpoint did not redirect to {REDIRECT_URI}: {0}")]
    NoRedirect(String),
    /// `--oauth-browser`: the browser step failed (no listener, or no browser came back).
    #[error(transparent)]
    Browser(#[from] crate::loopback::LoopbackError),
    /// The authorization response is an error, or not the request's (`state`, `iss`).
    #[error("the authorization response is refused: {0}")]
    Refused(String),
    /// The token endpoint gave no access token.
    #[error("the token endpoint gave no access token: {0}")]
    NoToken(String),
    /// The system's random source failed (no `code_verifier` or `state` could be made).
    #[error("the system's random source failed")]
    Random,
}

/// `n` random bytes, base64url without padding; none when the system's random source fails
/// (a guessable verifier or `state` is never sent).
fn random(n: usize) -> Result<String, GrantError> {
    let mut bytes = vec![0u8; n];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| GrantError::Random)?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The PKCE S256 challenge of `verifier` (RFC 7636): base64url of its SHA-256.
pub fn s256(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// The pairs of a URL's query.
fn query_pairs(url: &Url) -> Vec<(String, String)> {
    url.query_pairs().into_owned().collect()
}

fn pair<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Obtains an access token for `prober.url` as the public client `client_id` (see the module
/// documentation). The token is registered as a secret.
pub async fn obtain_token(
    prober: &Prober,
    client_id: &str,
    agent: &UserAgent,
) -> Result<String, GrantError> {
    let url = Url::parse(&prober.url).map_err(|e| GrantError::NotAsked(e.to_string()))?;
    let challenge = match prober.gate().await {
        Gate::Closed(reply) => reply,
        Gate::Answered(status) => {
            return Err(GrantError::NotAsked(format!(
                "it answered `initialize` without a token with HTTP {status}"
            )))
        }
        Gate::Unanswered(why) => return Err(GrantError::NotAsked(excerpt(&why))),
    };
    let params = bearer_challenge(challenges(&challenge)).unwrap_or_default();
    let (resource_metadata, tried) = prober
        .first_found(&resource_metadata_sources(&url, Some(&params)))
        .await;
    let tried_text = || {
        tried
            .iter()
            .map(|f| format!("{} ({})", f.url, f.seen))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let resource_metadata = resource_metadata
        .and_then(|f| f.document)
        .ok_or_else(|| GrantError::NoResourceMetadata(tried_text()))?;
    let issuer = resource_metadata
        .get("authorization_servers")
        .and_then(Value::as_array)
        .and_then(|list| list.first())
        .and_then(Value::as_str)
        .ok_or_else(|| GrantError::NoResourceMetadata("no `authorization_servers`".into()))?
        .to_string();
    let no_metadata = |why: String| GrantError::NoServerMetadata {
        issuer: issuer.clone(),
        why,
    };
    let issuer_url = Url::parse(&issuer).map_err(|e| no_metadata(e.to_string()))?;
    let (found, tried) = prober.first_found(&server_metadata_urls(&issuer_url)).await;
    let Some(metadata) = found.and_then(|f| f.document) else {
        let tried = tried
            .iter()
            .map(|f| format!("{} ({})", f.url, f.seen))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(no_metadata(format!("none found: {tried}")));
    };
    let field = |name: &str| metadata.get(name).and_then(Value::as_str);
    if field("issuer") != Some(issuer.as_str()) {
        return Err(no_metadata(format!(
            "its `issuer` is {}",
            field("issuer").map_or("absent".into(), |i| format!("`{}`", excerpt(i)))
        )));
    }
    let methods = metadata.get("code_challenge_methods_supported");
    if !methods
        .and_then(Value::as_array)
        .is_some_and(|list| list.iter().any(|m| m == "S256"))
    {
        return Err(GrantError::NoPkce(
            methods.map_or("absent".into(), |m| excerpt(&m.to_string())),
        ));
    }
    let scope = params
        .iter()
        .find(|(n, _)| n == "scope")
        .map(|(_, v)| v.clone())
        .or_else(|| {
            resource_metadata
                .get("scopes_supported")
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
        })
        .filter(|s| !s.is_empty());
    let resource = canonical(&url).to_string();
    let answer = authorization_code_grant(
        prober,
        client_id,
        &issuer,
        &metadata,
        Some(&resource),
        scope.as_deref(),
        agent,
    )
    .await?;
    Ok(answer
        .get("access_token")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string())
}

/// The authorization-code grant with PKCE (S256) at the authorization server `issuer` whose
/// metadata is `metadata`, as the public client `client_id`, the user agent played by
/// `agent` (see the module documentation); `resource` goes into both requests and `scope` into the authorization
/// request, when given. The answer is
/// the token endpoint's JSON object, a `200` carrying a non-empty `access_token`, which is
/// registered as a secret.
pub async fn authorization_code_grant(
    prober: &Prober,
    client_id: &str,
    issuer: &str,
    metadata: &Value,
    resource: Option<&str>,
    scope: Option<&str>,
    agent: &UserAgent,
) -> Result<serde_json::Map<String, Value>, GrantError> {
    let field = |name: &str| metadata.get(name).and_then(Value::as_str);
    let no_metadata = |why: String| GrantError::NoServerMetadata {
        issuer: issuer.to_string(),
        why,
    };
    let (Some(authorize), Some(token_endpoint)) =
        (field("authorization_endpoint"), field("token_endpoint"))
    else {
        return Err(no_metadata(
            "no `authorization_endpoint` or no `token_endpoint`".into(),
        ));
    };
    let loopback = match agent {
        UserAgent::Browser { port, .. } => Some(crate::loopback::Loopback::bind(*port).await?),
        UserAgent::Headless => None,
    };
    let redirect_uri = loopback
        .as_ref()
        .map_or(REDIRECT_URI, |l| l.redirect_uri())
        .to_string();
    let verifier = random(32)?;
    redact::header_value(&verifier);
    let state = random(16)?;
    let mut request = Url::parse(authorize).map_err(|e| no_metadata(e.to_string()))?;
    {
        let mut query = request.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", client_id)
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("code_challenge", &s256(&verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state);
        if let Some(resource) = resource {
            query.append_pair("resource", resource);
        }
        if let Some(scope) = scope {
            query.append_pair("scope", scope);
        }
    }
    let back = match (loopback, agent) {
        (Some(loopback), UserAgent::Browser { wait, .. }) => {
            loopback.wait_for_browser(&request, *wait).await?
        }
        _ => follow_to_redirect_uri(prober, request).await?,
    };
    let pairs = query_pairs(&back);
    if let Some(code) = pair(&pairs, "code") {
        redact::header_value(code);
    }
    if let Some(error) = pair(&pairs, "error") {
        return Err(GrantError::Refused(format!(
            "error `{}`{}",
            excerpt(error),
            pair(&pairs, "error_description")
                .map(|d| format!(": {}", excerpt(d)))
                .unwrap_or_default()
        )));
    }
    if pair(&pairs, "state") != Some(state.as_str()) {
        return Err(GrantError::Refused(
            "its `state` is not the request's".into(),
        ));
    }
    let advertised = metadata
        .get("authorization_response_iss_parameter_supported")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    match pair(&pairs, "iss") {
        Some(iss) if iss != issuer => {
            return Err(GrantError::Refused(format!(
                "its `iss` is `{}`, not `{issuer}`",
                excerpt(iss)
            )))
        }
        None if advertised => {
            return Err(GrantError::Refused(
                "no `iss`, though the authorization server advertises it".into(),
            ))
        }
        _ => {}
    }
    let Some(code) = pair(&pairs, "code") else {
        return Err(GrantError::Refused("no `code`".into()));
    };
    let mut body = form_urlencoded::Serializer::new(String::new());
    body.append_pair("grant_type", "authorization_code")
        .append_pair("code", code)
        .append_pair("redirect_uri", &redirect_uri)
        .append_pair("code_verifier", &verifier)
        .append_pair("client_id", client_id);
    if let Some(resource) = resource {
        body.append_pair("resource", resource);
    }
    let body = body.finish();
    let wire = Wire::new(
        token_endpoint,
        &[],
        prober.ca_cert.as_deref(),
        prober.timeout,
    )
    .map_err(GrantError::NoToken)?;
    let reply = wire
        .send(
            Method::POST,
            &[
                (
                    "Content-Type".into(),
                    "application/x-www-form-urlencoded".into(),
                ),
                ("Accept".into(), "application/json".into()),
            ],
            Some(body.into_bytes()),
            &Until::End,
            |_| {},
        )
        .await
        .map_err(|e| GrantError::NoToken(excerpt(&e.to_string())))?;
    let answer = match serde_json::from_slice::<Value>(&reply.body) {
        Ok(Value::Object(answer)) if reply.status == 200 => answer,
        _ => return Err(GrantError::NoToken(excerpt(&reply.describe()))),
    };
    match answer.get("access_token").and_then(Value::as_str) {
        Some(token) if !token.is_empty() => {
            redact::header_value(token);
            Ok(answer)
        }
        _ => Err(GrantError::NoToken(excerpt(&reply.describe()))),
    }
}

/// What is wrong with a token response the grant gave (beside a missing `access_token`,
/// which [`authorization_code_grant`] refuses): `token_type` must be `Bearer` (RFC 6749
/// Section 5.1 and RFC 6750: compared without regard to case).
pub fn token_response_problems(answer: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut wrong = Vec::new();
    match answer.get("token_type") {
        Some(Value::String(kind)) if kind.eq_ignore_ascii_case("bearer") => {}
        Some(other) => wrong.push(format!(
            "`token_type` is {}, not `Bearer`",
            excerpt(&other.to_string())
        )),
        None => wrong.push("no `token_type`".into()),
    }
    wrong
}

/// Follows the authorization server's redirects from `request` until one goes to
/// [`REDIRECT_URI`], which is returned unopened.
async fn follow_to_redirect_uri(prober: &Prober, request: Url) -> Result<Url, GrantError> {
    let mut at = request;
    for _ in 0..=MAX_HOPS {
        let wire = Wire::new(at.as_str(), &[], prober.ca_cert.as_deref(), prober.timeout)
            .map_err(GrantError::NoRedirect)?;
        let reply = wire
            .send(Method::GET, &[], None, &Until::Head, |_| {})
            .await
            .map_err(|e| GrantError::NoRedirect(excerpt(&e.to_string())))?;
        let location = match reply.header("location") {
            Some(location) if (300..400).contains(&reply.status) => location.to_string(),
            _ => {
                return Err(GrantError::NoRedirect(format!(
                    "HTTP {} without a redirect (an authorization server that asks a person cannot be used headless)",
                    reply.status
                )))
            }
        };
        let next = at
            .join(&location)
            .map_err(|e| GrantError::NoRedirect(format!("a `Location` that is not a URL: {e}")))?;
        let mut bare = next.clone();
        bare.set_query(None);
        bare.set_fragment(None);
        if bare.as_str() == REDIRECT_URI {
            return Ok(next);
        }
        at = next;
    }
    Err(GrantError::NoRedirect(format!(
        "more than {MAX_HOPS} redirects"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_is_rfc_7636_appendix_b() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn a_token_response_needs_a_bearer_token_type() {
        let answer = |v: Value| v.as_object().unwrap().clone();
        assert!(token_response_problems(&answer(
            serde_json::json!({"access_token": "t", "token_type": "bearer"})
        ))
        .is_empty());
        assert_eq!(
            token_response_problems(&answer(
                serde_json::json!({"access_token": "t", "token_type": "mac"})
            )),
            ["`token_type` is \"mac\", not `Bearer`"]
        );
        assert_eq!(
            token_response_problems(&answer(serde_json::json!({"access_token": "t"}))),
            ["no `token_type`"]
        );
    }

    #[test]
    fn verifiers_are_43_characters_and_differ() {
        let (a, b) = (random(32).unwrap(), random(32).unwrap());
        assert_eq!(a.len(), 43);
        assert_ne!(a, b);
    }
}
