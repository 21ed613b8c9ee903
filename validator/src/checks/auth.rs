//! The authorization checks (`server.auth.*`): a Streamable HTTP server as an OAuth 2.1
//! resource server, as the authorization chapter (2025-06-18 and later) asks — the `401`
//! challenge, the Protected Resource Metadata (RFC 9728), the authorization server's metadata
//! found where clients look for it (RFC 8414, OpenID Connect discovery), a token it never
//! issued refused with `401`, a token in the query string refused.
//!
//! Each request goes out on a connection of its own through the validator's own HTTP client
//! ([`Wire`]), without the `--header` token unless a check sends it on purpose; the metadata
//! documents are fetched without any `--header` (they may be on another origin).

use crate::http::{Reply, Until, Wire};
use crate::outcome::{excerpt, Failure, Finding};
use hyper::Method;
use serde_json::{json, Value};
use std::time::Duration;
use url::Url;

/// `server.auth.challenge`.
pub const CHALLENGE: &str = "server.auth.challenge";
/// `server.auth.resource-metadata`.
pub const RESOURCE_METADATA: &str = "server.auth.resource-metadata";
/// `server.auth.server-metadata`.
pub const SERVER_METADATA: &str = "server.auth.server-metadata";
/// `server.auth.pkce-s256`.
pub const PKCE_S256: &str = "server.auth.pkce-s256";
/// `server.auth.authorization-code-grant`.
pub const GRANT: &str = "server.auth.authorization-code-grant";
/// `server.auth.invalid-token-401`.
pub const INVALID_TOKEN: &str = "server.auth.invalid-token-401";
/// `server.auth.token-not-in-query`.
pub const TOKEN_NOT_IN_QUERY: &str = "server.auth.token-not-in-query";
/// `server.auth.audience`.
pub const AUDIENCE: &str = "server.auth.audience";
/// `server.auth.insufficient-scope`.
pub const INSUFFICIENT_SCOPE: &str = "server.auth.insufficient-scope";

/// The authorization checks, in report order.
pub const CHECKS: &[&str] = &[
    CHALLENGE,
    RESOURCE_METADATA,
    SERVER_METADATA,
    PKCE_S256,
    INVALID_TOKEN,
    TOKEN_NOT_IN_QUERY,
    AUDIENCE,
    INSUFFICIENT_SCOPE,
];

/// The checks of an authorization server judged on its own (`--authorization-server`), in
/// report order.
pub const SERVER_CHECKS: &[&str] = &[SERVER_METADATA, PKCE_S256, GRANT];

/// A bearer token no authorization server issued: what the invalid-token check sends, and
/// the query-string check when no token was given.
pub const UNISSUED_TOKEN: &str = "mcp-conformance-unissued-token-3f9c1e7a";

/// How the checks reach the server.
#[derive(Clone, Debug)]
pub struct Prober {
    /// The MCP endpoint.
    pub url: String,
    /// The `--header` headers but `Authorization`: sent to the MCP endpoint only.
    pub headers: Vec<(String, String)>,
    /// The token of `--header 'Authorization: Bearer …'`, when one was given.
    pub token: Option<String>,
    /// `--token-for-other-resource`, when given.
    pub other_resource: Option<String>,
    /// `--token-without-scope`, when given.
    pub without_scope: Option<String>,
    /// HTTPS: PEM certificates trusted besides the system roots (`--ca-cert`).
    pub ca_cert: Option<Vec<u8>>,
    /// The bound on every request.
    pub timeout: Duration,
    /// The revision the `initialize` requests offer.
    pub revision: String,
    /// Whether a revision of the run lets the Protected Resource Metadata be found at a
    /// well-known URL instead of the challenge's `resource_metadata` (2025-11-25 and later;
    /// 2025-06-18 asks for `resource_metadata`).
    pub well_known_allowed: bool,
    /// Why no more requests are sent, once one ran out of time: each later one would wait a
    /// whole bound again.
    pub stalled: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

/// The unauthenticated `initialize`, as answered.
#[derive(Debug)]
pub enum Gate {
    /// `401`: the server wants a token; the answer, to be judged.
    Closed(Box<Reply>),
    /// Another status than 401 (2xx: served without a token): the server did not ask for
    /// authorization.
    Answered(u16),
    /// No answer that could be read.
    Unanswered(String),
}

/// The `Authorization` value of a `--header`, when it is a bearer token: the token.
pub fn bearer_token(value: &str) -> Option<String> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_string())
        .filter(|t| !t.is_empty())
}

