//! Negotiation sessions that serve other checks too, so fewer servers start: on two cores a
//! Node server's start-up (about a third of a second of CPU) is what a stdio run's wall time
//! is made of. The negotiation check offers each revision in a server of its own; of those
//! offers, neither the probe's nor the unknown one (whose session usually ends up at the
//! probe's revision, and serves the parse-error check):
//! - one first sends a request before `initialize` (`server.lifecycle.before-initialize`,
//!   which otherwise starts a server of its own), and
//! - one is closed for `server.stdio.exits-on-close` once every offer has answered (the early
//!   one when there is one), so that the probe can serve the feature checks (a tool call
//!   still running would keep it from exiting on close) instead of a server of their own,
//!   and no exit is ever timed beside start-ups: the launches left after the probe's answer
//!   then start at once ([`Ctx`]'s start-up slots).
//!
//! Neither changes what the negotiation check judges: an offer whose handshake fails after
//! the early request is made again in a fresh server.

use super::features;
use super::settings::Plan;
use crate::checks::initialize::{self, judge_negotiation, offered, session_label};
use crate::checks::session::ctx::{Ctx, Shared};
use crate::checks::{lifecycle, stdio};
use crate::outcome::Finding;
use crate::stdio::{Exchange, Session};
use crate::timeline;
use std::time::{Duration, Instant};

/// The sharing of `plan`, whose first revision (the probe's) is `first`.
pub fn sharing(plan: &Plan, first: &str) -> Shared {
    if !plan.wants(initialize::NEGOTIATES) {
        return Shared::default();
    }
    let mut free = initialize::offered()
        .into_iter()
        .filter(|r| *r != first && *r != initialize::UNKNOWN_REVISION);
    let early = if plan.wants(lifecycle::BEFORE_INITIALIZE) {
        free.next()
    } else {
        None
    };
    // The early offer's handshake is the first after the probe's (its server started
    // beside the probe, or is the spare): by the end of the negotiation it is long done,
    // and a server with a timer armed at `notifications/initialized` (server-everything:
    // 350 ms) exits at once instead of keeping the run's end waiting.
    let exit = if plan.wants(stdio::EXITS_ON_CLOSE) {
        early.or_else(|| free.next())
    } else {
        None
    };
    let features = !features::selected(plan).is_empty();
    Shared {
        early,
        exit,
        features_on_probe: features && (exit.is_some() || !plan.wants(stdio::EXITS_ON_CLOSE)),
    }
}

/// What a negotiation session found for another check: its id, finding and wall time.
pub type Served = (&'static str, Finding, u128);

/// The early offer's session: a server (the spare, if `label` takes it over) sent
/// `tools/list` before `initialize` offering `revision`; the session and its handshake when
/// that succeeded (else it is killed), the before-initialize finding, and how long the
/// early request took (from the call: the wait for a spare server included).
pub async fn open_early(
    ctx: &Ctx,
    label: &str,
    revision: &str,
) -> (Option<(Session, Exchange)>, Served, Duration) {
    let called = Instant::now();
    let launched = match ctx.take_spare(label, label).await {
        Some(spare) => Ok(spare),
        None => {
            // The start-up slot is held for the launch only: a server that never answers
            // the early request must not keep the others from starting.
            let slot = ctx.start_slot().await;
            let launched = ctx.open(label);
            drop(slot);
            launched
        }
    };
    let mut session = match launched {
        Ok(session) => session,
        Err(why) => {
            return (
                None,
                (
                    lifecycle::BEFORE_INITIALIZE,
                    Finding::HarnessFault { reason: why },
                    0,
                ),
                called.elapsed(),
            )
        }
    };
    let started = Instant::now();
    timeline::event("check", lifecycle::BEFORE_INITIALIZE);
    let early = session.request("tools/list", None).await;
    let lent = called.elapsed();
    let init = session.handshake(revision).await;
    let finding = lifecycle::judge_early(&early, &init);
    timeline::event("done", lifecycle::BEFORE_INITIALIZE);
    let served = (
        lifecycle::BEFORE_INITIALIZE,
        finding,
        started.elapsed().as_millis(),
    );
    if init
        .result()
        .and_then(|r| r.get("protocolVersion"))
        .is_some()
    {
        (Some((session, init)), served, lent)
    } else {
        session.kill().await;
        (None, served, lent)
    }
}

/// Closes `session` once `others` is done (for the exit offer's session: every server of the
/// negotiation has answered, so its exit is not timed beside start-ups; bounded by `timeout`)
/// and judges how it ends; the probe's close is judged here too, with nothing to wait for.
pub async fn close_for_exit(
    session: Session,
    others: impl std::future::Future<Output = ()>,
    timeout: Duration,
) -> Served {
    let _ = tokio::time::timeout(timeout, others).await;
    let started = Instant::now();
    timeline::event("check", stdio::EXITS_ON_CLOSE);
    let closed = session.close(stdio::EXIT_BOUND.min(timeout)).await;
    let finding = stdio::judge_exit(&closed);
    timeline::event("done", stdio::EXITS_ON_CLOSE);
    (
        stdio::EXITS_ON_CLOSE,
        finding,
        started.elapsed().as_millis(),
    )
}

/// Offers each revision (and an unknown one) in a fresh session of its own, concurrently;
/// the probe's answer counts for the revision it offered. The sessions start at once, while
/// the probe's answer (`probe`, `None` if there is none) may still be on its way. Two of
/// them serve another check too (see this module's documentation): the early request's finding comes
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
                let (session, found, early) = open_early(&ctx, &label, revision).await;
                (served, opened, lent) = (Some(found), session, early);
            }
            let early = opened.is_some();
            let (mut session, exchange) = match opened {
                Some(opened) => opened,
                // Withholding the client capabilities, as the probe does.
                None if exit => ctx.open_handshaken(&label, revision).await?,
                // Declaring them: the session at the probe's revision may serve the
                // parse-error check and the declared side of server requests ([`super::declaring`]).
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
