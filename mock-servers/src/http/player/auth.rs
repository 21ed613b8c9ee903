//! The authorization side (`[server.auth]`): requests answered before the script sees them —
//! the Protected Resource Metadata, the authorization server's metadata and endpoints, and
//! the MCP endpoint's `401` to a request without the issued token.

use base64::Engine;
use serde_json::{json, Value};

use crate::http::body::MockBody;
use crate::http::server::Incoming;
use crate::script::{AuthSettings, IssMode, MetadataAt, Origin, Registration};
use crate::wire_log::summarize;

use super::{Head, Player};

mod assertion;

/// How many granted authorizations wait for their token requests at most; past it, the
/// oldest is forgotten.
const MAX_GRANTS: usize = 8;

/// An authorization the authorization endpoint granted, waiting for its token request.
#[derive(Clone, Debug, Default)]
pub(super) struct Grant {
    challenge: String,
    resource: Option<String>,
    redirect_uri: String,
    client_id: String,
}

/// What the `refresh_token` grants changed: the tokens the last one left valid (none
/// before the first, or after an authorization-code grant: then the settings' own), and how
/// many were answered.
#[derive(Clone, Debug, Default)]
pub(super) struct Refreshed {
    live: Option<(String, Option<String>)>,
    count: usize,
}

impl Refreshed {
    /// The access token the MCP endpoint accepts.
    fn access_token<'a>(&'a self, auth: &'a AuthSettings) -> &'a str {
        match &self.live {
            Some((access, _)) => access,
            None => &auth.access_token,
        }
    }

    /// The refresh token a `refresh_token` grant must carry.
    fn refresh_token<'a>(&'a self, auth: &'a AuthSettings) -> Option<&'a str> {
        match &self.live {
            Some((_, refresh)) => refresh.as_deref(),
            None => auth.refresh_token.as_deref(),
        }
    }
}

/// An answer of the authorization side.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn json(status: u16, body: &Value) -> Answer {
        Answer {
            status,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("cache-control".into(), "no-store".into()),
            ],
            body: body.to_string(),
        }
    }

    fn redirect(location: String) -> Answer {
        Answer {
            status: 302,
            headers: vec![("location".into(), location)],
            body: String::new(),
        }
    }

    fn error(status: u16, error: &str, description: &str) -> Answer {
        Answer::json(
            status,
            &json!({"error": error, "error_description": description}),
        )
    }
}

impl Player {
    /// Answers `incoming` when it is for the authorization side (handing it back otherwise).
    pub(super) fn auth_answer(&mut self, incoming: Incoming) -> Option<Incoming> {
        let Some(auth) = self.script.auth.clone() else {
            return Some(incoming);
        };
        let answer = match self.auth_route(&auth, &incoming) {
            Some(answer) => answer,
            None => return Some(incoming),
        };
        let headers: Vec<(&str, &str)> = answer
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let head = Head {
            status: Some(answer.status),
            headers,
            ..Head::default()
        };
        let summary = summarize(answer.body.as_bytes(), answer.body.len());
        let body = MockBody::whole(answer.body.clone());
        let _ = self.send_response(incoming.seq, incoming.respond, head, body, summary);
        None
    }

    fn origin_url(&self, origin: Origin) -> String {
        match origin {
            Origin::Primary => self.origins.primary.clone(),
            Origin::Second => self.origins.second.clone(),
            Origin::Plain => self.origins.plain.clone().unwrap_or_default(),
        }
    }

    fn endpoint_path(&self) -> String {
        let path = self
            .script
            .http
            .path
            .clone()
            .unwrap_or_else(|| "/mcp".into());
        path.split('?').next().unwrap_or("/mcp").to_string()
    }

    /// The MCP endpoint's URL, without a query: the resource the tokens are for.
    fn resource(&self) -> String {
        format!("{}{}", self.origins.primary, self.endpoint_path())
    }

    fn issuer(&self, auth: &AuthSettings) -> String {
        format!("{}{}", self.origin_url(auth.server), auth.issuer_path)
    }

