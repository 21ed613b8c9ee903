//! `private_key_jwt` client authentication (RFC 7523 section 2.2, the OAuth Client
//! Credentials extension of MCP): the pre-registered client's EC P-256 key ([`ClientKey`]) and
//! the signed assertion each token request carries in place of a secret.
//!
//! The assertion is a compact JWS signed with ES256: `iss` and `sub` are the client id, `aud`
//! the authorization server's issuer identifier (RFC 7523bis; the official conformance suite
//! accepts the issuer alone), `iat` now, `exp` [`ASSERTION_LIFETIME`] later, `jti` random.
//! A new one is signed for every token request, so none is ever sent twice.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};

use super::oauth::FlowClient;
use super::Endpoint;
use crate::McpError;

/// The `client_assertion_type` of a JWT assertion (RFC 7523 section 2.2).
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The token endpoint authentication method of a JWT signed with the client's private key.
pub(crate) const PRIVATE_KEY_JWT: &str = "private_key_jwt";

/// How long an assertion is valid: its `exp` is this long after its `iat`. Short, as
/// RFC 7523 section 3 asks ("the authorization server may reject JWTs with an "exp" claim
/// value that is unreasonably far in the future").
pub const ASSERTION_LIFETIME: Duration = Duration::from_secs(60);

/// Why a private key was refused. Neither message quotes the key.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// No `PRIVATE KEY` PEM block.
    #[error("the private key is not a PEM PKCS#8 key (-----BEGIN PRIVATE KEY-----)")]
    Pem,
    /// A PKCS#8 key, but not an EC P-256 one with its public key; `reason` is the
    /// decoder's word for why (`InvalidEncoding`, `WrongAlgorithm`, …).
    #[error("the private key is not an EC P-256 PKCS#8 key with its public key ({reason})")]
    NotP256 {
        /// Why the decoder refused it.
        reason: String,
    },
}

/// A client's EC P-256 private key, for `private_key_jwt` (ES256). It is a secret: its `Debug`
/// shows nothing of it, no error quotes it, and only the signatures it makes are sent.
#[derive(Clone)]
pub struct ClientKey {
    pair: Arc<EcdsaKeyPair>,
}

impl ClientKey {
    /// The key of a PEM `PRIVATE KEY` block (PKCS#8, as `openssl genpkey -algorithm EC
    /// -pkeyopt ec_paramgen_curve:P-256` writes it, the public key included).
    pub fn from_pem(pem: &str) -> Result<ClientKey, KeyError> {
        use rustls_pki_types::pem::PemObject;
        let der = rustls_pki_types::PrivatePkcs8KeyDer::from_pem_slice(pem.as_bytes())
            .map_err(|_| KeyError::Pem)?;
        ClientKey::from_pkcs8(der.secret_pkcs8_der())
    }

    /// The key of a DER PKCS#8 document.
    pub fn from_pkcs8(der: &[u8]) -> Result<ClientKey, KeyError> {
        let pair = EcdsaKeyPair::from_pkcs8(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            der,
            &ring::rand::SystemRandom::new(),
        )
        .map_err(|e| KeyError::NotP256 {
            reason: e.to_string(),
        })?;
        Ok(ClientKey {
            pair: Arc::new(pair),
        })
    }

    /// The public key, an uncompressed SEC1 point (`04 || x || y`).
    pub fn public_key(&self) -> &[u8] {
        self.pair.public_key().as_ref()
    }

    /// The compact JWS (ES256) of `claims`: its header, claims and the raw `r || s` signature,
    /// each base64url without padding.
    pub(crate) fn sign(&self, claims: &Value) -> Result<String, McpError> {
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let header = json!({ "alg": "ES256", "typ": "JWT" });
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let signature = self
            .pair
            .sign(&ring::rand::SystemRandom::new(), input.as_bytes())
            .map_err(|_| {
                McpError::Transport(
                    "authorization: the client assertion could not be signed".into(),
                )
            })?;
        Ok(format!("{input}.{}", b64(signature.as_ref())))
    }
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientKey([sensitive])")
    }
}

