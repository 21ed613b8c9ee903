//! The plan at 2026-07-28: one session asks everything in turn (over stdio one server
//! process, over HTTP one POST a request): `server/discover` first — a server that does not
//! answer it as a 2026-07-28 server [does not speak the revision](Spoken::No), and is
//! reported so once, not failed check by check — then the query checks the older revisions
//! have too (over [`Modern`], which adds the `_meta` to each request), then this revision's
//! own, and last a `subscriptions/listen` stream. The checks over every message (schema,
//! `resultType`, cache hints, log notifications, `serverInfo`) read the session's log
//! afterwards.

use super::features_2026;
use super::queries::query;
use super::settings::{Found, Plan, Unreachable};
use crate::checks::session::ctx::Ctx;
use crate::checks::session::modern::Modern;
use crate::checks::session::not_asked;
use crate::checks::session::peer::Peer;
use crate::checks::session::transport::Transport;
use crate::checks::session::Rpc;
use crate::checks::stateless::{
    self, CACHEABLE, DISCOVER, HEADER_MISMATCH, LISTEN_ACK, META_REQUIRED, RESOURCE_NOT_FOUND,
    RESULT_TYPE, SERVER_INFO, UNREQUESTED_LOG, UNSUPPORTED_VERSION,
};
use crate::checks::{capabilities, jsonrpc, schema, tools};
use crate::http::{HttpSession, Wire};
use crate::log::SharedLog;
use crate::outcome::Finding;
use crate::schema::STATELESS;
use crate::spare::Giver;
use crate::target::Target;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// The checks only this revision has, in report order.
pub const OWN: &[&str] = &[
    DISCOVER,
    META_REQUIRED,
    UNSUPPORTED_VERSION,
    RESULT_TYPE,
    CACHEABLE,
    SERVER_INFO,
    UNREQUESTED_LOG,
    LISTEN_ACK,
    RESOURCE_NOT_FOUND,
    HEADER_MISMATCH,
];

/// The older revisions' checks that read the same at this revision (asked with `_meta`).
pub const SHARED: &[&str] = &[
    schema::VALID,
    tools::LIST,
    tools::UNKNOWN,
    jsonrpc::UNKNOWN_METHOD,
    capabilities::HONEST,
];

/// The shared query checks, asked one after the other after `server/discover`.
const QUERIES: &[&str] = &[
    tools::LIST,
    tools::UNKNOWN,
    jsonrpc::UNKNOWN_METHOD,
    capabilities::HONEST,
];

/// The longest a `server/discover` waiting for its answer holds a start-up slot.
pub const START_SLOT_HOLD: std::time::Duration = std::time::Duration::from_secs(2);
/// By default, how long beyond twice the `initialize` probe's start-up `server/discover` may
/// stay unanswered (once the `initialize` checks are done) before the server is taken for one
/// of that era.
pub const ABANDON_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether the check is judged at 2026-07-28.
pub fn applies(id: &str) -> bool {
    OWN.contains(&id) || SHARED.contains(&id) || features_2026::applies(id)
}

/// Whether the server speaks 2026-07-28, and if so what the checks found.
#[derive(Debug)]
pub enum Spoken {
    /// It answered `server/discover` as a 2026-07-28 server: the findings.
    Yes(Vec<Found>),
    /// It did not: why, in a sentence (what it answered instead). Only a JSON-RPC answer
    /// says so: an error, or a response that is not a `DiscoverResult`.
    No(String),
    /// Nothing was learnt: no answer that could be read came (the server exited, stayed
    /// silent past the bound, or sent what the reader refuses). Never "not spoken": a
    /// server that could not be heard is not judged to be of another revision.
    Unanswered(String),
}