impl Prober {
    /// Sends one request over a fresh [`Wire`] to `url`, unless an earlier one ran out of
    /// time; one that runs out of time stops the later ones.
    async fn send(
        &self,
        url: &str,
        headers: &[(String, String)],
        method: Method,
        request_headers: &[(String, String)],
        body: Option<Vec<u8>>,
        until: &Until,
    ) -> Result<Reply, String> {
        let stalled = || {
            self.stalled
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
        };
        if let Some(why) = stalled() {
            return Err(format!(
                "not sent: an earlier request got no answer in time ({why})"
            ));
        }
        let wire = Wire::new(url, headers, self.ca_cert.as_deref(), self.timeout)?;
        let answer = wire
            .send(method, request_headers, body, until, |_| {})
            .await;
        let ran_out = match &answer {
            Err(e) => e.ran_out(),
            Ok(reply) => reply.ran_out(),
        };
        if let Some(why) = ran_out {
            self.stalled
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_or_insert(why);
        }
        answer.map_err(|e| e.to_string())
    }

    fn initialize_body(&self) -> Vec<u8> {
        json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": self.revision,
                "capabilities": {},
                "clientInfo": {"name": "mcp-conformance-validate", "version": env!("CARGO_PKG_VERSION")},
            },
        })
        .to_string()
        .into_bytes()
    }

    /// POSTs `initialize` to `url` with `authorization` (an `Authorization` value) or none.
    pub(crate) async fn post(
        &self,
        url: &str,
        authorization: Option<&str>,
    ) -> Result<Reply, String> {
        let mut headers = vec![
            (
                "Accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
            ("Content-Type".to_string(), "application/json".to_string()),
        ];
        if let Some(value) = authorization {
            headers.push(("Authorization".into(), value.into()));
        }
        self.send(
            url,
            &self.headers,
            Method::POST,
            &headers,
            Some(self.initialize_body()),
            &Until::Response(json!(1)),
        )
        .await
    }

    /// GETs a metadata document (no `--header` goes along).
    pub(crate) async fn get(&self, url: &str) -> Fetched {
        let answer = self
            .send(
                url,
                &[],
                Method::GET,
                &[("Accept".into(), "application/json".into())],
                None,
                &Until::End,
            )
            .await;
        let document = match &answer {
            Ok(reply) if reply.status == 200 => serde_json::from_slice::<Value>(&reply.body)
                .ok()
                .filter(Value::is_object),
            _ => None,
        };
        Fetched {
            url: url.to_string(),
            answered: answer.is_ok(),
            seen: match &answer {
                Ok(reply) if reply.status == 200 && document.is_none() => {
                    format!(
                        "HTTP 200 but not a JSON object: {}",
                        excerpt(&reply.describe())
                    )
                }
                Ok(reply) => format!("HTTP {}", reply.status),
                Err(why) => excerpt(why),
            },
            document,
        }
    }

    /// The unauthenticated `initialize`, and what it says of the server.
    pub async fn gate(&self) -> Gate {
        match self.post(&self.url, None).await {
            Err(why) => Gate::Unanswered(why),
            Ok(reply) if reply.status == 401 => Gate::Closed(Box::new(reply)),
            Ok(reply) => Gate::Answered(reply.status),
        }
    }
}

/// A metadata document fetched, or why not.
#[derive(Clone, Debug)]
pub(crate) struct Fetched {
    /// Where from.
    pub(crate) url: String,
    /// What came back, in a few words (`HTTP 404`).
    pub(crate) seen: String,
    /// Whether an HTTP answer came back (of any status).
    pub(crate) answered: bool,
    /// The JSON object, when a 200 carried one.
    pub(crate) document: Option<Value>,
}