    fn auth_route(&mut self, auth: &AuthSettings, incoming: &Incoming) -> Option<Answer> {
        let (path, query) = match incoming.path.split_once('?') {
            Some((path, query)) => (path.to_string(), query.to_string()),
            None => (incoming.path.clone(), String::new()),
        };
        let endpoint = self.endpoint_path();
        if incoming.origin == Origin::Primary
            && incoming.method == "GET"
            && auth.prm_at.iter().any(|at| at.path(&endpoint) == path)
        {
            return Some(self.protected_resource_metadata(auth));
        }
        if incoming.origin == auth.server {
            if incoming.method == "GET" {
                let at = auth
                    .metadata_at
                    .iter()
                    .find(|at| at.path(&auth.issuer_path) == path);
                if let Some(at) = at {
                    return Some(self.server_metadata(auth, *at));
                }
            }
            let endpoints = format!("{}{}", auth.issuer_path, auth.endpoints_path);
            if incoming.method == "GET" && path == format!("{endpoints}/authorize") {
                return Some(self.authorize(auth, &query));
            }
            if incoming.method == "POST" && path == format!("{endpoints}/token") {
                return Some(self.token(auth, incoming));
            }
            if let (Some(registration), "POST") = (&auth.registration, incoming.method.as_str()) {
                if path == format!("{endpoints}/register") {
                    return Some(self.register(registration, incoming));
                }
            }
        }
        if path.contains("/.well-known/") {
            return Some(Answer::error(404, "not_found", "no such metadata here"));
        }
        if incoming.origin != Origin::Primary {
            return match auth.server == incoming.origin {
                true => Some(Answer::error(404, "not_found", "no such endpoint")),
                false => None,
            };
        }
        // The MCP endpoint: a resource server.
        if Form::parse(query.as_bytes()).get("access_token").is_some() {
            if auth.query_token_served {
                return None;
            }
            return Some(Answer::error(
                400,
                "invalid_request",
                "an access token in the query string is refused",
            ));
        }
        let bearer = incoming
            .headers
            .iter()
            .find(|(n, _)| n == "authorization")
            .map(|(_, v)| v.as_str());
        let token = bearer.and_then(|b| b.strip_prefix("Bearer "));
        if token == Some(self.refreshed.access_token(auth)) {
            self.served(auth);
            return None;
        }
        if auth.any_token_served && token.is_some()
            || token.is_some() && token == auth.audience_unchecked_token.as_deref()
        {
            return None;
        }
        if token.is_some() && token == auth.scopeless_token.as_deref() {
            let mut params = vec!["error=\"insufficient_scope\"".to_string()];
            if !auth.insufficient_scope_unnamed {
                let scope = auth.challenge_scope.as_deref().unwrap_or("mcp");
                params.push(format!("scope=\"{scope}\""));
            }
            if let Some(at) = auth.prm_at.first() {
                params.push(format!(
                    "resource_metadata=\"{}{}\"",
                    self.origins.primary,
                    at.path(&endpoint)
                ));
            }
            return Some(Answer {
                status: 403,
                headers: vec![
                    (
                        "www-authenticate".into(),
                        format!("Bearer {}", params.join(", ")),
                    ),
                    ("content-type".into(), "text/plain".into()),
                ],
                body: "insufficient scope\n".into(),
            });
        }
        let mut challenge = String::from("Bearer");
        let mut params = Vec::new();
        if bearer.is_some() {
            params.push("error=\"invalid_token\"".to_string());
        }
        if auth.challenge_metadata {
            if let Some(at) = auth.prm_at.first() {
                params.push(format!(
                    "resource_metadata=\"{}{}\"",
                    self.origins.primary,
                    at.path(&endpoint)
                ));
            }
        }
        if let Some(scope) = &auth.challenge_scope {
            params.push(format!("scope=\"{scope}\""));
        }
        if !params.is_empty() {
            challenge.push(' ');
            challenge.push_str(&params.join(", "));
        }
        Some(Answer {
            status: 401,
            headers: vec![
                ("www-authenticate".into(), challenge),
                ("content-type".into(), "text/plain".into()),
            ],
            body: "authorization required\n".into(),
        })
    }

    fn protected_resource_metadata(&self, auth: &AuthSettings) -> Answer {
        let mut doc = json!({
            "resource": auth.prm_resource.clone().unwrap_or_else(|| self.resource()),
            "authorization_servers": [self.issuer(auth)],
            "bearer_methods_supported": ["header"],
        });
        if let Some(scopes) = &auth.scopes_supported {
            doc["scopes_supported"] = json!(scopes);
        }
        Answer::json(200, &doc)
    }

