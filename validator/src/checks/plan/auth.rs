//! The plan of the authorization checks ([`crate::checks::auth`]): run once per target, after
//! the other checks, on requests of their own. A server that answered the probe's
//! `initialize` without a token (no `--header` token given) needs no authorization: the
//! checks are skipped with that reason and nothing more is sent.

use super::settings::{Found, Plan, Unreachable};
use crate::checks::auth::{
    self, judge_server_metadata, server_metadata_urls, Gate, Prober, CHECKS, GRANT, PKCE_S256,
    SERVER_CHECKS, SERVER_METADATA,
};
use crate::outcome::Failure;
use crate::outcome::{excerpt, Finding};
use crate::rules;
use crate::schema::LATEST;
use crate::target::Target;
use serde_json::Value;
use std::time::Instant;
use url::Url;

/// The revision the authorization findings are reported at: they judge the target, not one
/// revision's session.
const ALL_REVISIONS: &str = "all";

/// Whether `id` is an authorization check.
pub fn is_auth(id: &str) -> bool {
    CHECKS.contains(&id)
}

/// How the authorization checks (and `--oauth`) reach the MCP endpoint `url` given with
/// `headers`.
pub fn prober(url: &str, headers: &[(String, String)], plan: &Plan) -> Prober {
    let token = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .and_then(|(_, value)| auth::bearer_token(value));
    Prober {
        url: url.to_string(),
        headers: crate::http::without(headers.to_vec(), "authorization"),
        token,
        other_resource: plan.tokens.other_resource.clone(),
        without_scope: plan.tokens.without_scope.clone(),
        ca_cert: plan.ca_cert.clone(),
        timeout: plan.timeout,
        revision: plan
            .revisions
            .iter()
            .find(|r| r.as_str() <= LATEST)
            .cloned()
            .unwrap_or_else(|| LATEST.to_string()),
        stalled: Default::default(),
        well_known_allowed: plan.revisions.iter().any(|r| r.as_str() >= "2025-11-25"),
    }
}

/// Why the checks are skipped when `initialize` without a token got `status`, not 401.
fn not_asked(status: u16) -> String {
    if (200..300).contains(&status) {
        format!("the server needs no authorization: it answered `initialize` without a token (HTTP {status})")
    } else {
        format!("the server did not ask for authorization: it answered `initialize` without a token with HTTP {status}, not 401")
    }
}

/// Runs the selected authorization checks against `target`; `probe_status` is the status the
/// `initialize` plan's probe was answered with, when that plan ran. Alone (`alone`: no other
/// check ran), a server that cannot be reached is unreachable; after the others, whose
/// probe reached it, each check is skipped with the reason.
pub async fn run(
    target: &Target,
    plan: &Plan,
    probe_status: Option<u16>,
    alone: bool,
) -> Result<Vec<Found>, Unreachable> {
    let selected: Vec<&'static str> = CHECKS.iter().copied().filter(|id| plan.wants(id)).collect();
    if selected.is_empty() {
        return Ok(Vec::new());
    }
    let started = Instant::now();
    let skip_all = |reason: String| -> Vec<Found> {
        selected
            .iter()
            .map(|id| Found::new(id, ALL_REVISIONS, Finding::skip(reason.clone()), 0))
            .collect()
    };
    let Target::Http { url, headers } = target else {
        return Ok(skip_all(
            "an HTTP check; the target is a stdio command".into(),
        ));
    };
    let applies = |id: &str| {
        rules::find(id).is_some_and(|rule| plan.revisions.iter().any(|r| rule.applies_at(r)))
    };
    if !selected.iter().any(|id| applies(id)) {
        return Ok(skip_all("not applicable at the revisions asked".into()));
    }
    let given = headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
    match probe_status {
        // The probe's answer says it all: nothing more is sent.
        Some(status) if !given && status != 401 && status != 0 => {
            return Ok(skip_all(not_asked(status)))
        }
        // No status could be read from the probe's answer: asking again would wait as long.
        Some(0) if !given => {
            return Ok(skip_all(
                "no status could be read from the answer to `initialize` without a token".into(),
            ))
        }
        _ => {}
    }
    let prober = prober(url, headers, plan);
    let found = match prober.gate().await {
        Gate::Answered(status) => return Ok(skip_all(not_asked(status))),
        Gate::Unanswered(why) if alone => {
            return Err(Unreachable(format!(
                "no answer to `initialize` without a token: {why}"
            )))
        }
        Gate::Unanswered(why) => {
            return Ok(skip_all(format!(
                "no answer to `initialize` without a token: {}",
                excerpt(&why)
            )))
        }
        Gate::Closed(reply) => auth::judge(&prober, &reply, |id| selected.contains(&id)).await,
    };
    Ok(at_revisions(found, applies, started.elapsed().as_millis()))
}

