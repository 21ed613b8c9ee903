//! The plan over stdio: the probe, the launches beside it, the first revision's queries on
//! the probe, and the findings gathered in report order.

use super::launch::{early_key, launch_fresh};
use super::order::sort;
use super::queries::{queries_on, QUERIES};
use super::settings::{Found, Plan, Unreachable};
use super::{features, shared};
use crate::checks::session::ctx::{Ctx, Shared};
use crate::checks::{initialize, jsonrpc, lifecycle, requests, schema, stdio};
use crate::outcome::Finding;
use crate::patience::patience_after;
use crate::schema::LATEST;
use crate::spare::Spare;
use crate::stdio::{Exchange, Session};
use crate::target::Target;
use crate::timeline;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// Runs the selected checks against a stdio target. The launches that need a fresh server
/// (the negotiation's, the parse-error check's, other revisions' queries, the feature
/// session) start together with the probe, so the server's start-up is paid once in wall
/// time; the first revision's queries reuse the probe session, which is then closed for
/// exits-on-close. Fewer servers start than checks need fresh ones: `spare`, a server the
/// 2026-07-28 plan is done with, is taken over by the feature session (it got a request
/// before `initialize`: what that session starts with), else by one negotiation session;
/// and the parse-error check takes over a negotiation session that answered at the probe's
/// revision (the offer of an unknown revision usually does), else starts its own. If the
/// probe gets no answer while the others start beside it, they are stopped and the probe is
/// tried once more alone (a slow server starved by its own copies is not unreachable); only
/// then is the target unreachable.
pub async fn run_stdio(
    target: &Target,
    plan: &Plan,
    spare: Option<Spare>,
) -> Result<Vec<Found>, Unreachable> {
    let mut ctx = Ctx::new(target.clone(), plan.timeout);
    ctx.patience = plan.patience();
    let mut found = Vec::new();
    let first = plan
        .revisions
        .first()
        .cloned()
        .unwrap_or_else(|| LATEST.to_string());
    let queries: Vec<&'static str> = QUERIES
        .iter()
        .copied()
        .filter(|id| plan.wants(id))
        .collect();
    ctx.shared = shared::sharing(plan, &first);
    ctx.spare = spare_taker(plan, &first, &ctx.shared).zip(spare);
    ctx.uncapped = !plan.wants(stdio::EXITS_ON_CLOSE) || ctx.shared.exit.is_some();
    let served_by_unknown =
        plan.wants(jsonrpc::PARSE_ERROR) || requests::CHECKS.iter().any(|id| plan.wants(id));
    if plan.wants(initialize::NEGOTIATES)
        && served_by_unknown
        && ctx.shared.early != Some(initialize::UNKNOWN_REVISION)
    {
        ctx.eager = Some(initialize::session_label(initialize::UNKNOWN_REVISION));
    }
    let ctx = Arc::new(ctx);

    let mut tasks = tokio::task::JoinSet::new();
    let started = Instant::now();
    // The probe takes the first start-up slot; the other launches queue behind it.
    let probe = open_probe(&ctx, &first);
    let mut probe_tx = launch_fresh(&mut tasks, &ctx, plan, &first, &queries);
    let (mut probe, init) = match probe.await {
        Ok(opened) => opened,
        Err(_) if !tasks.is_empty() => {
            tasks.shutdown().await;
            let opened = open_probe(&ctx, &first).await.map_err(Unreachable)?;
            probe_tx = launch_fresh(&mut tasks, &ctx, plan, &first, &queries);
            opened
        }
        Err(why) => {
            ctx.probe_answered.send_replace(Some(false));
            return Err(Unreachable(why));
        }
    };
    let probe_millis = started.elapsed().as_millis();
    let _ = ctx
        .patience
        .set(patience_after(started.elapsed(), ctx.timeout));
    let _ = ctx.probe_answer.set(
        init.result()
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
            .map(str::to_string),
    );
    ctx.probe_answered.send_replace(Some(true));
    if let Some(probed) = &plan.probed {
        probed.notify_one();
    }
    let _ = probe_tx.send(init.clone());
    if plan.wants(schema::VALID) {
        // Off the end of the run: compiled while the other servers start.
        tokio::task::spawn_blocking(|| {
            timeline::event("check", "schema warm");
            crate::schema::warm(&crate::schema::REVISIONS);
            timeline::event("done", "schema warm");
        });
    }

    // The exit is judged on the probe unless a negotiation session serves it (and the probe
    // the feature checks: see [`shared`]).
    let wants_exit = plan.wants(stdio::EXITS_ON_CLOSE) && ctx.shared.exit.is_none();
    let probe_features = if ctx.shared.features_on_probe {
        features::selected(plan)
    } else {
        Vec::new()
    };
    let settings = features::Settings::of(plan);
    let init_result = init.result().cloned().unwrap_or_default();
    let capabilities = init
        .result()
        .and_then(|r| r.get("capabilities"))
        .cloned()
        .unwrap_or_default();
    let first_queries = queries.clone();
    let probe_revision = first.clone();
    let timeout = plan.timeout;
    let prepare = plan.wants(schema::VALID).then(|| ctx.clone());
    tasks.spawn(async move {
        // The schema check's validators for what the probe was sent, compiled while the
        // other servers start rather than at the end of the run: after its queries, and
        // again after the feature checks (for their answers; what is compiled is cached).
        let prepare_now = |ctx: &Option<Arc<Ctx>>| {
            let Some(ctx) = ctx.clone() else { return };
            tokio::task::spawn_blocking(move || {
                timeline::event("check", "schema prepare");
                schema::prepare(&ctx.logs());
                timeline::event("done", "schema prepare");
            });
        };
        let mut out = queries_on(&mut probe, &probe_revision, &capabilities, &first_queries).await;
        prepare_now(&prepare);
        if !probe_features.is_empty() {
            out.extend(
                features::run(
                    &mut probe,
                    &probe_revision,
                    &init_result,
                    &probe_features,
                    &settings,
                )
                .await,
            );
            prepare_now(&prepare);
        }
        if !wants_exit {
            probe.kill().await;
            return out;
        }
        let (id, finding, millis) =
            shared::close_for_exit(probe, std::future::ready(()), timeout).await;
        out.push((id, String::new(), finding, millis));
        out
    });
    for (index, revision) in plan.revisions.iter().enumerate() {
        if plan.wants(initialize::RESULT) {
            let finding = if index == 0 {
                initialize::judge_result(&init)
            } else {
                match ctx.open(&format!("initialize {revision}")) {
                    Ok(mut session) => {
                        let exchange = session.handshake(revision).await;
                        session.kill().await;
                        initialize::judge_result(&exchange)
                    }
                    Err(why) => Finding::HarnessFault { reason: why },
                }
            };
            found.push(Found::new(
                initialize::RESULT,
                revision.clone(),
                finding,
                probe_millis,
            ));
        }
    }
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(results) => {
                found.extend(results.into_iter().map(|(id, revision, finding, millis)| {
                    Found::new(
                        id,
                        if revision.is_empty() {
                            first.clone()
                        } else {
                            revision
                        },
                        finding,
                        millis,
                    )
                }))
            }
            Err(e) => found.push(Found::new(
                "harness",
                first.clone(),
                Finding::HarnessFault {
                    reason: format!("a check task failed: {e}"),
                },
                0,
            )),
        }
    }
    found.retain(|f| f.id == "harness" || plan.wants(f.id));
    let logs = ctx.logs();
    if plan.wants(schema::VALID) {
        let started = Instant::now();
        timeline::event("check", schema::VALID);
        let finding = schema::judge(&logs);
        timeline::event("done", schema::VALID);
        found.push(Found::new(
            schema::VALID,
            first.clone(),
            finding,
            started.elapsed().as_millis(),
        ));
    }
    if plan.wants(stdio::CLEAN_STDOUT) {
        found.push(Found::new(
            stdio::CLEAN_STDOUT,
            first.clone(),
            stdio::judge_stdout(&logs),
            0,
        ));
    }
    for id in plan
        .selected
        .iter()
        .filter(|id| id.starts_with("server.http."))
    {
        found.push(Found::new(
            id,
            first.clone(),
            Finding::skip("an HTTP check; the target is a stdio command"),
            0,
        ));
    }
    sort(&mut found);
    Ok(found)
}