    /// The authorization server's metadata as served at `at`: at an OpenID Connect discovery
    /// URL, with the members OpenID Connect Discovery 1.0 section 3 requires besides RFC
    /// 8414's (`jwks_uri`, `subject_types_supported`, `id_token_signing_alg_values_supported`).
    fn server_metadata(&self, auth: &AuthSettings, at: MetadataAt) -> Answer {
        let issuer = self.issuer(auth);
        let endpoints = format!("{issuer}{}", auth.endpoints_path);
        let mut doc = json!({
            "issuer": match auth.wrong_issuer {
                true => "http://issuer.invalid".to_string(),
                false => issuer.clone(),
            },
            "authorization_endpoint": format!("{endpoints}/authorize"),
            "token_endpoint": format!("{endpoints}/token"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": auth.token_auth_methods,
        });
        if auth
            .token_auth_methods
            .iter()
            .any(|m| m == assertion::PRIVATE_KEY_JWT)
        {
            doc["token_endpoint_auth_signing_alg_values_supported"] = json!(["ES256"]);
        }
        if !auth.no_pkce_methods {
            doc["code_challenge_methods_supported"] = json!(["S256"]);
        }
        if auth.iss.advertised() {
            doc["authorization_response_iss_parameter_supported"] = json!(true);
        }
        let scopes = auth.server_scopes_supported.as_ref();
        if let Some(scopes) = scopes.or(auth.scopes_supported.as_ref()) {
            doc["scopes_supported"] = json!(scopes);
        }
        if at != MetadataAt::Oauth {
            doc["jwks_uri"] = json!(format!("{issuer}/jwks"));
            doc["subject_types_supported"] = json!(["public"]);
            doc["id_token_signing_alg_values_supported"] = json!(["RS256"]);
        }
        if auth.registration.is_some() {
            doc["registration_endpoint"] = json!(format!("{endpoints}/register"));
        }
        if auth.client_metadata_document.is_some() {
            doc["client_id_metadata_document_supported"] = json!(true);
        }
        Answer::json(200, &doc)
    }

    /// The authorization endpoint: approves at once, redirecting with `code` and `state`, or
    /// with `error` when the request is not one it can grant.
    fn authorize(&mut self, auth: &AuthSettings, query: &str) -> Answer {
        let form = Form::parse(query.as_bytes());
        let get = |name: &str| form.get(name);
        let Some(redirect_uri) = get("redirect_uri") else {
            return Answer::error(400, "invalid_request", "redirect_uri is missing");
        };
        let state = get("state");
        let iss = self.iss_of(auth);
        let refuse = |error: &str, description: &str| {
            let mut to = form_urlencoded::Serializer::new(String::new());
            to.append_pair("error", error);
            to.append_pair("error_description", description);
            if let Some(iss) = &iss {
                to.append_pair("iss", iss);
            }
            if let Some(state) = &state {
                to.append_pair("state", state);
            }
            Answer::redirect(format!(
                "{redirect_uri}{}{}",
                sep(&redirect_uri),
                to.finish()
            ))
        };
        if get("response_type").as_deref() != Some("code") {
            return refuse("unsupported_response_type", "response_type must be code");
        }
        let Some(client_id) =
            get("client_id").filter(|id| self.client_secret_of(auth, id).is_some())
        else {
            return refuse("unauthorized_client", "unknown client_id");
        };
        let Some(challenge) = get("code_challenge") else {
            return refuse(
                "invalid_request",
                "code_challenge is missing (PKCE is required)",
            );
        };
        if get("code_challenge_method").as_deref() != Some("S256") {
            return refuse("invalid_request", "code_challenge_method must be S256");
        }
        let resource = get("resource");
        if resource.as_deref() != Some(self.resource().as_str())
            && !(auth.resource_optional && resource.is_none())
        {
            return refuse(
                "invalid_target",
                "resource must name the MCP server (RFC 8707)",
            );
        }
        if let Some(required) = &auth.required_scope {
            let got = get("scope");
            let ok = match required.is_empty() {
                true => got.is_none(),
                false => got.is_some_and(|g| same_scopes(&g, required)),
            };
            if !ok {
                return refuse("invalid_scope", "not the scope this server grants");
            }
        }
        if self.grants.len() >= MAX_GRANTS {
            self.grants.remove(0);
        }
        self.grants.push(Grant {
            challenge,
            resource,
            redirect_uri: redirect_uri.clone(),
            client_id,
        });
        let mut to = form_urlencoded::Serializer::new(String::new());
        to.append_pair("code", &auth.code);
        if let Some(iss) = &iss {
            to.append_pair("iss", iss);
        }
        match (&state, auth.wrong_state) {
            (_, true) => {
                to.append_pair("state", "forged-state");
            }
            (Some(state), false) => {
                to.append_pair("state", state);
            }
            (None, false) => {}
        }
        Answer::redirect(format!(
            "{redirect_uri}{}{}",
            sep(&redirect_uri),
            to.finish()
        ))
    }

    /// The `iss` of an authorization response, its error responses included (RFC 9207).
    fn iss_of(&self, auth: &AuthSettings) -> Option<String> {
        match auth.iss {
            IssMode::Supported | IssMode::Unadvertised => Some(self.issuer(auth)),
            IssMode::Wrong => Some("http://issuer.invalid".into()),
            IssMode::Normalized => Some(format!("{}/", self.issuer(auth))),
            IssMode::None | IssMode::SupportedMissing => None,
        }
    }

    /// The token endpoint: the authorization-code grant, checked against its grant, and the
    /// refresh-token grant.
    fn token(&mut self, auth: &AuthSettings, incoming: &Incoming) -> Answer {
        let form = Form::parse(&incoming.body);
        let get = |name: &str| form.get(name);
        let basic = incoming
            .headers
            .iter()
            .find(|(n, _)| n == "authorization")
            .and_then(|(_, v)| v.strip_prefix("Basic "))
            .and_then(|b| {
                base64::engine::general_purpose::STANDARD
                    .decode(b.trim())
                    .ok()
            })
            .and_then(|b| String::from_utf8(b).ok());
        let (client_id, secret) = match &basic {
            Some(pair) => match pair.split_once(':') {
                Some((id, secret)) => (Some(decode(id)), Some(decode(secret))),
                None => (None, None),
            },
            None => (get("client_id"), get("client_secret")),
        };
        let jwt = assertion::carries_assertion(&form) && !auth.token_error_echoes;
        let client_id = match jwt {
            true => match self.assertion_client(auth, &form) {
                Ok(id) => Some(id),
                Err(refused) => return refused,
            },
            false => client_id,
        };
        if auth.token_error_echoes {
            let mut echoed = format!(
                "refused code={} code_verifier={} client_secret={}",
                get("code").unwrap_or_default(),
                get("code_verifier").unwrap_or_default(),
                secret.clone().unwrap_or_default()
            );
            if let Some(assertion) = get("client_assertion") {
                echoed.push_str(&format!(" client_assertion={assertion}"));
            }
            return Answer::error(400, "invalid_grant", &echoed);
        }
        let client = ClientAuth {
            basic: basic.is_some(),
            jwt,
            client_id,
            secret,
        };
        match get("grant_type").as_deref() {
            Some("authorization_code") => {}
            Some("client_credentials") => {
                let secret = client
                    .client_id
                    .as_deref()
                    .and_then(|id| self.client_secret_of(auth, id));
                let confidential = matches!(secret, Some(Some(_))) || client.jwt;
                return client
                    .check(auth, secret)
                    .and_then(|()| self.client_credentials(auth, &form, confidential))
                    .map_or_else(|refused| refused, |doc| Answer::json(200, &doc));
            }
            Some("refresh_token") => {
                let secret = client
                    .client_id
                    .as_deref()
                    .and_then(|id| self.client_secret_of(auth, id));
                return client
                    .check(auth, secret)
                    .and_then(|()| self.refresh(auth, &form))
                    .map_or_else(|refused| refused, |doc| Answer::json(200, &doc));
            }
            _ => {
                return Answer::error(
                    400,
                    "unsupported_grant_type",
                    "grant_type must be authorization_code, refresh_token or client_credentials",
                );
            }
        }
        if self.grants.is_empty() {
            return Answer::error(400, "invalid_grant", "no authorization was granted");
        }
        // The grant whose challenge the verifier answers, else the oldest: used up either way.
        let verifier = get("code_verifier");
        let at = verifier
            .as_ref()
            .and_then(|v| self.grants.iter().position(|g| g.challenge == s256(v)))
            .unwrap_or(0);
        let grant = self.grants.remove(at);
        if get("code").as_deref() != Some(auth.code.as_str()) {
            return Answer::error(400, "invalid_grant", "unknown code");
        }
        let Some(verifier) = verifier else {
            return Answer::error(400, "invalid_grant", "code_verifier is missing (PKCE)");
        };
        if s256(&verifier) != grant.challenge {
            return Answer::error(
                400,
                "invalid_grant",
                "code_verifier does not match the S256 code_challenge",
            );
        }
        if get("redirect_uri").as_deref() != Some(grant.redirect_uri.as_str()) {
            return Answer::error(
                400,
                "invalid_grant",
                "redirect_uri differs from the authorization request's",
            );
        }
        if get("resource") != grant.resource {
            return Answer::error(
                400,
                "invalid_target",
                "resource missing or not the authorization request's (RFC 8707)",
            );
        }
        if let Err(refused) = client.check(auth, self.client_secret_of(auth, &grant.client_id)) {
            return refused;
        }
        if client.client_id.as_deref() != Some(grant.client_id.as_str()) {
            return Answer::error(401, "invalid_client", "unknown client");
        }
        self.refreshed.live = None;
        Answer::json(
            200,
            &token_response(&auth.access_token, auth.refresh_token.as_deref()),
        )
    }
}

impl Player {
    /// Counts an MCP request served with the issued token; the `migration`'s count reached,
    /// the resource moves to the new authorization server (the next request sees it).
    fn served(&mut self, auth: &AuthSettings) {
        self.served += 1;
        let Some(migration) = auth.migration.as_ref().filter(|m| self.served >= m.after) else {
            return;
        };
        if let Some(script_auth) = self.script.auth.as_mut() {
            *script_auth = auth.migrated(migration);
        }
        self.grants.clear();
        self.refreshed = Refreshed::default();
        self.registered = false;
        self.served = 0;
    }