impl Prober {
    /// The first of `urls` that serves a JSON object, and every one tried (in order).
    pub(crate) async fn first_found(&self, urls: &[String]) -> (Option<Fetched>, Vec<Fetched>) {
        let mut tried = Vec::new();
        for at in urls {
            let fetched = self.get(at).await;
            let hit = fetched.document.is_some();
            tried.push(fetched.clone());
            if hit {
                return (Some(fetched), tried);
            }
        }
        (None, tried)
    }
}

/// The `WWW-Authenticate` values of a reply.
pub(crate) fn challenges(reply: &Reply) -> Vec<&str> {
    reply
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("www-authenticate"))
        .map(|(_, v)| v.as_str())
        .collect()
}

/// Where the Protected Resource Metadata is looked for, given the challenge's parameters:
/// its `resource_metadata` URL, else the well-known URLs.
pub(crate) fn resource_metadata_sources(
    url: &Url,
    params: Option<&[(String, String)]>,
) -> Vec<String> {
    match params.and_then(|p| p.iter().find(|(n, _)| n == "resource_metadata")) {
        Some((_, at)) => vec![at.clone()],
        None => resource_metadata_urls(url),
    }
}

/// The parameters of the first `Bearer` challenge among `WWW-Authenticate` values (RFC 9110
/// auth-params: `name=token` or `name="quoted string"`, separated by commas).
pub fn bearer_challenge<'a>(
    values: impl IntoIterator<Item = &'a str>,
) -> Option<Vec<(String, String)>> {
    values.into_iter().find_map(|value| {
        let value = value.trim_start();
        let (scheme, rest) = value
            .split_once(|c: char| c.is_ascii_whitespace())
            .unwrap_or((value, ""));
        scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| auth_params(rest))
    })
}

fn auth_params(text: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars
            .peek()
            .is_some_and(|c| c.is_ascii_whitespace() || *c == ',')
        {
            chars.next();
        }
        let mut name = String::new();
        while let Some(c) = chars.peek().copied() {
            if c == '=' || c == ',' || c.is_ascii_whitespace() {
                break;
            }
            name.push(c);
            chars.next();
        }
        if name.is_empty() {
            return params;
        }
        while chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            chars.next();
        }
        if chars.peek() != Some(&'=') {
            continue;
        }
        chars.next();
        while chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
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
            while let Some(c) = chars.peek().copied() {
                if c == ',' || c.is_ascii_whitespace() {
                    break;
                }
                value.push(c);
                chars.next();
            }
        }
        params.push((name.to_ascii_lowercase(), value));
    }
}

/// The scheme, host and port of `url`, as a prefix for well-known paths.
fn origin(url: &Url) -> String {
    let mut origin = format!("{}://{}", url.scheme(), url.host_str().unwrap_or(""));
    if let Some(port) = url.port() {
        origin.push_str(&format!(":{port}"));
    }
    origin
}

/// The path of `url` without a trailing slash (empty for the root).
fn path_of(url: &Url) -> String {
    url.path().trim_end_matches('/').to_string()
}

/// The well-known URLs of the Protected Resource Metadata for the MCP endpoint `url`, in the
/// order clients try them: the endpoint's path inserted, then the root.
pub fn resource_metadata_urls(url: &Url) -> Vec<String> {
    let base = format!("{}/.well-known/oauth-protected-resource", origin(url));
    let path = path_of(url);
    if path.is_empty() {
        vec![base]
    } else {
        vec![format!("{base}{path}"), base]
    }
}