/// A check judged over every session's log.
type Aggregate = (&'static str, fn(&[SharedLog]) -> Finding);

/// Runs the 2026-07-28 checks selected against a stdio target.
///
/// `abandon`, called when `server/discover` is sent, gives the future that ends the wait for
/// its answer early (the default run gives up on it once the `initialize` checks are done
/// and it has waited long enough: a server of that era may stay silent).
///
/// `giver`, when given, hands the server to the `initialize` plan once it answered
/// `server/discover` as a server of that era (see [`crate::spare`]).
pub async fn run_stdio<A: Future<Output = ()> + Send>(
    target: &Target,
    plan: &Plan,
    abandon: impl FnOnce() -> A + Send,
    mut giver: Option<Giver>,
) -> Result<Spoken, Unreachable> {
    let ctx = Ctx::new(target.clone(), plan.timeout);
    // A start-up slot shared with the other revisions' launches, held until `server/discover`
    // is answered (the start-up is over then).
    let slot = ctx
        .starts
        .acquire()
        .await
        .map_err(|e| Unreachable(e.to_string()))?;
    let mut session = ctx.open("2026-07-28").map_err(Unreachable)?;
    session.patience = Some(plan.patience());
    // Started beside the `initialize` plan's probe, its `server/discover` waits as long as
    // that probe may take before its answer sets the patience: the longest patience.
    session.patience_pending = plan
        .patience
        .is_some()
        .then(|| crate::patience::longest(plan.timeout));
    session
        .log()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .revision = Some(STATELESS.into());
    let spoken = run_session(&mut session, plan, false, Some(slot), abandon, &mut giver).await;
    match giver {
        Some(giver) if giver.ready() && session.stalled.is_none() => giver.give(session).await,
        giver => {
            if let Some(giver) = giver {
                giver.none();
            }
            session.kill().await;
        }
    }
    Ok(finish(spoken, &ctx.logs(), plan))
}

/// Runs the 2026-07-28 checks selected against a Streamable HTTP target.
///
/// `abandon` as for [`run_stdio`].
pub async fn run_http<A: Future<Output = ()> + Send>(
    target: &Target,
    plan: &Plan,
    abandon: impl FnOnce() -> A + Send,
) -> Result<Spoken, Unreachable> {
    let Target::Http { url, headers } = target else {
        return Err(Unreachable("not an HTTP target".into()));
    };
    let wire =
        Wire::new(url, headers, plan.ca_cert.as_deref(), plan.timeout).map_err(Unreachable)?;
    let mut session = HttpSession::new(Arc::new(wire), "2026-07-28");
    session.patience = Some(plan.patience());
    session.revision = Some(STATELESS.into());
    session
        .log()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .revision = Some(STATELESS.into());
    let logs = vec![session.log()];
    let spoken = run_session(&mut session, plan, true, None, abandon, &mut None).await;
    Ok(finish(spoken, &logs, plan))
}

/// The aggregate checks over the session's log, added to what the session found.
fn finish(spoken: Spoken, logs: &[SharedLog], plan: &Plan) -> Spoken {
    let Spoken::Yes(mut found) = spoken else {
        return spoken;
    };
    let aggregates: [Aggregate; 5] = [
        (schema::VALID, schema::judge),
        (SERVER_INFO, stateless::judge_server_info),
        (RESULT_TYPE, stateless::judge_result_type),
        (CACHEABLE, stateless::judge_cacheable),
        (UNREQUESTED_LOG, stateless::judge_no_log),
    ];
    for (id, judge) in aggregates {
        if plan.wants(id) {
            let started = Instant::now();
            found.push(Found::new(
                id,
                STATELESS,
                judge(logs),
                started.elapsed().as_millis(),
            ));
        }
    }
    Spoken::Yes(found)
}

/// `server/discover`, then every selected check in turn.
async fn run_session<S: Transport + Peer, A: Future<Output = ()> + Send>(
    session: &mut S,
    plan: &Plan,
    http: bool,
    start_slot: Option<tokio::sync::SemaphorePermit<'static>>,
    abandon: impl FnOnce() -> A + Send,
    giver: &mut Option<Giver>,
) -> Spoken {
    let started = Instant::now();
    // The start-up slot goes back when the answer comes, or after START_SLOT_HOLD at most (a
    // server that never answers must not hold up the other revisions' launches).
    let (answered, answer_seen) = tokio::sync::oneshot::channel::<()>();
    if let Some(slot) = start_slot {
        tokio::spawn(async move {
            if tokio::time::timeout(START_SLOT_HOLD, answer_seen)
                .await
                .is_err()
            {
                // Said: a launch may start from here on before any server has answered.
                crate::timeline::event("slot-freed", "2026-07-28 server/discover unanswered");
            }
            drop(slot);
        });
    }
    let mut modern = Modern(&mut *session);
    let discover = tokio::select! {
        exchange = modern.request_patient("server/discover", None) => exchange,
        () = abandon() => {
            return Spoken::Unanswered(format!(
                "no answer to `server/discover` within {} ms, by when the `initialize` checks were done",
                started.elapsed().as_millis()
            ));
        }
    };
    drop(answered);
    if !discover.heard() {
        let why = discover
            .reply
            .as_ref()
            .err()
            .map(|why| why.why.clone())
            .unwrap_or_default();
        return Spoken::Unanswered(format!(
            "`server/discover` got no answer that could be read: {}",
            crate::outcome::excerpt(&why)
        ));
    }
    if let Some(why) = stateless::not_modern(&discover) {
        // Answered as a server of the `initialize` era: the server may be handed over.
        let id = serde_json::from_str::<Value>(&discover.sent)
            .ok()
            .and_then(|m| m.get("id").cloned());
        if let (Some(giver), Some(id)) = (giver.as_mut(), id) {
            giver.answered(id);
        }
        return Spoken::No(why);
    }
    if let Some(giver) = giver.take() {
        giver.none();
    }
    let mut found = Vec::new();
    if plan.wants(DISCOVER) {
        found.push(Found::new(
            DISCOVER,
            STATELESS,
            stateless::judge_discover(&discover),
            started.elapsed().as_millis(),
        ));
    }
    let capabilities = discover
        .result()
        .and_then(|r| r.get("capabilities"))
        .cloned()
        .unwrap_or_default();
    let own: &[&'static str] = &[
        META_REQUIRED,
        UNSUPPORTED_VERSION,
        RESOURCE_NOT_FOUND,
        HEADER_MISMATCH,
        LISTEN_ACK,
    ];
    for id in QUERIES
        .iter()
        .chain(own)
        .copied()
        .filter(|id| plan.wants(id))
    {
        let started = Instant::now();
        let finding = match id {
            HEADER_MISMATCH if !http => {
                Finding::skip("an HTTP check; the target is a stdio command")
            }
            _ if session.stalled().is_some() => {
                not_asked(&session.stalled().map(|why| why.why).unwrap_or_default())
            }
            META_REQUIRED => stateless::meta_required(session, &capabilities, http).await,
            UNSUPPORTED_VERSION => {
                stateless::unsupported_version(session, &capabilities, http).await
            }
            RESOURCE_NOT_FOUND => stateless::resource_not_found(session, &capabilities).await,
            HEADER_MISMATCH => stateless::header_mismatch(session, &capabilities).await,
            LISTEN_ACK => stateless::listen_ack(session, &capabilities).await,
            other => query(other, &mut Modern(&mut *session), &capabilities).await,
        };
        found.push(Found::new(
            id,
            STATELESS,
            finding,
            started.elapsed().as_millis(),
        ));
    }
    // The feature checks that still apply, last: their tool calls and cancellations come
    // after this revision's own checks.
    found.extend(features_2026::run(session, plan, &discover).await);
    Spoken::Yes(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::plan::order::ALL;
    use crate::checks::{initialize, ping};
    use crate::rules;

    #[test]
    fn every_check_judged_at_2026_07_28_has_a_rule_that_applies_there() {
        let not_applicable = |id: &str| {
            features_2026::NOT_APPLICABLE
                .iter()
                .any(|(na, _)| *na == id)
        };
        for id in ALL.iter().filter(|id| applies(id) && !not_applicable(id)) {
            let rule = rules::find(id).unwrap_or_else(|| panic!("{id} has no rule"));
            assert!(
                rule.applies_at(STATELESS),
                "{id} is judged at 2026-07-28 but its rule does not apply there"
            );
        }
        for id in OWN {
            assert!(
                !rules::find(id).unwrap().applies_at("2025-11-25"),
                "{id} is a 2026-07-28 check"
            );
        }
        // The handshake's checks are not run at 2026-07-28, and their rules say so.
        for id in [initialize::RESULT, ping::PING] {
            assert!(
                !applies(id) && !rules::find(id).unwrap().applies_at(STATELESS),
                "{id}"
            );
        }
    }
}
