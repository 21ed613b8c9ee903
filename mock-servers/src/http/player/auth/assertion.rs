//! The token endpoint's `private_key_jwt` check (RFC 7523 sections 2.2 and 3): the
//! pre-registered client's ES256 assertion verified with its registered public key
//! (`client_jwk`), every refusal naming its cause in the answer, so in the wire log.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use ring::signature::{UnparsedPublicKey, ECDSA_P256_SHA256_FIXED};
use serde_json::Value;

use crate::script::{AuthSettings, Jwk};

use super::{Answer, Form, Player};

/// The `client_assertion_type` of a JWT assertion (RFC 7523 section 2.2).
pub(super) const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The token endpoint authentication method of a JWT signed with the client's private key.
pub(super) const PRIVATE_KEY_JWT: &str = "private_key_jwt";

/// How many `jti` values are remembered at most; past it, the oldest is forgotten (a
/// scenario sends a handful).
const MAX_JTIS: usize = 64;

/// Whether the token request authenticates with an assertion (either of its parameters).
pub(super) fn carries_assertion(form: &Form) -> bool {
    form.get("client_assertion").is_some() || form.get("client_assertion_type").is_some()
}

impl Player {
    /// The client id the token request's assertion authenticates, or the
    /// `401 invalid_client` naming why it is refused. An accepted assertion's `jti` is
    /// remembered, so the same assertion is refused the next time.
    pub(super) fn assertion_client(
        &mut self,
        auth: &AuthSettings,
        form: &Form,
    ) -> Result<String, Answer> {
        let refuse = |cause: &str| {
            Answer::error(
                401,
                "invalid_client",
                &format!("client assertion refused: {cause}"),
            )
        };
        if !auth.token_auth_methods.iter().any(|m| m == PRIVATE_KEY_JWT) {
            return Err(refuse(
                "private_key_jwt is not a client authentication method of this server",
            ));
        }
        if form.get("client_assertion_type").as_deref() != Some(JWT_BEARER) {
            return Err(refuse(&format!(
                "client_assertion_type is not {JWT_BEARER}"
            )));
        }
        let assertion = form
            .get("client_assertion")
            .ok_or_else(|| refuse("client_assertion is missing"))?;
        let claims = verified_claims(auth, &assertion).map_err(&refuse)?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let expected = Expected {
            client_id: &auth.client_id,
            form_client_id: form.get("client_id"),
            issuer: self.issuer(auth),
            now,
        };
        let jti = checked_jti(&claims, &expected).map_err(&refuse)?;
        if self.jtis.contains(&jti) {
            return Err(refuse("jti was seen before: a replayed assertion"));
        }
        if self.jtis.len() >= MAX_JTIS {
            self.jtis.remove(0);
        }
        self.jtis.push(jti);
        Ok(auth.client_id.clone())
    }
}

/// What an assertion's claims must say.
struct Expected<'a> {
    /// The pre-registered client's id: `iss` and `sub`.
    client_id: &'a str,
    /// The token request's `client_id`, when it carries one: the same.
    form_client_id: Option<String>,
    /// The authorization server's issuer: `aud` (or one of `aud`), a trailing `/` aside.
    issuer: String,
    /// Seconds since the epoch: `exp` must be later.
    now: u64,
}

/// The `jti` of `claims` when they say what `expected` asks; else the cause.
fn checked_jti(claims: &Value, expected: &Expected) -> Result<String, &'static str> {
    let text = |name: &str| claims.get(name).and_then(Value::as_str);
    let client_id = Some(expected.client_id);
    if text("iss") != client_id || text("sub") != client_id {
        return Err("iss and sub must both be the client id");
    }
    if expected
        .form_client_id
        .as_deref()
        .is_some_and(|id| Some(id) != client_id)
    {
        return Err("client_id is not the assertion's sub");
    }
    let issuer = expected.issuer.trim_end_matches('/');
    let audience_ok = |aud: &Value| {
        aud.as_str()
            .is_some_and(|a| a.trim_end_matches('/') == issuer)
    };
    let named = match claims.get("aud") {
        Some(Value::Array(all)) => all.iter().any(audience_ok),
        Some(one) => audience_ok(one),
        None => false,
    };
    if !named {
        return Err("aud is not this authorization server's issuer");
    }
    if claims
        .get("exp")
        .and_then(Value::as_u64)
        .is_none_or(|exp| exp <= expected.now)
    {
        return Err("exp is missing or past");
    }
    text("jti").map(str::to_string).ok_or("jti is missing")
}