/// The URLs of an authorization server's metadata for `issuer`, in the specification's order.
pub fn server_metadata_urls(issuer: &Url) -> Vec<String> {
    let (origin, path) = (origin(issuer), path_of(issuer));
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// The canonical URI of the resource at `url` (RFC 8707): without query or fragment.
pub fn canonical(url: &Url) -> Url {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url
}

/// Whether `url` is HTTPS, or on a loopback host (where the specification's clients and the
/// SDKs allow plain HTTP for local development).
fn https_or_loopback(url: &str) -> bool {
    let Ok(url) = Url::parse(url) else {
        return false;
    };
    url.scheme() == "https"
        || match url.host() {
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
}

/// What a request refused or served said, in a few words.
fn status_of(answer: &Result<Reply, String>) -> String {
    match answer {
        Ok(reply) => excerpt(&reply.describe()),
        Err(why) => format!("no answer: {}", excerpt(why)),
    }
}

/// The findings of the selected checks (`wants`), the unauthenticated `initialize` having
/// been answered with `challenge` (a `401`).
pub async fn judge(
    prober: &Prober,
    challenge: &Reply,
    wants: impl Fn(&str) -> bool,
) -> Vec<(&'static str, Finding)> {
    let mut found = Vec::new();
    let Ok(url) = Url::parse(&prober.url) else {
        return CHECKS
            .iter()
            .filter(|id| wants(id))
            .map(|id| (*id, Finding::skip("the URL is not valid")))
            .collect();
    };
    // The challenge, and where the Protected Resource Metadata is.
    let values = challenges(challenge);
    let params = bearer_challenge(values.iter().copied());
    let named = params.as_ref().and_then(|params| {
        params
            .iter()
            .find(|(n, _)| n == "resource_metadata")
            .map(|(_, v)| v.clone())
    });
    let (metadata, tried) = prober
        .first_found(&resource_metadata_sources(&url, params.as_deref()))
        .await;
    let shown = match values.as_slice() {
        [] => "no `WWW-Authenticate`".to_string(),
        values => format!("`WWW-Authenticate: {}`", excerpt(&values.join(" / "))),
    };
    let tried_text = tried
        .iter()
        .map(|f| format!("{} ({})", f.url, f.seen))
        .collect::<Vec<_>>()
        .join(", ");
    if wants(CHALLENGE) {
        let finding = match (&params, &named, &metadata) {
            (None, _, _) => Finding::Fail(
                Failure::new(
                    "a 401 with a `WWW-Authenticate: Bearer` challenge",
                    format!("a 401 with {shown}"),
                )
                .received(Some(challenge.describe())),
            ),
            (Some(_), Some(_), Some(_)) => Finding::pass(),
            (Some(_), None, Some(found)) if prober.well_known_allowed => {
                Finding::pass_with(format!(
                    "the challenge names no `resource_metadata`; the metadata is at the well-known {}",
                    found.url
                ))
            }
            (Some(_), None, Some(found)) => Finding::Fail(Failure::new(
                "`resource_metadata` in the challenge (2025-06-18 has no well-known fallback)",
                format!(
                    "{shown} (no `resource_metadata`; the metadata is at the well-known {})",
                    found.url
                ),
            )),
            (Some(_), Some(at), None) => Finding::Fail(Failure::new(
                "the Protected Resource Metadata at the challenge's `resource_metadata` URL",
                format!("{shown}, and `resource_metadata` {at} answered {tried_text}"),
            )),
            (Some(_), None, None) => Finding::Fail(Failure::new(
                "`resource_metadata` in the challenge, or the Protected Resource Metadata at a well-known URL",
                format!("{shown} (no `resource_metadata`), and no metadata at {tried_text}"),
            )),
        };
        found.push((CHALLENGE, finding));
    }
    let no_metadata = "no Protected Resource Metadata found (see server.auth.challenge)";
    // The Protected Resource Metadata.
    let mut issuer = None;
    if let Some(fetched) = &metadata {
        let document = fetched.document.clone().unwrap_or_default();
        let expected = canonical(&url);
        let resource = document.get("resource");
        let servers = document
            .get("authorization_servers")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect::<Vec<_>>()
            });
        issuer = servers.as_ref().and_then(|s| s.first().cloned());
        let mut wrong = Vec::new();
        match resource.and_then(Value::as_str) {
            None => wrong.push(format!(
                "`resource` is {}",
                resource.map_or("absent".to_string(), |v| format!("{v}, not a string"))
            )),
            Some(r) if Url::parse(r).ok().as_ref() != Some(&expected) => {
                wrong.push(format!("`resource` is `{}`, not `{expected}`", excerpt(r)))
            }
            Some(_) => {}
        }
        match &servers {
            None => wrong.push("no `authorization_servers` list".into()),
            Some(list) if list.is_empty() => wrong.push("`authorization_servers` is empty".into()),
            Some(_) => {}
        }
        if wants(RESOURCE_METADATA) {
            found.push((
                RESOURCE_METADATA,
                if wrong.is_empty() {
                    Finding::pass()
                } else {
                    Finding::Fail(
                        Failure::new(
                            format!(
                                "`resource` `{expected}` and at least one of `authorization_servers`"
                            ),
                            format!("at {}: {}", fetched.url, wrong.join("; ")),
                        )
                        .received(Some(excerpt(&document.to_string()))),
                    )
                },
            ));
        }
    } else if wants(RESOURCE_METADATA) {
        found.push((RESOURCE_METADATA, Finding::skip(no_metadata)));
    }
    // The authorization server's metadata.
    if wants(SERVER_METADATA) || wants(PKCE_S256) {
        let (server_finding, pkce_finding) = match &issuer {
            None if metadata.is_none() => (Finding::skip(no_metadata), Finding::skip(no_metadata)),
            None => {
                let why = "the Protected Resource Metadata names no authorization server (see server.auth.resource-metadata)";
                (Finding::skip(why), Finding::skip(why))
            }
            Some(issuer) => server_metadata(prober, issuer).await,
        };
        if wants(SERVER_METADATA) {
            found.push((SERVER_METADATA, server_finding));
        }
        if wants(PKCE_S256) {
            found.push((PKCE_S256, pkce_finding));
        }
    }
    // A token the server never issued.
    if wants(INVALID_TOKEN) {
        let answer = prober
            .post(&prober.url, Some(&format!("Bearer {UNISSUED_TOKEN}")))
            .await;
        let finding = match &answer {
            Ok(reply) if reply.status == 401 => Finding::pass(),
            _ => Finding::Fail(Failure::new(
                "401 to a token the server never issued",
                match &answer {
                    Ok(reply) if reply.is_success() => {
                        format!("HTTP {}: the unissued token was accepted", reply.status)
                    }
                    other => status_of(other),
                },
            )),
        };
        found.push((INVALID_TOKEN, finding));
    }
    // A token in the query string.
    if wants(TOKEN_NOT_IN_QUERY) {
        let token = prober.token.as_deref().unwrap_or(UNISSUED_TOKEN);
        let mut in_query = url.clone();
        in_query
            .query_pairs_mut()
            .append_pair("access_token", token);
        let answer = prober.post(in_query.as_str(), None).await;
        let which = if prober.token.is_some() {
            "the token given"
        } else {
            "an unissued token"
        };
        let finding = match &answer {
            Ok(reply) if (400..500).contains(&reply.status) => match prober.token {
                Some(_) => Finding::pass(),
                None => Finding::pass_with(
                    "judged with an unissued token (give one with --header to judge the server with its own)",
                ),
            },
            _ => Finding::Fail(Failure::new(
                format!("a 4xx to a request carrying {which} in its query string"),
                match &answer {
                    Ok(reply) if reply.is_success() => format!(
                        "HTTP {}: the request was served with the token in the query string",
                        reply.status
                    ),
                    other => status_of(other),
                },
            )),
        };
        found.push((TOKEN_NOT_IN_QUERY, finding));
    }
    if wants(AUDIENCE) {
        found.push((AUDIENCE, audience(prober).await));
    }
    if wants(INSUFFICIENT_SCOPE) {
        found.push((INSUFFICIENT_SCOPE, insufficient_scope(prober).await));
    }
    found
}

