//! The launches of a stdio run beside the probe: the negotiation, the exit check's session,
//! the declared side of server requests, each revision's queries and feature checks, the
//! parse-error check.

use super::queries::queries_on;
use super::settings::Plan;
use super::{declaring, features, shared};
use crate::checks::session::ctx::Ctx;
use crate::checks::{initialize, jsonrpc, lifecycle, requests, stdio};
use crate::outcome::Finding;
use crate::stdio::Exchange;
use crate::timeline;
use std::sync::Arc;
use std::time::Instant;

/// Starts the checks that launch a server of their own; the negotiation check waits on the
/// returned sender for the probe's answer.
pub(crate) fn launch_fresh(
    tasks: &mut tokio::task::JoinSet<Vec<(&'static str, String, Finding, u128)>>,
    ctx: &Arc<Ctx>,
    plan: &Plan,
    first: &str,
    queries: &[&'static str],
) -> tokio::sync::oneshot::Sender<Exchange> {
    let (probe_tx, probe_rx) = tokio::sync::oneshot::channel::<Exchange>();
    // The first revision's parse-error check takes over a negotiation session that ended up
    // at the probe's revision, if one does (see [`Ctx::done_with`]).
    let mut reuse = None;
    if plan.wants(initialize::NEGOTIATES) {
        if plan.wants(jsonrpc::PARSE_ERROR) {
            let (tx, rx) = tokio::sync::oneshot::channel();
            *ctx.reuse.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
            reuse = Some(rx);
        }
        let (ctx, first) = (ctx.clone(), first.to_string());
        tasks.spawn(async move {
            timeline::event("check", initialize::NEGOTIATES);
            let (finding, served, own) =
                shared::negotiates(&ctx, &first, async { probe_rx.await.ok() }).await;
            timeline::event("done", initialize::NEGOTIATES);
            // No session left to hand over: the parse-error check starts its own, the exit
            // check (if its session never came) says so, and it closes its session now.
            ctx.reuse.lock().unwrap_or_else(|e| e.into_inner()).take();
            ctx.exit_session
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            ctx.negotiated.send_replace(true);
            let mut out = vec![(
                initialize::NEGOTIATES,
                "all".to_string(),
                finding,
                own.as_millis(),
            )];
            if ctx.shared.early.is_some() {
                let (finding, millis) = match served {
                    Some((_, finding, millis)) => (finding, millis),
                    None => {
                        let reason = format!(
                            "its session, one of {}'s, did not run to the end",
                            initialize::NEGOTIATES
                        );
                        (Finding::HarnessFault { reason }, 0)
                    }
                };
                out.push((lifecycle::BEFORE_INITIALIZE, first.clone(), finding, millis));
            }
            out
        });
    }
    if let Some(offer) = ctx.shared.exit {
        let (tx, rx) = tokio::sync::oneshot::channel();
        *ctx.exit_session.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        let (ctx, first) = (ctx.clone(), first.to_string());
        tasks.spawn(async move {
            let Ok(session) = rx.await else {
                let reason = format!("the negotiation session offering {offer} did not start");
                return vec![(
                    stdio::EXITS_ON_CLOSE,
                    first,
                    Finding::HarnessFault { reason },
                    0,
                )];
            };
            // Closed once every negotiation session has answered: its exit is not timed
            // beside start-ups (a Python server closed beside them once took over 5 s).
            let mut negotiated = ctx.negotiated.subscribe();
            let others = async move {
                let _ = negotiated.wait_for(|done| *done).await;
            };
            let (id, finding, millis) = shared::close_for_exit(session, others, ctx.timeout).await;
            vec![(id, first, finding, millis)]
        });
    }
    let feature_ids = features::selected(plan);
    let settings = features::Settings::of(plan);
    // The declared side of server requests runs after the first revision's parse-error check,
    // on its session (whose handshake declared the client capabilities), else alone.
    let declaring: Vec<&'static str> = requests::CHECKS
        .iter()
        .copied()
        .filter(|id| plan.wants(id))
        .collect();
    if !declaring.is_empty() && !plan.wants(jsonrpc::PARSE_ERROR) {
        let (ctx, revision, declaring, patience) = (
            ctx.clone(),
            first.to_string(),
            declaring.clone(),
            settings.patience,
        );
        tasks.spawn(async move {
            declaring::run_stdio(&ctx, None, &revision, &declaring, patience, false).await
        });
    }
    for (index, revision) in plan.revisions.iter().enumerate() {
        // The first revision's queries run on the probe; its feature checks in a server of
        // their own (a tool call still running would keep the probe from exiting on close),
        // the before-initialize check's (one launch fewer) — unless the negotiation's sessions
        // serve the early request and the exit, and the probe the feature checks (`shared`).
        let queries = if index == 0 { &[][..] } else { queries };
        let early =
            plan.wants(lifecycle::BEFORE_INITIALIZE) && !(index == 0 && ctx.shared.early.is_some());
        let feature_ids = if index == 0 && ctx.shared.features_on_probe {
            &[][..]
        } else {
            &feature_ids[..]
        };
        if !queries.is_empty() || !feature_ids.is_empty() || early {
            let (ctx, revision, queries) = (ctx.clone(), revision.clone(), queries.to_vec());
            let (feature_ids, settings) = (feature_ids.to_vec(), settings.clone());
            tasks.spawn(async move {
                run_queries(&ctx, &revision, &queries, &feature_ids, &settings, early).await
            });
        }
        if plan.wants(jsonrpc::PARSE_ERROR) {
            let (ctx, revision) = (ctx.clone(), revision.clone());
            let reuse = if index == 0 { reuse.take() } else { None };
            let declaring = if index == 0 {
                declaring.clone()
            } else {
                Vec::new()
            };
            let patience = settings.patience;
            tasks.spawn(async move {
                let started = Instant::now();
                let reused = match reuse {
                    Some(reused) => reused.await.ok(),
                    None => None,
                };
                if !declaring.is_empty() {
                    return declaring::run_stdio(
                        &ctx, reused, &revision, &declaring, patience, true,
                    )
                    .await;
                }
                timeline::event("check", jsonrpc::PARSE_ERROR);
                let finding = match reused {
                    Some(mut session) => {
                        let finding = jsonrpc::judge_parse_error(&mut session).await;
                        session.kill().await;
                        finding
                    }
                    None => jsonrpc::parse_error(&ctx, &revision).await,
                };
                timeline::event("done", jsonrpc::PARSE_ERROR);
                vec![(
                    jsonrpc::PARSE_ERROR,
                    revision,
                    finding,
                    started.elapsed().as_millis(),
                )]
            });
        }
    }
    probe_tx
}

/// The shared session's checks, one after the other, in a server of their own.
async fn run_queries(
    ctx: &Ctx,
    revision: &str,
    queries: &[&'static str],
    feature_ids: &[&'static str],
    settings: &features::Settings,
    early: bool,
) -> Vec<(&'static str, String, Finding, u128)> {
    let mut out = Vec::new();
    let opened = if early {
        // A request before `initialize` first (server.lifecycle.before-initialize).
        let launched = match ctx
            .take_spare(&early_key(revision), lifecycle::BEFORE_INITIALIZE)
            .await
        {
            Some(spare) => Ok(spare),
            None => {
                // The start-up slot is held for the launch only: a server that never answers
                // the early request must not keep the others from starting.
                let slot = ctx.start_slot().await;
                let launched = ctx.open(lifecycle::BEFORE_INITIALIZE);
                drop(slot);
                launched
            }
        };
        match launched {
            Ok(mut session) => {
                // Timed from the server in hand: the wait for a spare is the other plan's
                // probe (bounded by it), not this check's time.
                let started = Instant::now();
                let (finding, init) = lifecycle::early_request(&mut session, revision).await;
                out.push((
                    lifecycle::BEFORE_INITIALIZE,
                    revision.to_string(),
                    finding,
                    started.elapsed().as_millis(),
                ));
                if init
                    .result()
                    .and_then(|r| r.get("protocolVersion"))
                    .is_some()
                {
                    Ok((session, init))
                } else {
                    session.kill().await;
                    Err(format!(
                        "the handshake after an early request failed (see {})",
                        lifecycle::BEFORE_INITIALIZE
                    ))
                }
            }
            Err(why) => {
                out.push((
                    lifecycle::BEFORE_INITIALIZE,
                    revision.to_string(),
                    Finding::HarnessFault {
                        reason: why.clone(),
                    },
                    0,
                ));
                Err(why)
            }
        }
    } else {
        ctx.open_initialized("queries", revision).await
    };
    let (mut session, init) = match opened {
        Ok(opened) => opened,
        Err(reason) => {
            out.extend(
                queries
                    .iter()
                    .chain(feature_ids)
                    .map(|id| (*id, revision.to_string(), Finding::skip(reason.clone()), 0)),
            );
            return out;
        }
    };
    let capabilities = init
        .result()
        .and_then(|r| r.get("capabilities"))
        .cloned()
        .unwrap_or_default();
    out.extend(queries_on(&mut session, revision, &capabilities, queries).await);
    let init_result = init.result().cloned().unwrap_or_default();
    out.extend(features::run(&mut session, revision, &init_result, feature_ids, settings).await);
    session.kill().await;
    out
}

/// The key of the session that sends a request before `initialize` at `revision`.
pub(crate) fn early_key(revision: &str) -> String {
    format!("{} {revision}", lifecycle::BEFORE_INITIALIZE)
}
