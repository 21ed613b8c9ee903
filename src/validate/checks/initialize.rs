//! `server.initialize.*`: the handshake's result and version negotiation.

use super::shared::{self, Served};
use super::Ctx;
use crate::validate::outcome::{Failure, Finding};
use crate::validate::schema::REVISIONS;
use crate::validate::stdio::Exchange;
use serde_json::Value;

/// answers `initialize` with protocolVersion, capabilities, serverInfo{name, version}.
pub const RESULT: &str = "server.initialize.result";
/// answers the requested revision when supported, otherwise another it supports.
pub const NEGOTIATES: &str = "server.initialize.negotiates";

/// A revision no server supports, offered to see the server fall back.
pub const UNKNOWN_REVISION: &str = "1999-01-01";

/// Judges an `initialize` exchange.
pub fn judge_result(exchange: &Exchange) -> Finding {
    let expected =
        "a result with protocolVersion (string), capabilities (object), serverInfo {name, version} (strings)";
    let fail = |actual: String| {
        Finding::Fail(
            Failure::new(expected, actual)
                .sent(&exchange.sent)
                .received(Some(exchange.received())),
        )
    };
    let Some(result) = exchange.result() else {
        return fail(match exchange.error_code() {
            Some(code) => format!("an error response ({code})"),
            None => "no result".to_string(),
        });
    };
    let mut missing = Vec::new();
    if !result.get("protocolVersion").is_some_and(Value::is_string) {
        missing.push("protocolVersion");
    }
    if !result.get("capabilities").is_some_and(Value::is_object) {
        missing.push("capabilities");
    }
    let info = result.get("serverInfo");
    if !info.is_some_and(Value::is_object) {
        missing.push("serverInfo");
    } else {
        if !info
            .and_then(|i| i.get("name"))
            .is_some_and(Value::is_string)
        {
            missing.push("serverInfo.name");
        }
        if !info
            .and_then(|i| i.get("version"))
            .is_some_and(Value::is_string)
        {
            missing.push("serverInfo.version");
        }
    }
    if missing.is_empty() {
        Finding::pass()
    } else {
        fail(format!("missing or mistyped: {}", missing.join(", ")))
    }
}

/// Offers each revision (and an unknown one) in a fresh session of its own, concurrently;
/// the probe's answer counts for the revision it offered. The sessions start at once, while
/// the probe's answer (`probe`, `None` if there is none) may still be on its way. Two of
/// them serve another check too (see [`super::shared`]): the early request's finding comes
/// beside; the exit offer's session is handed to its check once answered. Its own time
/// comes too: until the probe's answer and the slowest offer's, an offer's time without
/// what it did for the early request (the wait for a spare server included), which is that
/// check's time.
pub async fn negotiates(
    ctx: &std::sync::Arc<Ctx>,
    probe_revision: &str,
    probe: impl std::future::Future<Output = Option<Exchange>>,
) -> (Finding, Option<Served>, std::time::Duration) {
    let started = std::time::Instant::now();
    let wanted = offered();
    let mut tasks = tokio::task::JoinSet::new();
    for revision in wanted.iter().copied().filter(|r| *r != probe_revision) {
        let ctx = ctx.clone();
        let exit = ctx.shared.exit == Some(revision);
        tasks.spawn(async move {
            let started = std::time::Instant::now();
            let label = session_label(revision);
            let (mut served, mut opened, mut lent) = (None, None, std::time::Duration::ZERO);
            if ctx.shared.early == Some(revision) {
                let (session, found, early) = shared::open_early(&ctx, &label, revision).await;
                (served, opened, lent) = (Some(found), session, early);
            }
            let early = opened.is_some();
            let (mut session, exchange) = match opened {
                Some(opened) => opened,
                // Withholding the client capabilities, as the probe does.
                None if exit => ctx.open_handshaken(&label, revision).await?,
                // Declaring them: the session at the probe's revision may serve the
                // parse-error check and the declared side of server requests (requests.rs).
                None => ctx.open_declaring(&label, revision).await?,
            };
            let own = started.elapsed().saturating_sub(lent);
            if exit {
                ctx.give_exit(session).await;
            } else if early {
                // Not fresh: never handed to the parse-error check.
                session.kill().await;
            } else {
                ctx.done_with(session, &exchange).await;
            }
            Ok::<_, String>((revision.to_string(), exchange, served, own))
        });
    }
    let Some(probe) = probe.await else {
        return (
            Finding::skip("the probe session got no answer to `initialize`"),
            None,
            started.elapsed(),
        );
    };
    let mut own = started.elapsed();
    let mut answers = vec![(probe_revision.to_string(), probe)];
    let mut served = None;
    let mut fault = None;
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(Ok((revision, exchange, found, offer_own))) => {
                answers.push((revision, exchange));
                served = served.or(found);
                own = own.max(offer_own);
            }
            Ok(Err(why)) => fault = fault.or(Some(why)),
            Err(e) => fault = fault.or(Some(format!("a negotiation session failed: {e}"))),
        }
    }
    match fault {
        Some(reason) => (Finding::HarnessFault { reason }, served, started.elapsed()),
        None => (judge_negotiation(answers), served, own),
    }
}