/// The claims of `assertion`, an ES256 compact JWS whose signature `auth.client_jwk`
/// verifies; else the cause.
fn verified_claims(auth: &AuthSettings, assertion: &str) -> Result<Value, &'static str> {
    let jwk = auth
        .client_jwk
        .as_ref()
        .ok_or("no public key is registered for the client")?;
    let parts: Vec<&str> = assertion.split('.').collect();
    let [header, claims, signature] = parts[..] else {
        return Err("not a compact JWS of three parts");
    };
    let b64 = |part: &str| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(part)
            .map_err(|_| "a part is not base64url")
    };
    let header: Value =
        serde_json::from_slice(&b64(header)?).map_err(|_| "the header is not JSON")?;
    if header.get("alg").and_then(Value::as_str) != Some("ES256") {
        return Err("alg is not ES256");
    }
    let key = public_key(jwk).ok_or("the registered key is not an EC P-256 JWK")?;
    let signed = &assertion[..assertion.len() - signature.len() - 1];
    UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key)
        .verify(signed.as_bytes(), &b64(signature)?)
        .map_err(|_| "the signature does not verify with the registered key")?;
    let claims: Value =
        serde_json::from_slice(&b64(claims)?).map_err(|_| "the claims are not JSON")?;
    claims
        .is_object()
        .then_some(claims)
        .ok_or("the claims are not a JSON object")
}