    /// The secret of a client the authorization server knows (`Some(None)`: a public one):
    /// the pre-registered client, and the one registered dynamically once it is.
    fn client_secret_of(&self, auth: &AuthSettings, client_id: &str) -> Option<Option<String>> {
        if client_id == auth.client_id {
            return Some(auth.client_secret.clone());
        }
        if Some(client_id) == auth.client_metadata_document.as_deref() {
            return Some(None);
        }
        let registered = auth.registration.as_ref().filter(|_| self.registered)?;
        (client_id == registered.client_id).then(|| registered.client_secret.clone())
    }

    /// Dynamic client registration: `registration`'s client, for a request with
    /// `redirect_uris` (and the `application_type` required, if any).
    fn register(&mut self, registration: &Registration, incoming: &Incoming) -> Answer {
        let request: Value = serde_json::from_slice(&incoming.body).unwrap_or_default();
        let uris = request.get("redirect_uris").and_then(Value::as_array);
        if uris.is_none_or(|u| u.is_empty()) {
            return Answer::error(400, "invalid_redirect_uri", "redirect_uris is missing");
        }
        let kind = request.get("application_type").and_then(Value::as_str);
        if let Some(required) = registration.application_type.as_deref() {
            if kind != Some(required) {
                return Answer::error(
                    400,
                    "invalid_client_metadata",
                    "application_type missing or not one this server registers with these redirect_uris",
                );
            }
        }
        self.registered = true;
        let mut doc = json!({
            "client_id": registration.client_id,
            "redirect_uris": uris,
            "token_endpoint_auth_method": "none",
        });
        if let Some(secret) = &registration.client_secret {
            doc["client_secret"] = json!(secret);
            doc["token_endpoint_auth_method"] = json!("client_secret_basic");
        }
        Answer::json(201, &doc)
    }

