//! The authorization flow's credentials in a run: the ones the scenario gave (the mock's
//! code and tokens, the client's secret) and the ones the client made up (its
//! `code_verifier`, PKCE challenge and `state`, read off the wire). All are secrets the
//! client must never quote; the random ones are redacted by name in transcripts.

use mcp_mock_servers::script::AuthSettings;
use mcp_mock_servers::wire_log::Record;

use super::outcome::GivenSecret;
use crate::scenario::HttpClientPart;

/// Values shorter than this are not taken for secrets.
const MIN_CHARS: usize = 4;

/// How every credential of the flow is named in a failure (`no trace of the authorization
/// flow's access token`): a leak of one is the business of the flow's redaction rule, not of
/// the rule the scenario is about.
pub const FLOW_CREDENTIAL: &str = "the authorization flow's";

/// The flow's secrets, and the redactions of the values that differ run to run.
pub(super) fn credentials(
    wire: &[Record],
    auth: Option<&AuthSettings>,
    part: &HttpClientPart,
) -> (Vec<GivenSecret>, Vec<(String, String)>) {
    let mut secrets = Vec::new();
    let mut add = |what: &str, value: &str| {
        if value.len() >= MIN_CHARS && !secrets.iter().any(|s: &GivenSecret| s.value == value) {
            secrets.push(GivenSecret {
                source: format!("{FLOW_CREDENTIAL} {what}"),
                value: value.into(),
            });
        }
    };
    if let Some(auth) = auth {
        add("authorization code", &auth.code);
        add("access token", &auth.access_token);
        if let Some(refresh) = &auth.refresh_token {
            add("refresh token", refresh);
        }
        if let Some(secret) = &auth.client_secret {
            add("client secret", secret);
        }
        if let Some(secret) = auth
            .registration
            .as_ref()
            .and_then(|r| r.client_secret.as_ref())
        {
            add("registered client secret", secret);
        }
        if let Some(migration) = &auth.migration {
            add(
                "access token from the new authorization server",
                &migration.access_token,
            );
        }
        for refresh in &auth.refreshes {
            add("refreshed access token", &refresh.access_token);
            if let Some(rotated) = &refresh.refresh_token {
                add("rotated refresh token", rotated);
            }
        }
    }
    if let Some(secret) = part.oauth.as_ref().and_then(|o| o.client_secret.as_ref()) {
        add("client secret", secret);
    }
    if let Some(pem) = part.oauth.as_ref().and_then(|o| o.private_key_pem.as_ref()) {
        add("client private key", pem.trim());
        // Its base64 body as one line, as a client logging the key's bytes would show it,
        // and each of its lines, however the text around them is escaped.
        let lines: Vec<&str> = pem
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("-----"))
            .collect();
        add("client private key", &lines.concat());
        for line in lines {
            add("client private key", line);
        }
    }
    let mut redactions = Vec::new();
    for record in wire {
        let Record::HttpRequest { path, body, .. } = record else {
            continue;
        };
        let query = path.split_once('?').map(|(_, q)| q).unwrap_or_default();
        let form = body.as_str().unwrap_or_default();
        for pairs in [query, form] {
            for (name, value) in url::form_urlencoded::parse(pairs.as_bytes()) {
                let label = match name.as_ref() {
                    "code_verifier" => "[CODE_VERIFIER]",
                    "code_challenge" => "[CODE_CHALLENGE]",
                    "state" => "[STATE]",
                    "client_assertion" => "[CLIENT_ASSERTION]",
                    _ => continue,
                };
                if name == "code_verifier" {
                    add("code_verifier", &value);
                }
                if name == "client_assertion" {
                    add("client assertion", &value);
                }
                if value.len() >= MIN_CHARS
                    && !redactions
                        .iter()
                        .any(|(v, _): &(String, String)| *v == value)
                {
                    redactions.push((value.into_owned(), label.to_string()));
                }
            }
        }
    }
    (secrets, redactions)
}