/// The claims of one assertion by `client_id` for the authorization server `audience`,
/// issued at `now` (seconds since the epoch), with the random `jti`.
pub(crate) fn claims(client_id: &str, audience: &str, now: u64, jti: &str) -> Value {
    json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME.as_secs(),
        "jti": jti,
    })
}

/// Whether a client holding a key authenticates with it: where the authorization server
/// lists `private_key_jwt` in `token_endpoint_auth_methods_supported`, or where the client
/// has no secret to authenticate with instead.
pub(crate) fn assertion_chosen(metadata: &Value, has_secret: bool) -> bool {
    super::oauth::metadata_lists(
        metadata,
        "token_endpoint_auth_methods_supported",
        PRIVATE_KEY_JWT,
    ) || !has_secret
}

/// Seconds since the epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Endpoint {
    /// `private_key_jwt`: where a key is held for the pre-registered `client` and
    /// [`assertion_chosen`], adds `client_assertion_type` and a new `client_assertion` to
    /// `form` (remembered as a secret) and returns `true`. No `client_id`: the assertion's
    /// `sub` names the client (RFC 7523 section 3, as the Client Credentials extension's
    /// example has it).
    pub(super) fn assertion_authenticated(
        &self,
        client: &FlowClient,
        metadata: &Value,
        form: &mut url::form_urlencoded::Serializer<'static, String>,
    ) -> Result<bool, McpError> {
        let Some(oauth) = &self.oauth else {
            return Ok(false);
        };
        let Some(key) = &oauth.private_key else {
            return Ok(false);
        };
        if oauth.client_id.as_deref() != Some(client.id.as_str())
            || !assertion_chosen(metadata, client.secret.is_some())
        {
            return Ok(false);
        }
        let audience = metadata
            .get("issuer")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                McpError::Transport(format!(
                    "authorization for {}: the authorization server metadata has no issuer to address the client assertion to",
                    self.origin
                ))
            })?;
        let audience = self.broken_assertion_audience(audience);
        let jti = super::oauth::random(16)?;
        let assertion = key.sign(&claims(&client.id, &audience, now(), &jti))?;
        let assertion = self.broken_assertion_reused(assertion);
        self.remember_text(&assertion);
        form.append_pair("client_assertion_type", JWT_BEARER);
        form.append_pair("client_assertion", &assertion);
        Ok(true)
    }

    /// The assertion's audience: the issuer (`AssertionAudienceResource`: the MCP server's
    /// URL).
    fn broken_assertion_audience(&self, issuer: &str) -> String {
        match self.broken(crate::Breakage::AssertionAudienceResource) {
            true => super::oauth::canonical_resource(&self.url),
            false => issuer.to_string(),
        }
    }

    /// The assertion to send: `fresh` (`AssertionReused`: the first one ever signed).
    fn broken_assertion_reused(&self, fresh: String) -> String {
        if !self.broken(crate::Breakage::AssertionReused) {
            return fresh;
        }
        let mut first = self
            .first_assertion
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(fresh).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh P-256 key as PEM, the way `openssl genpkey` writes it.
    fn pem_key() -> String {
        let der = EcdsaKeyPair::generate_pkcs8(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            &ring::rand::SystemRandom::new(),
        )
        .unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode(der.as_ref());
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            lines.join("\n")
        )
    }

    fn part(jws: &str, i: usize) -> Vec<u8> {
        let part = jws.split('.').nth(i).unwrap();
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part)
            .unwrap()
    }

    #[test]
    fn an_assertion_is_an_es256_jws_the_public_key_verifies() {
        let key = ClientKey::from_pem(&pem_key()).unwrap();
        let claims = claims("client-1", "http://127.0.0.1:9/", 1_000, "j1");
        let jws = key.sign(&claims).unwrap();
        assert_eq!(jws.split('.').count(), 3);
        let header: Value = serde_json::from_slice(&part(&jws, 0)).unwrap();
        assert_eq!(header, json!({"alg": "ES256", "typ": "JWT"}));
        let signed: Value = serde_json::from_slice(&part(&jws, 1)).unwrap();
        assert_eq!(signed, claims);
        let signature = part(&jws, 2);
        assert_eq!(signature.len(), 64, "raw r || s, not DER");
        let input = jws.rsplit_once('.').unwrap().0;
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_FIXED,
            key.public_key(),
        );
        public.verify(input.as_bytes(), &signature).unwrap();
        let other = ClientKey::from_pem(&pem_key()).unwrap();
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_FIXED,
            other.public_key(),
        );
        assert!(public.verify(input.as_bytes(), &signature).is_err());
    }

    #[test]
    fn the_claims_name_the_client_twice_the_issuer_and_a_short_life() {
        assert_eq!(ASSERTION_LIFETIME, Duration::from_secs(60));
        let c = claims("c", "https://as.example.com", 1_000, "j");
        assert_eq!(
            c,
            json!({"iss": "c", "sub": "c", "aud": "https://as.example.com", "iat": 1000, "exp": 1060, "jti": "j"})
        );
    }

    #[test]
    fn a_key_is_held_only_if_it_is_a_p256_pkcs8_pem_and_never_shown() {
        let pem = pem_key();
        let key = ClientKey::from_pem(&pem).unwrap();
        assert_eq!(format!("{key:?}"), "ClientKey([sensitive])");
        assert_eq!(key.public_key().len(), 65);
        assert_eq!(key.public_key()[0], 4);
        assert!(matches!(
            ClientKey::from_pem("not a key"),
            Err(KeyError::Pem)
        ));
        // An Ed25519 PKCS#8 key is PEM but no P-256 key; the error quotes nothing of it.
        let ed = ring::signature::Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new())
            .unwrap();
        let err = ClientKey::from_pkcs8(ed.as_ref()).unwrap_err();
        assert!(matches!(err, KeyError::NotP256 { .. }));
        assert!(err
            .to_string()
            .starts_with("the private key is not an EC P-256 PKCS#8 key with its public key ("));
    }

    #[test]
    fn the_key_is_used_where_listed_or_where_no_secret_is_held() {
        let listed = json!({"token_endpoint_auth_methods_supported": ["client_secret_basic", "private_key_jwt"]});
        let unlisted = json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"]});
        assert!(assertion_chosen(&listed, true));
        assert!(assertion_chosen(&listed, false));
        assert!(!assertion_chosen(&unlisted, true));
        assert!(assertion_chosen(&unlisted, false));
        assert!(!assertion_chosen(&json!({}), true));
        assert!(assertion_chosen(&json!({}), false));
    }

    /// An endpoint whose flow holds `key` for the pre-registered `client-1`.
    fn endpoint(key: &ClientKey) -> Endpoint {
        let authorizer = Arc::new(crate::oauth::FollowRedirects {
            redirect_uri: "http://127.0.0.1:9/cb".into(),
        });
        let mut oauth =
            crate::oauth::OAuthSettings::new("client-1", "http://127.0.0.1:9/cb", authorizer);
        oauth.private_key = Some(key.clone());
        let server = crate::HttpServer {
            url: "http://127.0.0.1:9/mcp".into(),
            oauth: Some(oauth),
            ..Default::default()
        };
        Endpoint::new(&server, &crate::ClientConfig::default()).unwrap()
    }

    fn form_of(
        endpoint: &Endpoint,
        client: &FlowClient,
        metadata: &Value,
    ) -> Option<Vec<(String, String)>> {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        if !endpoint
            .assertion_authenticated(client, metadata, &mut form)
            .unwrap()
        {
            return None;
        }
        let body = form.finish();
        Some(
            url::form_urlencoded::parse(body.as_bytes())
                .into_owned()
                .collect(),
        )
    }

    #[test]
    fn each_token_request_carries_a_new_assertion_remembered_as_a_secret() {
        let key = ClientKey::from_pem(&pem_key()).unwrap();
        let endpoint = endpoint(&key);
        let client = FlowClient {
            id: "client-1".into(),
            secret: None,
        };
        let metadata = json!({"issuer": "http://127.0.0.1:8", "token_endpoint_auth_methods_supported": ["private_key_jwt"]});
        let first = form_of(&endpoint, &client, &metadata).unwrap();
        let names: Vec<&str> = first.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["client_assertion_type", "client_assertion"]);
        assert_eq!(first[0].1, JWT_BEARER);
        let jws = &first[1].1;
        let claims: Value = serde_json::from_slice(&part(jws, 1)).unwrap();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "http://127.0.0.1:8");
        let iat = claims["iat"].as_u64().unwrap();
        assert!(iat.abs_diff(now()) < 5, "iat {iat} is now");
        assert_eq!(claims["exp"].as_u64(), Some(iat + 60));
        assert_eq!(jws.len(), jws.trim().len());
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::ECDSA_P256_SHA256_FIXED,
            key.public_key(),
        );
        let (input, _) = jws.rsplit_once('.').unwrap();
        public.verify(input.as_bytes(), &part(jws, 2)).unwrap();
        assert_eq!(
            endpoint.scrub(&format!("echoed {jws}"), None),
            "echoed [redacted]"
        );
        let second = form_of(&endpoint, &client, &metadata).unwrap();
        let again: Value = serde_json::from_slice(&part(&second[1].1, 1)).unwrap();
        assert_ne!(second[1].1, *jws);
        assert_ne!(again["jti"], claims["jti"]);
        assert!(claims["jti"].as_str().unwrap().len() >= 16);
    }

    #[test]
    fn the_settings_show_that_a_key_is_held_and_nothing_of_it() {
        let pem = pem_key();
        let key = ClientKey::from_pem(&pem).unwrap();
        let authorizer = Arc::new(crate::oauth::FollowRedirects {
            redirect_uri: "http://127.0.0.1:9/cb".into(),
        });
        let mut oauth =
            crate::oauth::OAuthSettings::new("client-1", "http://127.0.0.1:9/cb", authorizer);
        assert!(format!("{oauth:?}").contains("private_key: None"));
        oauth.private_key = Some(key);
        let shown = format!("{oauth:?}");
        assert!(
            shown.contains(r#"private_key: Some("[sensitive]")"#),
            "{shown}"
        );
        for line in pem.lines().filter(|l| !l.starts_with("-----")) {
            assert!(!shown.contains(line));
        }
    }

    #[test]
    fn the_key_is_for_the_pre_registered_client_and_its_chosen_method_only() {
        let key = ClientKey::from_pem(&pem_key()).unwrap();
        let endpoint = endpoint(&key);
        let metadata = json!({"issuer": "http://127.0.0.1:8"});
        let registered = FlowClient {
            id: "registered-elsewhere".into(),
            secret: None,
        };
        assert_eq!(form_of(&endpoint, &registered, &metadata), None);
        let with_secret = FlowClient {
            id: "client-1".into(),
            secret: Some("s".into()),
        };
        assert_eq!(form_of(&endpoint, &with_secret, &metadata), None);
        let public = FlowClient {
            id: "client-1".into(),
            secret: None,
        };
        assert!(form_of(&endpoint, &public, &metadata).is_some());
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        let err = endpoint
            .assertion_authenticated(&public, &json!({}), &mut form)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "authorization for http://127.0.0.1:9: the authorization server metadata has no issuer to address the client assertion to"
        );
        let keyless = Endpoint::new(
            &crate::HttpServer::new("http://127.0.0.1:9/mcp"),
            &crate::ClientConfig::default(),
        )
        .unwrap();
        assert_eq!(form_of(&keyless, &public, &metadata), None);
    }
}
