//! The declared side of server requests over stdio, with the first revision's parse-error
//! check on the same server: a session whose handshake declares the client capabilities.

use crate::checks::session::ctx::Ctx;
use crate::checks::session::not_asked;
use crate::checks::session::peer::since;
use crate::checks::{jsonrpc, requests};
use crate::declared::answer;
use crate::outcome::{excerpt, Finding};
use crate::stdio::Session;
use std::time::{Duration, Instant};

/// Over stdio, the first revision's parse-error check and the declared side together: on
/// `reused` (a negotiation session at the probe's revision, which declared
/// [`declared_at`](crate::declared::declared_at) what it offered) or else a server of its own
/// declaring [`declared_at`](crate::declared::declared_at) `revision` — a server the run
/// kills afterwards, so a request left pending cannot keep it from exiting where the exit is
/// judged. The parse-error check (when `parse_error`) runs first (a capability declared
/// changes nothing it judges); then the first request for a client capability is waited for
/// up to `patience` unless one came already (a server may ask a while after `initialized`:
/// server-everything asks for roots 350 ms after it) and answered, then [`requests::run`].
pub async fn run_stdio(
    ctx: &Ctx,
    reused: Option<Session>,
    revision: &str,
    wanted: &[&'static str],
    patience: Duration,
    parse_error: bool,
) -> Vec<(&'static str, String, Finding, u128)> {
    let started = Instant::now();
    let all: Vec<&'static str> = parse_error
        .then_some(jsonrpc::PARSE_ERROR)
        .into_iter()
        .chain(wanted.iter().copied())
        .collect();
    let opened = match reused {
        Some(session) => Ok(session),
        None => open_declaring(ctx, revision, parse_error).await,
    };
    let mut session = match opened {
        Ok(session) => session,
        Err(why) => {
            let millis = started.elapsed().as_millis();
            return all
                .iter()
                .map(|id| {
                    (
                        *id,
                        revision.to_string(),
                        Finding::skip(why.clone()),
                        millis,
                    )
                })
                .collect();
        }
    };
    let declared = session.declared.clone();
    let mut out = Vec::new();
    if parse_error {
        let started = Instant::now();
        let finding = jsonrpc::judge_parse_error(&mut session).await;
        out.push((
            jsonrpc::PARSE_ERROR,
            revision.to_string(),
            finding,
            started.elapsed().as_millis(),
        ));
    }
    match session.stalled.clone() {
        // The line that is not JSON stopped it: what it asked is not judged.
        Some(why) => {
            out.extend(
                wanted
                    .iter()
                    .map(|id| (*id, revision.to_string(), not_asked(&why.why), 0)),
            );
        }
        None => {
            // Unless one came (and was answered) already, the first request is waited for.
            if requests::client_requests(&since(&session, 0)).is_empty() {
                if let Ok(request) = session
                    .wait_within(patience, requests::is_client_request)
                    .await
                {
                    let _ = session
                        .send_line(&answer(&request, &declared).to_string())
                        .await;
                }
            }
            out.extend(requests::run(&mut session, revision, &declared, wanted).await);
        }
    }
    session.kill().await;
    out
}

/// A fresh server whose handshake declares [`declared_at`](crate::declared::declared_at) `revision`.
async fn open_declaring(ctx: &Ctx, revision: &str, parse_error: bool) -> Result<Session, String> {
    let label = if parse_error {
        "parse-error"
    } else {
        "server.requests (declaring)"
    };
    let (mut session, init) = ctx.open_declaring(label, revision).await?;
    if init
        .result()
        .and_then(|r| r.get("protocolVersion"))
        .is_none()
    {
        session.kill().await;
        return Err(format!(
            "the handshake failed (see server.initialize.result): {}",
            excerpt(&init.received())
        ));
    }
    Ok(session)
}