/// A token the same authorization server issued for another resource gets `401`.
async fn audience(prober: &Prober) -> Finding {
    let Some(token) = &prober.other_resource else {
        return Finding::skip(
            "needs a token the authorization server issued for another resource: give one with --token-for-other-resource",
        );
    };
    let answer = prober
        .post(&prober.url, Some(&format!("Bearer {token}")))
        .await;
    match &answer {
        Ok(reply) if reply.status == 401 => Finding::pass(),
        Ok(reply) if reply.is_success() => Finding::Fail(Failure::new(
            "401 to a token issued for another resource",
            format!(
                "HTTP {}: the token issued for another resource was accepted (its audience is not checked)",
                reply.status
            ),
        )),
        other => Finding::Fail(Failure::new(
            "401 to a token issued for another resource",
            status_of(other),
        )),
    }
}

/// A token without the scope needed gets `403` with a `Bearer` challenge saying
/// `error="insufficient_scope"` and the `scope` needed.
async fn insufficient_scope(prober: &Prober) -> Finding {
    let Some(token) = &prober.without_scope else {
        return Finding::skip(
            "needs a token without the scope the server needs: give one with --token-without-scope",
        );
    };
    let answer = prober
        .post(&prober.url, Some(&format!("Bearer {token}")))
        .await;
    let expected =
        "403 with `WWW-Authenticate: Bearer error=\"insufficient_scope\"` and the `scope` needed";
    let reply = match answer {
        Ok(reply) if reply.is_success() => {
            return Finding::skip(format!(
                "the token given with --token-without-scope was served `initialize` (HTTP {}): it has the scope `initialize` needs, the one request this check sends",
                reply.status
            ))
        }
        Ok(reply) => reply,
        Err(why) => return Finding::Fail(Failure::new(expected, format!("no answer: {}", excerpt(&why)))),
    };
    let values: Vec<&str> = reply
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("www-authenticate"))
        .map(|(_, v)| v.as_str())
        .collect();
    let params = bearer_challenge(values.iter().copied()).unwrap_or_default();
    let param = |name: &str| {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let mut wrong = Vec::new();
    if reply.status != 403 {
        wrong.push(format!("HTTP {}, not 403", reply.status));
    }
    if values.is_empty() {
        wrong.push("no `WWW-Authenticate`".to_string());
    } else {
        if param("error") != Some("insufficient_scope") {
            wrong.push(match param("error") {
                Some(error) => format!("`error` is `{}`", excerpt(error)),
                None => "no `error`".into(),
            });
        }
        if param("scope").is_none_or(|s| s.trim().is_empty()) {
            wrong.push("no `scope`".into());
        }
    }
    if wrong.is_empty() {
        return Finding::pass();
    }
    let shown = match values.as_slice() {
        [] => String::new(),
        values => format!(" (`WWW-Authenticate: {}`)", excerpt(&values.join(" / "))),
    };
    Finding::Fail(
        Failure::new(expected, format!("{}{shown}", wrong.join("; ")))
            .received(Some(reply.describe())),
    )
}