/// The uncompressed SEC1 point (`04 || x || y`) of an EC P-256 JWK.
fn public_key(jwk: &Jwk) -> Option<Vec<u8>> {
    if jwk.kty != "EC" || jwk.crv != "P-256" {
        return None;
    }
    let b64 = |c: &str| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(c)
            .ok()
            .filter(|c| c.len() == 32)
    };
    let mut point = vec![4u8];
    point.extend(b64(&jwk.x)?);
    point.extend(b64(&jwk.y)?);
    Some(point)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jwk_is_an_uncompressed_p256_point() {
        let coordinate = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode([7u8; 32]);
        let jwk = Jwk {
            kty: "EC".into(),
            crv: "P-256".into(),
            x: coordinate.clone(),
            y: coordinate.clone(),
        };
        let point = public_key(&jwk).unwrap();
        assert_eq!(point.len(), 65);
        assert_eq!(point[0], 4);
        assert_eq!(&point[1..33], &[7u8; 32]);
        let short = Jwk {
            x: "AAAA".into(),
            ..jwk.clone()
        };
        assert_eq!(public_key(&short), None);
        let rsa = Jwk {
            kty: "RSA".into(),
            ..jwk.clone()
        };
        assert_eq!(public_key(&rsa), None);
        let p384 = Jwk {
            crv: "P-384".into(),
            ..jwk
        };
        assert_eq!(public_key(&p384), None);
    }

    /// A fresh key pair: settings registering its public key, and an ES256 signer.
    fn keyed() -> (AuthSettings, impl Fn(&str) -> String) {
        use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
        let rng = ring::rand::SystemRandom::new();
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der.as_ref(), &rng).unwrap();
        let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        let point = pair.public_key().as_ref().to_vec();
        let mut auth: AuthSettings = serde_json::from_str("{}").unwrap();
        auth.client_jwk = Some(Jwk {
            kty: "EC".into(),
            crv: "P-256".into(),
            x: b64(&point[1..33]),
            y: b64(&point[33..]),
        });
        let sign = move |input: &str| {
            let signature = pair.sign(&ring::rand::SystemRandom::new(), input.as_bytes());
            format!("{input}.{}", b64(signature.unwrap().as_ref()))
        };
        (auth, sign)
    }

    #[test]
    fn only_an_es256_jws_signed_with_the_registered_key_is_verified() {
        let (auth, sign) = keyed();
        let b64 = |b: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        let header = b64(r#"{"alg":"ES256","typ":"JWT"}"#);
        let claims = b64(r#"{"iss":"c","sub":"c"}"#);
        let good = sign(&format!("{header}.{claims}"));
        assert_eq!(verified_claims(&auth, &good).unwrap()["sub"], "c");
        let forged_claims = b64(r#"{"iss":"d","sub":"d"}"#);
        let signature = good.rsplit('.').next().unwrap();
        let forged = format!("{header}.{forged_claims}.{signature}");
        assert_eq!(
            verified_claims(&auth, &forged),
            Err("the signature does not verify with the registered key")
        );
        let (other, _) = keyed();
        assert_eq!(
            verified_claims(&other, &good),
            Err("the signature does not verify with the registered key")
        );
        let none = sign(&format!("{}.{claims}", b64(r#"{"alg":"none"}"#)));
        assert_eq!(verified_claims(&auth, &none), Err("alg is not ES256"));
        assert_eq!(
            verified_claims(&auth, "a.b"),
            Err("not a compact JWS of three parts")
        );
        assert_eq!(
            verified_claims(&auth, &format!("{header}.{claims}.!!")),
            Err("a part is not base64url")
        );
        let plain = sign(&format!("{}.{claims}", b64("ES256")));
        assert_eq!(
            verified_claims(&auth, &plain),
            Err("the header is not JSON")
        );
        let list = sign(&format!("{header}.{}", b64("[1]")));
        assert_eq!(
            verified_claims(&auth, &list),
            Err("the claims are not a JSON object")
        );
        let unkeyed: AuthSettings = serde_json::from_str("{}").unwrap();
        assert_eq!(
            verified_claims(&unkeyed, &good),
            Err("no public key is registered for the client")
        );
    }

    #[test]
    fn the_claims_must_name_the_client_the_issuer_a_later_exp_and_a_jti() {
        let expected = Expected {
            client_id: "c",
            form_client_id: None,
            issuer: "http://as".into(),
            now: 1000,
        };
        let good = serde_json::json!({"iss": "c", "sub": "c", "aud": "http://as", "exp": 1001, "jti": "j"});
        assert_eq!(checked_jti(&good, &expected), Ok("j".into()));
        let with = |key: &str, value: Value| {
            let mut claims = good.clone();
            claims[key] = value;
            checked_jti(&claims, &expected)
        };
        let without = |key: &str| {
            let mut claims = good.clone();
            claims.as_object_mut().unwrap().remove(key);
            checked_jti(&claims, &expected)
        };
        let client = Err("iss and sub must both be the client id");
        assert_eq!(with("iss", "d".into()), client);
        assert_eq!(with("sub", "d".into()), client);
        assert_eq!(without("sub"), client);
        let aud = Err("aud is not this authorization server's issuer");
        assert_eq!(with("aud", "http://as/".into()), Ok("j".into()));
        assert_eq!(
            with("aud", serde_json::json!(["x", "http://as"])),
            Ok("j".into())
        );
        assert_eq!(with("aud", serde_json::json!(["x"])), aud);
        assert_eq!(with("aud", "http://as/token".into()), aud);
        assert_eq!(with("aud", "http://127.0.0.1:1/mcp".into()), aud);
        assert_eq!(without("aud"), aud);
        let exp = Err("exp is missing or past");
        assert_eq!(with("exp", 1000.into()), exp);
        assert_eq!(with("exp", 999.into()), exp);
        assert_eq!(without("exp"), exp);
        assert_eq!(without("jti"), Err("jti is missing"));
        let named = |id: &str| {
            let expected = Expected {
                form_client_id: Some(id.into()),
                issuer: "http://as/".into(),
                ..expected
            };
            checked_jti(&good, &expected)
        };
        assert_eq!(named("c"), Ok("j".into()));
        assert_eq!(named("d"), Err("client_id is not the assertion's sub"));
    }
}
