//! The authorization side of the HTTP mock (`[server.auth]`): the MCP endpoint as an OAuth 2.1
//! resource server, its Protected Resource Metadata (RFC 9728), and a scripted authorization
//! server (RFC 8414 and OpenID Connect discovery, an authorization endpoint that approves at
//! once, a token endpoint checking PKCE and `resource`), with knobs for the faults a client
//! must cope with.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Origin;

/// The authorization side of an HTTP script. With it, a request to the MCP endpoint without
/// the access token the authorization server issued gets `401` (with `WWW-Authenticate`)
/// and takes no step; one carrying a token in its query string gets `400`; the metadata
/// documents and the authorization server's endpoints are answered without taking a step.
/// Every such request and answer is in the wire log.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    /// The listener the authorization server is on: `second` (another origin, the
    /// default) or `primary` (beside the MCP endpoint).
    #[serde(default = "second")]
    pub server: Origin,
    /// The path of the issuer (`/tenant1`); empty (the default) for an issuer without a path.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub issuer_path: String,
    /// A path between the issuer and its authorization and token endpoints (`/oauth`:
    /// `<issuer>/oauth/authorize`), which only its metadata names; none by default.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub endpoints_path: String,
    /// Where the Protected Resource Metadata is served: `path` (at the MCP endpoint's path,
    /// `/.well-known/oauth-protected-resource/mcp`), `root`
    /// (`/.well-known/oauth-protected-resource`), `custom` (`/prm/resource-metadata`, a URL
    /// only the challenge names). Both well-known URLs by default.
    #[serde(default = "default_prm_at")]
    pub prm_at: Vec<PrmAt>,
    /// Whether the 401's `WWW-Authenticate` names the metadata's URL in
    /// `resource_metadata` (the first of `prm_at`); true by default.
    #[serde(default = "yes")]
    pub challenge_metadata: bool,
    /// The `scope` of the 401's `WWW-Authenticate`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge_scope: Option<String>,
    /// The metadata's `scopes_supported`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// The authorization server metadata's `scopes_supported`, when not `scopes_supported`
    /// (the Protected Resource Metadata's): a server offering `offline_access`, which a
    /// protected resource does not list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_scopes_supported: Option<Vec<String>>,
    /// The `resource` the Protected Resource Metadata names, when not the MCP endpoint's URL
    /// (a metadata document written for another resource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prm_resource: Option<String>,
    /// The MCP endpoint serves a request carrying any bearer token, not only the one the
    /// authorization server issued (a resource server that does not validate tokens).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub any_token_served: bool,
    /// The MCP endpoint serves a request carrying a token (any) in its query string
    /// (`access_token=`) instead of refusing it with `400`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub query_token_served: bool,
    /// A token the authorization server issued for another resource, which the MCP endpoint
    /// serves all the same (a resource server that does not check a token's audience);
    /// any other token but the issued one gets `401`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience_unchecked_token: Option<String>,
    /// A token without the scope the MCP endpoint needs: answered `403` with
    /// `WWW-Authenticate: Bearer error="insufficient_scope"`, the `scope` needed (the
    /// challenge's `scope`, else `mcp`) and `resource_metadata`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopeless_token: Option<String>,
    /// The `403` to `scopeless_token` names no `scope`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insufficient_scope_unnamed: bool,
    /// Where the authorization server's metadata is served: `oauth` (RFC 8414, path
    /// inserted), `oidc` (OpenID Connect discovery, path inserted), `oidc-appended` (OpenID
    /// Connect discovery, path appended; only for an issuer with a path). Every one by
    /// default.
    #[serde(default = "default_metadata_at")]
    pub metadata_at: Vec<MetadataAt>,
    /// The authorization server's metadata names another `issuer` than the one the
    /// Protected Resource Metadata names (`http://issuer.invalid`): a document a client
    /// must not use.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wrong_issuer: bool,
    /// Leave `code_challenge_methods_supported` out of the authorization server's metadata
    /// (a server without PKCE).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_pkce_methods: bool,
    /// The authorization request may leave out `resource` (an authorization server judged
    /// on its own, for no one resource); one that names a resource must still name the MCP
    /// endpoint.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resource_optional: bool,
    /// The `scope` the authorization request must carry: a space-separated list, or `""`
    /// for no `scope` at all; any scope when absent. Another one is answered with
    /// `error=invalid_scope` on the redirect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_scope: Option<String>,
    /// The authorization endpoint redirects with another `state` than the request's (a
    /// forged or replayed authorization response), its code valid all the same.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wrong_state: bool,
    /// `iss` in the authorization response, error responses included (RFC 9207), and its
    /// advertisement in the metadata
    /// (`authorization_response_iss_parameter_supported`): `none` (neither, the default),
    /// `supported` (both, the right issuer), `supported-missing` (advertised, left out),
    /// `wrong` (advertised, another issuer), `unadvertised` (the right issuer, not
    /// advertised), `normalized` (advertised, the right issuer with a trailing slash: equal
    /// only after URL normalization).
    #[serde(default, skip_serializing_if = "IssMode::is_none")]
    pub iss: IssMode,
    /// The pre-registered client id the authorization server knows.
    #[serde(default = "default_client_id")]
    pub client_id: String,
    /// The protected resource moves to another authorization server once the first one's
    /// token was served `after` times: the Protected Resource Metadata then names the new
    /// one, and every token, client and grant of the first is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration: Option<Migration>,
    /// A Client ID Metadata Document URL the authorization server takes as a public
    /// client's id, when given: its metadata then says `client_id_metadata_document_supported`.
    /// The document is not fetched: it is taken to list the redirect URI the client uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_document: Option<String>,
    /// Dynamic client registration (RFC 7591): when given, the metadata names
    /// `registration_endpoint` (`<issuer>/register`), where a JSON request listing
    /// `redirect_uris` registers a client, answered `201` with its id; that client is then
    /// known beside `client_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<Registration>,
    /// The pre-registered client's secret: when given, the token request must carry it
    /// (`client_secret_basic` or `client_secret_post`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The pre-registered client's public key, an EC P-256 JWK: when given, that client
    /// authenticates at the token endpoint with `private_key_jwt` alone (RFC 7523 section
    /// 2.2), a new ES256 assertion each time, which the token endpoint verifies: the
    /// signature with this key, `iss` and `sub` the client id, `aud` the issuer (with or
    /// without a trailing `/`), `exp` still ahead, a `jti` never seen before. Any other
    /// assertion, or another authentication of that client, is refused with
    /// `401 invalid_client`, its description naming the cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_jwk: Option<Jwk>,
    /// The client authentication methods the token endpoint accepts, advertised as
    /// `token_endpoint_auth_methods_supported`: `client_secret_basic`, `client_secret_post`,
    /// `none` (every one by default), and `private_key_jwt` (then advertised with
    /// `token_endpoint_auth_signing_alg_values_supported` `ES256`). A token request
    /// authenticated another way is refused with `401 invalid_client`.
    #[serde(default = "default_auth_methods")]
    pub token_auth_methods: Vec<String>,
    /// The authorization code the authorization endpoint issues.
    #[serde(default = "default_code")]
    pub code: String,
    /// The access token the token endpoint issues (the one the MCP endpoint accepts).
    #[serde(default = "default_access_token")]
    pub access_token: String,
    /// The refresh token issued with it, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// The `refresh_token` grants the token endpoint answers, in order. Each must carry the
    /// refresh token issued last (`refresh_token`, then the one a grant here rotated it to),
    /// `resource` naming the MCP endpoint, and the client's credentials; it issues its
    /// `access_token`, which the MCP endpoint then accepts instead of the one before. A
    /// replaced refresh token, and any refresh past the last one here, is refused with
    /// `400 invalid_grant`. An authorization-code grant issues `access_token` and
    /// `refresh_token` again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refreshes: Vec<Refresh>,
    /// Every token request is refused with `400 invalid_grant`, its description quoting the
    /// request's code, `code_verifier` and client secret (and its `client_assertion`, when
    /// it carries one): a server that echoes credentials.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub token_error_echoes: bool,
}