/// The authorization server's metadata for `issuer`: found in the specification's order and
/// well-formed (server.auth.server-metadata), with `S256` (server.auth.pkce-s256).
async fn server_metadata(prober: &Prober, issuer: &str) -> (Finding, Finding) {
    let Ok(parsed) = Url::parse(issuer) else {
        let fail = Finding::Fail(Failure::new(
            "an issuer URL in `authorization_servers`",
            format!("`{}`, not a URL", excerpt(issuer)),
        ));
        let why = "no authorization server metadata found (see server.auth.server-metadata)";
        return (fail, Finding::skip(why));
    };
    let (found, tried) = prober.first_found(&server_metadata_urls(&parsed)).await;
    judge_server_metadata(issuer, found.as_ref(), &tried)
}

/// Judges the authorization server's metadata for `issuer` as [`server_metadata`] fetched it:
/// `found` (the first document found), `tried` (every URL tried, in order).
pub(crate) fn judge_server_metadata(
    issuer: &str,
    found: Option<&Fetched>,
    tried: &[Fetched],
) -> (Finding, Finding) {
    let tried: Vec<String> = tried
        .iter()
        .map(|f| format!("{} ({})", f.url, f.seen))
        .collect();
    let Some(fetched) = found else {
        let why = "no authorization server metadata found (see server.auth.server-metadata)";
        return (
            Finding::Fail(Failure::new(
                format!("the metadata of the authorization server `{issuer}` at one of the URLs clients try"),
                format!("none found: {}", tried.join(", ")),
            )),
            Finding::skip(why),
        );
    };
    let document = fetched.document.clone().unwrap_or_default();
    let mut wrong = Vec::new();
    match document.get("issuer").and_then(Value::as_str) {
        Some(seen) if seen == issuer => {}
        Some(seen) => wrong.push(format!("`issuer` is `{}`, not `{issuer}`", excerpt(seen))),
        None => wrong.push("no `issuer`".into()),
    }
    for field in ["authorization_endpoint", "token_endpoint"] {
        if document.get(field).and_then(Value::as_str).is_none() {
            wrong.push(format!("no `{field}`"));
        }
    }
    let mut plain = Vec::new();
    for (key, value) in document.as_object().into_iter().flatten() {
        if let (true, Some(at)) = (
            key.ends_with("_endpoint") || key == "issuer",
            value.as_str(),
        ) {
            if !https_or_loopback(at) {
                plain.push(format!("`{key}` {}", excerpt(at)));
            }
        }
    }
    if !plain.is_empty() {
        wrong.push(format!("not HTTPS: {}", plain.join(", ")));
    }
    let server = if wrong.is_empty() {
        Finding::pass_with(format!("found at {}", fetched.url))
    } else {
        Finding::Fail(
            Failure::new(
                format!("`issuer` `{issuer}`, `authorization_endpoint`, `token_endpoint`, every endpoint HTTPS (or loopback)"),
                format!("at {}: {}", fetched.url, wrong.join("; ")),
            )
            .received(Some(excerpt(&document.to_string()))),
        )
    };
    let methods = document.get("code_challenge_methods_supported");
    let pkce = match methods.and_then(Value::as_array) {
        Some(list) if list.iter().any(|m| m == "S256") => Finding::pass(),
        _ => Finding::Fail(Failure::new(
            "`S256` in `code_challenge_methods_supported`",
            format!(
                "at {}: `code_challenge_methods_supported` is {}",
                fetched.url,
                methods.map_or("absent".to_string(), |m| excerpt(&m.to_string()))
            ),
        )),
    };
    (server, pkce)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_challenge_is_read_with_quoted_and_bare_parameters() {
        let params = bearer_challenge([
            "Basic realm=\"x\"",
            "Bearer error=\"invalid_token\", resource_metadata=\"http://a/.well-known/x\",scope=files:read, error_description=\"say \\\"no\\\"\"",
        ])
        .unwrap();
        assert_eq!(
            params,
            [
                ("error".to_string(), "invalid_token".to_string()),
                ("resource_metadata".into(), "http://a/.well-known/x".into()),
                ("scope".into(), "files:read".into()),
                ("error_description".into(), "say \"no\"".into()),
            ]
        );
        assert_eq!(bearer_challenge(["Bearer"]).unwrap(), []);
        assert!(bearer_challenge(["Basic realm=x"]).is_none());
    }

    #[test]
    fn the_well_known_urls_come_in_the_specifications_order() {
        let url = Url::parse("https://example.com:8443/public/mcp?x=1").unwrap();
        assert_eq!(
            resource_metadata_urls(&url),
            [
                "https://example.com:8443/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com:8443/.well-known/oauth-protected-resource",
            ]
        );
        let tenant = Url::parse("https://auth.example.com/tenant1").unwrap();
        assert_eq!(
            server_metadata_urls(&tenant),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        let root = Url::parse("https://auth.example.com").unwrap();
        assert_eq!(
            server_metadata_urls(&root),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            canonical(&url).as_str(),
            "https://example.com:8443/public/mcp"
        );
    }

    #[test]
    fn plain_http_is_allowed_on_loopback_only() {
        assert!(https_or_loopback("https://auth.example.com/token"));
        assert!(https_or_loopback("http://127.0.0.1:9/token"));
        assert!(https_or_loopback("http://localhost/token"));
        assert!(https_or_loopback("http://[::1]:8080/token"));
        assert!(!https_or_loopback("http://auth.example.com/token"));
        assert!(!https_or_loopback("not a url"));
    }

    #[test]
    fn only_a_bearer_authorization_gives_a_token() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc".into()));
        assert_eq!(bearer_token("bearer  abc "), Some("abc".into()));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer "), None);
    }
}