    /// The client-credentials grant: for a confidential client (authenticated already by
    /// its secret or its assertion), its token for the MCP endpoint.
    fn client_credentials(
        &mut self,
        auth: &AuthSettings,
        form: &Form,
        confidential: bool,
    ) -> Result<Value, Answer> {
        if !confidential {
            return Err(Answer::error(
                400,
                "unauthorized_client",
                "client_credentials is for confidential clients",
            ));
        }
        self.resource_named(form)?;
        self.refreshed.live = None;
        Ok(token_response(&auth.access_token, None))
    }

    /// A token request's `resource` names the MCP server (RFC 8707), else the refusal.
    fn resource_named(&self, form: &Form) -> Result<(), Answer> {
        if form.get("resource").as_deref() == Some(self.resource().as_str()) {
            return Ok(());
        }
        Err(Answer::error(
            400,
            "invalid_target",
            "resource missing or not the MCP server (RFC 8707)",
        ))
    }

    /// The `refresh_token` grant: the next of `refreshes`, for the refresh token issued last.
    fn refresh(&mut self, auth: &AuthSettings, form: &Form) -> Result<Value, Answer> {
        let current = self.refreshed.refresh_token(auth).map(str::to_string);
        if current.is_none() || form.get("refresh_token") != current {
            return Err(Answer::error(
                400,
                "invalid_grant",
                "unknown, replaced or missing refresh_token",
            ));
        }
        self.resource_named(form)?;
        let Some(next) = auth.refreshes.get(self.refreshed.count) else {
            return Err(Answer::error(
                400,
                "invalid_grant",
                "the refresh token expired",
            ));
        };
        self.refreshed.count += 1;
        let refresh = next.refresh_token.clone().or(current);
        self.refreshed.live = Some((next.access_token.clone(), refresh));
        Ok(token_response(
            &next.access_token,
            next.refresh_token.as_deref(),
        ))
    }
}

/// A token endpoint's success (RFC 6749 section 5.1): a Bearer `access_token` for an hour,
/// and a `refresh_token` where one is issued.
fn token_response(access_token: &str, refresh_token: Option<&str>) -> Value {
    let mut doc = json!({
        "access_token": access_token,
        "token_type": "Bearer",
        "expires_in": 3600,
    });
    if let Some(refresh) = refresh_token {
        doc["refresh_token"] = json!(refresh);
    }
    doc
}

/// How a token request authenticated its client.
struct ClientAuth {
    basic: bool,
    /// Authenticated by a `private_key_jwt` assertion, verified already.
    jwt: bool,
    client_id: Option<String>,
    secret: Option<String>,
}

impl ClientAuth {
    /// Refused unless the client is a known one (`known`: its secret, `Some(None)` for a
    /// public client), authenticated a way the server accepts.
    fn check(&self, auth: &AuthSettings, known: Option<Option<String>>) -> Result<(), Answer> {
        let method = match (self.basic, &self.secret) {
            _ if self.jwt => assertion::PRIVATE_KEY_JWT,
            (true, _) => "client_secret_basic",
            (false, Some(_)) => "client_secret_post",
            (false, None) => "none",
        };
        if !auth.token_auth_methods.iter().any(|m| m == method) {
            return Err(Answer::error(
                401,
                "invalid_client",
                &format!("{method} is not a client authentication method of this server"),
            ));
        }
        let Some(secret) = known else {
            return Err(Answer::error(401, "invalid_client", "unknown client"));
        };
        let keyed =
            auth.client_jwk.is_some() && self.client_id.as_deref() == Some(auth.client_id.as_str());
        if keyed && !self.jwt {
            return Err(Answer::error(
                401,
                "invalid_client",
                "this client has a registered key: it authenticates with private_key_jwt",
            ));
        }
        if secret.is_some() && self.secret != secret {
            return Err(Answer::error(
                401,
                "invalid_client",
                "client authentication failed",
            ));
        }
        Ok(())
    }
}

/// The PKCE S256 challenge of `verifier`: base64url (no padding) of its SHA-256.
pub fn s256(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

fn sep(uri: &str) -> &'static str {
    match uri.contains('?') {
        true => "&",
        false => "?",
    }
}

fn same_scopes(a: &str, b: &str) -> bool {
    let mut a: Vec<&str> = a.split_whitespace().collect();
    let mut b: Vec<&str> = b.split_whitespace().collect();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

/// Form-urlencoded pairs (a query string, a token request's body), looked up by name.
struct Form(Vec<(String, String)>);

impl Form {
    fn parse(bytes: &[u8]) -> Form {
        Form(form_urlencoded::parse(bytes).into_owned().collect())
    }

    /// The first value given for `name`.
    fn get(&self, name: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

/// A `client_secret_basic` part: form-urlencoded (RFC 6749 §2.3.1).
fn decode(part: &str) -> String {
    form_urlencoded::parse(format!("x={part}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
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
}