/// Runs the selected checks of an authorization server judged on its own
/// (`--authorization-server`): `issuer` is its issuer identifier, `client_id` the client of
/// `--oauth`. A server none of whose metadata URLs answers is unreachable.
pub async fn run_authorization_server(
    issuer: &str,
    plan: &Plan,
    client_id: Option<&str>,
) -> Result<Vec<Found>, Unreachable> {
    let selected: Vec<&'static str> = SERVER_CHECKS
        .iter()
        .copied()
        .filter(|id| plan.wants(id))
        .collect();
    let started = Instant::now();
    let applies = |id: &str| {
        rules::find(id).is_some_and(|rule| plan.revisions.iter().any(|r| rule.applies_at(r)))
    };
    let prober = prober(issuer, &[], plan);
    let found = judge_authorization_server(&prober, client_id, |id| selected.contains(&id))
        .await
        .map_err(Unreachable)?;
    Ok(at_revisions(found, applies, started.elapsed().as_millis()))
}

/// The findings of the selected checks (`wants`, among [`SERVER_CHECKS`]) of the
/// authorization server whose issuer is `prober.url`, judged on its own: its metadata
/// (found in the specification's order, well-formed, with `S256`) and, with `client_id`
/// (`--oauth`), the authorization-code grant with PKCE. An error when none of the metadata
/// URLs answered at all (the server is unreachable).
async fn judge_authorization_server(
    prober: &Prober,
    client_id: Option<&str>,
    wants: impl Fn(&str) -> bool,
) -> Result<Vec<(&'static str, Finding)>, String> {
    let issuer = prober.url.as_str();
    let parsed = Url::parse(issuer).map_err(|e| format!("not a URL: {e}"))?;
    let (found, tried) = prober.first_found(&server_metadata_urls(&parsed)).await;
    if found.is_none() && !tried.iter().any(|f| f.answered) {
        return Err(format!(
            "no answer at any of its metadata URLs: {}",
            tried
                .iter()
                .map(|f| format!("{} ({})", f.url, f.seen))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let (server, pkce) = judge_server_metadata(issuer, found.as_ref(), &tried);
    let usable = !matches!(server, Finding::Fail(_)) && !matches!(pkce, Finding::Fail(_));
    let mut findings = Vec::new();
    if wants(SERVER_METADATA) {
        findings.push((SERVER_METADATA, server));
    }
    if wants(PKCE_S256) {
        findings.push((PKCE_S256, pkce));
    }
    if wants(GRANT) {
        let metadata = found.and_then(|f| f.document).filter(|_| usable);
        let finding = match (client_id, metadata) {
            (None, _) => Finding::skip(
                "needs a client the authorization server knows and approves at once: give its id with --oauth",
            ),
            (Some(_), None) => Finding::skip(
                "needs usable metadata that lists `S256` (see server.auth.server-metadata and server.auth.pkce-s256)",
            ),
            (Some(client_id), Some(metadata)) => {
                grant(prober, client_id, issuer, &metadata).await
            }
        };
        findings.push((GRANT, finding));
    }
    Ok(findings)
}

/// The authorization-code grant with PKCE as `client_id`, headless, and its token response.
async fn grant(prober: &Prober, client_id: &str, issuer: &str, metadata: &Value) -> Finding {
    let expected = format!(
        "an access token (`token_type` `Bearer`) for the client `{}` through the authorization-code grant with PKCE (S256)",
        excerpt(client_id)
    );
    match crate::oauth::authorization_code_grant(
        prober,
        client_id,
        issuer,
        metadata,
        None,
        None,
        &crate::oauth::UserAgent::Headless,
    )
    .await
    {
        Err(e) => Finding::Fail(Failure::new(expected, e.to_string())),
        Ok(answer) => {
            let wrong = crate::oauth::token_response_problems(&answer);
            if wrong.is_empty() {
                Finding::pass()
            } else {
                Finding::Fail(Failure::new(
                    expected,
                    format!("the token response: {}", wrong.join("; ")),
                ))
            }
        }
    }
}

/// The findings as results, each skipped where its check does not apply at the revisions
/// asked.
fn at_revisions(
    found: Vec<(&'static str, Finding)>,
    applies: impl Fn(&str) -> bool,
    millis: u128,
) -> Vec<Found> {
    found
        .into_iter()
        .map(|(id, finding)| {
            let finding = if applies(id) {
                finding
            } else {
                Finding::skip("not applicable at the revisions asked")
            };
            Found::new(id, ALL_REVISIONS, finding, millis)
        })
        .collect()
}