/// The probe: proves the server answers at all. The error is the reason it is unreachable.
/// It takes its start-up slot when made, so launches made after it queue behind it.
fn open_probe<'a>(
    ctx: &'a Ctx,
    revision: &'a str,
) -> impl Future<Output = Result<(Session, Exchange), String>> + 'a {
    let slot = ctx.starts.try_acquire().ok();
    async move {
        let slot = match slot {
            Some(slot) => slot,
            None => ctx.starts.acquire().await.map_err(|e| e.to_string())?,
        };
        let mut probe = ctx.open("probe")?;
        let init = probe.handshake(revision).await;
        drop(slot);
        if let Err(why) = &init.reply {
            probe.kill().await;
            return Err(format!("no answer to `initialize`: {why}"));
        }
        Ok((probe, init))
    }
}

/// Which session takes over a spare server (see [`Ctx::take_spare`]): the session that starts
/// with a request before `initialize` anyway (a negotiation session, see [`shared`], else the
/// first revision's feature session); else the first negotiation session besides the
/// probe's; else none.
fn spare_taker(plan: &Plan, first: &str, shared: &Shared) -> Option<String> {
    if let Some(early) = shared.early {
        Some(initialize::session_label(early))
    } else if plan.wants(lifecycle::BEFORE_INITIALIZE) {
        Some(early_key(first))
    } else if plan.wants(initialize::NEGOTIATES) {
        initialize::offered()
            .into_iter()
            .find(|r| *r != first)
            .map(initialize::session_label)
    } else {
        None
    }
}