/// The label of the session [`negotiates`] opens to offer `revision`.
pub fn session_label(revision: &str) -> String {
    format!("negotiates {revision}")
}

/// The revisions [`negotiates`] offers: each published one, then an unknown one.
pub fn offered() -> Vec<&'static str> {
    REVISIONS
        .iter()
        .copied()
        .chain([UNKNOWN_REVISION])
        .collect()
}

/// Judges the answers to `initialize` offering each revision of [`offered`]: each a published
/// revision, and consistent — a revision the server answered with anywhere (to an unknown
/// offer, say) is one it supports, so offered directly it must be answered as is.
pub fn judge_negotiation(mut answers: Vec<(String, Exchange)>) -> Finding {
    let wanted = offered();
    answers.sort_by_key(|(r, _)| wanted.iter().position(|w| w == r));
    let mut notes = Vec::new();
    for (offered, exchange) in &answers {
        let answered = exchange
            .result()
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str);
        let expected = if offered == UNKNOWN_REVISION {
            format!("offered {offered} (unknown): a revision the server supports, never an error")
        } else {
            format!("offered {offered}: {offered}, or another revision the server supports, never an error")
        };
        let failure = || {
            Failure::new(expected.clone(), String::new())
                .sent(&exchange.sent)
                .received(Some(exchange.received()))
        };
        match answered {
            None => {
                return Finding::Fail(Failure {
                    actual: "no protocolVersion in a result".into(),
                    ..failure()
                })
            }
            Some(version) if !REVISIONS.contains(&version) => {
                return Finding::Fail(Failure {
                    actual: format!("answered `{version}`, not a published revision"),
                    ..failure()
                })
            }
            Some(version) => notes.push(format!("{offered}→{version}")),
        }
    }
    let answered = |exchange: &Exchange| {
        exchange
            .result()
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    for (offered, exchange) in &answers {
        let Some(version) = answered(exchange).filter(|v| v != offered) else {
            continue;
        };
        let shown_elsewhere: Vec<&str> = answers
            .iter()
            .filter(|(other, x)| {
                other != offered && answered(x).as_deref() == Some(offered.as_str())
            })
            .map(|(other, _)| other.as_str())
            .collect();
        if !shown_elsewhere.is_empty() {
            let expected = format!(
                "offered {offered}: {offered}, a revision the server supports (it answered {offered} when offered {})",
                shown_elsewhere.join(", ")
            );
            return Finding::Fail(
                Failure::new(expected, format!("answered `{version}`: inconsistent"))
                    .sent(&exchange.sent)
                    .received(Some(exchange.received())),
            );
        }
    }
    Finding::pass_with(notes.join(", "))
}