/// An EC P-256 public key as a JSON Web Key (RFC 7517, RFC 7518 section 6.2.1).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Jwk {
    /// The key type: `EC`.
    pub kty: String,
    /// The curve: `P-256`.
    pub crv: String,
    /// The point's x coordinate, 32 bytes in base64url without padding.
    pub x: String,
    /// The point's y coordinate, 32 bytes in base64url without padding.
    pub y: String,
}

/// Another authorization server the protected resource moves to, on the same listener.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Migration {
    /// How many MCP requests carrying the first authorization server's token are served
    /// before the move.
    pub after: usize,
    /// The new authorization server's issuer path (`/as2` by default). It knows no
    /// pre-registered client, and offers dynamic registration.
    #[serde(default = "default_migration_path")]
    pub issuer_path: String,
    /// The client id its dynamic registration issues.
    #[serde(default = "default_migration_client_id")]
    pub client_id: String,
    /// The access token it issues, the only one the MCP endpoint then accepts.
    #[serde(default = "default_migration_access_token")]
    pub access_token: String,
}

impl AuthSettings {
    /// The settings once the resource moved to `migration`'s authorization server.
    pub fn migrated(&self, migration: &Migration) -> AuthSettings {
        AuthSettings {
            issuer_path: migration.issuer_path.clone(),
            client_id: String::new(),
            client_secret: None,
            client_jwk: None,
            registration: Some(Registration {
                client_id: migration.client_id.clone(),
                client_secret: None,
                application_type: None,
            }),
            access_token: migration.access_token.clone(),
            refresh_token: None,
            refreshes: Vec::new(),
            migration: None,
            ..self.clone()
        }
    }
}

fn default_migration_path() -> String {
    "/as2".into()
}

fn default_migration_client_id() -> String {
    "as2-client-7b1d".into()
}

fn default_migration_access_token() -> String {
    "access-token-as2-9e4c".into()
}

/// The client dynamic registration issues.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Registration {
    /// The client id issued.
    #[serde(default = "default_registered_client_id")]
    pub client_id: String,
    /// The client secret issued with it, when given (a confidential client, which the
    /// token endpoint then authenticates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The `application_type` a registration must name, when given (`native`: an OpenID
    /// Connect authorization server, whose default `web` refuses a loopback redirect URI);
    /// another, or none, is refused with `400 invalid_client_metadata`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application_type: Option<String>,
}

fn default_registered_client_id() -> String {
    "registered-client-1f3e".into()
}

/// What one `refresh_token` grant issues.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Refresh {
    /// The new access token.
    pub access_token: String,
    /// The new refresh token, replacing the one the grant carried (rotation); without it,
    /// no refresh token is issued and the one used stays valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
}

/// What the authorization response says of its issuer (RFC 9207).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum IssMode {
    /// No `iss`, and none advertised.
    #[default]
    None,
    /// Advertised, and the right issuer in every response.
    Supported,
    /// Advertised, and left out of the response.
    SupportedMissing,
    /// Advertised, and another issuer (`http://issuer.invalid`) in the response.
    Wrong,
    /// Not advertised, and the right issuer in the response all the same.
    Unadvertised,
    /// Advertised, and the right issuer followed by `/` in the response: the same URL once
    /// normalized, another string.
    Normalized,
}

impl IssMode {
    /// Whether it is the default (so it is left out when serialized).
    pub fn is_none(&self) -> bool {
        *self == IssMode::None
    }

    /// Whether the metadata advertises `iss`.
    pub fn advertised(self) -> bool {
        matches!(
            self,
            IssMode::Supported | IssMode::SupportedMissing | IssMode::Wrong | IssMode::Normalized
        )
    }
}

/// A URL the Protected Resource Metadata may be served at.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PrmAt {
    /// `/.well-known/oauth-protected-resource` followed by the MCP endpoint's path.
    Path,
    /// `/.well-known/oauth-protected-resource`.
    Root,
    /// `/prm/resource-metadata`: not a well-known URL, found only through the challenge.
    Custom,
}

impl PrmAt {
    /// The path it stands for, for an MCP endpoint at `endpoint_path`.
    pub fn path(self, endpoint_path: &str) -> String {
        match self {
            PrmAt::Path => format!("/.well-known/oauth-protected-resource{endpoint_path}"),
            PrmAt::Root => "/.well-known/oauth-protected-resource".into(),
            PrmAt::Custom => "/prm/resource-metadata".into(),
        }
    }
}

/// A URL the authorization server's metadata may be served at.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MetadataAt {
    /// `/.well-known/oauth-authorization-server` followed by the issuer's path (RFC 8414).
    Oauth,
    /// `/.well-known/openid-configuration` followed by the issuer's path.
    Oidc,
    /// The issuer's path followed by `/.well-known/openid-configuration` (OpenID Connect
    /// Discovery 1.0).
    OidcAppended,
}

impl MetadataAt {
    /// The path it stands for, for an issuer at `issuer_path`.
    pub fn path(self, issuer_path: &str) -> String {
        match self {
            MetadataAt::Oauth => format!("/.well-known/oauth-authorization-server{issuer_path}"),
            MetadataAt::Oidc => format!("/.well-known/openid-configuration{issuer_path}"),
            MetadataAt::OidcAppended => format!("{issuer_path}/.well-known/openid-configuration"),
        }
    }
}

fn second() -> Origin {
    Origin::Second
}

fn yes() -> bool {
    true
}

fn default_prm_at() -> Vec<PrmAt> {
    vec![PrmAt::Path, PrmAt::Root]
}

fn default_metadata_at() -> Vec<MetadataAt> {
    vec![
        MetadataAt::Oauth,
        MetadataAt::Oidc,
        MetadataAt::OidcAppended,
    ]
}

fn default_auth_methods() -> Vec<String> {
    ["client_secret_basic", "client_secret_post", "none"]
        .map(String::from)
        .to_vec()
}

fn default_client_id() -> String {
    "mcp-conformance-client".into()
}

fn default_code() -> String {
    "authz-code-5f1e9a".into()
}

fn default_access_token() -> String {
    "access-token-7c3d2b".into()
}
