//! The plan over Streamable HTTP: a probe session proves the server answers `initialize`
//! (else the target is unreachable), then each group of checks runs concurrently in its own
//! session (its own `initialize`, its own `Mcp-Session-Id`), so one check's misbehaviour
//! cannot disturb another's.

use super::features;
use super::order::{sort, ALL};
use super::queries::{query, QUERIES};
use super::settings::{Found, Plan, Unreachable};
use crate::checks::http::{
    self, ACCEPT_REQUIRED, BATCH, DELETE, GET_STREAM, MISSING_SESSION_400, NOTIFICATION_202,
    ORIGIN, ORIGIN_MUST_SINCE, PROTOCOL_VERSION_HEADER, SESSION_ID_ASCII, UNKNOWN_SESSION_404,
};
use crate::checks::session::http_ctx::HttpCtx;
use crate::checks::session::not_asked;
use crate::checks::{initialize, jsonrpc, lifecycle, requests, schema, stdio};
use crate::declared::declared_at;
use crate::http::{Wire, WireError};
use crate::outcome::{excerpt, Finding};
use crate::patience::patience_after;
use crate::rules::Level;
use crate::schema::LATEST;
use crate::stdio::Exchange;
use crate::target::Target;
use std::sync::Arc;
use std::time::Instant;

/// The checks that each run in a session of their own.
const OWN_SESSION: &[&str] = &[
    NOTIFICATION_202,
    ACCEPT_REQUIRED,
    UNKNOWN_SESSION_404,
    MISSING_SESSION_400,
    DELETE,
    PROTOCOL_VERSION_HEADER,
    ORIGIN,
    GET_STREAM,
    BATCH,
];

type Results = Vec<(&'static str, String, Finding, u128, Option<Level>)>;

/// Every selected check skipped: the probe's `initialize` got `401`, so the server wants a
/// token (or refused the one given), and only the authorization checks can be judged.
pub(crate) fn behind_authorization(plan: &Plan, headers: &[(String, String)]) -> Vec<Found> {
    let given = headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
    let reason = if given {
        "not judged: the server answered `initialize` with 401 to the `Authorization` given (see server.auth.*)"
    } else {
        "not judged: the server requires authorization (401 to `initialize` without a token); give a token with --header 'Authorization: Bearer …' to judge the rest (see server.auth.*)"
    };
    plan.selected
        .iter()
        .flat_map(|id| {
            plan.revisions
                .iter()
                .map(move |revision| Found::new(id, revision.clone(), Finding::skip(reason), 0))
        })
        .collect()
}

/// Runs the selected checks against a Streamable HTTP target.
pub async fn run_http(target: &Target, plan: &Plan) -> Result<Vec<Found>, Unreachable> {
    let Target::Http { url, headers } = target else {
        return Err(Unreachable("not an HTTP target".into()));
    };
    let wire =
        Wire::new(url, headers, plan.ca_cert.as_deref(), plan.timeout).map_err(Unreachable)?;
    let mut ctx = HttpCtx::new(wire);
    ctx.patience = plan.patience();
    let ctx = Arc::new(ctx);
    let first = plan
        .revisions
        .first()
        .cloned()
        .unwrap_or_else(|| LATEST.to_string());

    let started = Instant::now();
    let mut probe = ctx.open("probe");
    // The probe declares the client capabilities (server.requests.valid judges it).
    probe.declared = declared_at(&first);
    let init = ctx.handshake(&mut probe, "probe", &first).await;
    if let Some(cell) = &plan.probe_status {
        let _ = cell.set(init.init_posted.status().unwrap_or(0));
    }
    match &init.init_posted.reply {
        Err(e) if e.is_unreachable() => {
            return Err(Unreachable(match e {
                WireError::Connect { .. } => e.to_string(),
                _ => format!("no answer to `initialize`: {e}"),
            }));
        }
        // An answer whose body never ends is no answer: nothing can be judged.
        Ok(reply) if reply.timed_out && !reply.is_sse() => {
            return Err(Unreachable(format!(
                "no answer to `initialize`: {}",
                excerpt(&reply.describe())
            )));
        }
        _ => {}
    }
    if init.init_posted.status() == Some(401) {
        // Behind authorization: nothing but the authorization checks can be judged.
        if let Some(probed) = &plan.probed {
            probed.notify_one();
        }
        return Ok(behind_authorization(plan, headers));
    }
    let probe_millis = started.elapsed().as_millis();
    // Over HTTP the server is started already: its start-up is the time to the first answer.
    let _ = ctx
        .patience
        .set(patience_after(started.elapsed(), plan.timeout));
    if let Some(probed) = &plan.probed {
        probed.notify_one();
    }

    let mut tasks = tokio::task::JoinSet::<Results>::new();
    if plan.wants(initialize::NEGOTIATES) {
        let ctx = ctx.clone();
        let probe_answer = (first.clone(), init.init.clone());
        tasks.spawn(async move {
            let started = Instant::now();
            let finding = negotiates(&ctx, probe_answer).await;
            vec![(
                initialize::NEGOTIATES,
                "all".to_string(),
                finding,
                started.elapsed().as_millis(),
                None,
            )]
        });
    }
    let mut found = Vec::new();
    for (index, revision) in plan.revisions.iter().enumerate() {
        let queries: Vec<&'static str> = QUERIES
            .iter()
            .copied()
            .filter(|id| plan.wants(id))
            .collect();
        let feature_ids = features::selected(plan);
        if !queries.is_empty() || !feature_ids.is_empty() {
            let (ctx, revision, settings) =
                (ctx.clone(), revision.clone(), features::Settings::of(plan));
            tasks.spawn(async move {
                run_queries(&ctx, &revision, &queries, &feature_ids, &settings).await
            });
        }
        if plan.wants(lifecycle::BEFORE_INITIALIZE) {
            let reason =
                "a stdio check: over HTTP a request without a session is the transport's matter";
            found.push(Found::new(
                lifecycle::BEFORE_INITIALIZE,
                revision.clone(),
                Finding::skip(reason),
                0,
            ));
        }
        let own: Vec<&'static str> = [jsonrpc::PARSE_ERROR]
            .iter()
            .chain(OWN_SESSION)
            .copied()
            .filter(|id| plan.wants(id))
            .collect();
        let sse: Vec<&'static str> = http::SSE_CHECKS
            .iter()
            .copied()
            .filter(|id| plan.wants(id))
            .collect();
        if !sse.is_empty() {
            let (ctx, revision) = (ctx.clone(), revision.clone());
            tasks.spawn(async move {
                let started = Instant::now();
                let found = match ctx.open_initialized("sse", &revision).await {
                    Ok((mut session, _)) => {
                        let negotiated = session.revision.clone().unwrap_or_default();
                        let found = http::sse(&mut session, &negotiated, &sse).await;
                        session.close().await;
                        found
                    }
                    Err(reason) => sse
                        .iter()
                        .map(|id| (*id, Finding::skip(reason.clone())))
                        .collect(),
                };
                let millis = started.elapsed().as_millis();
                found
                    .into_iter()
                    .map(|(id, finding)| (id, revision.clone(), finding, millis, None))
                    .collect()
            });
        }
        for id in own {
            let (ctx, revision) = (ctx.clone(), revision.clone());
            tasks.spawn(async move {
                let started = Instant::now();
                let (finding, level) = run_one(&ctx, id, &revision).await;
                vec![(id, revision, finding, started.elapsed().as_millis(), level)]
            });
        }
        if plan.wants(initialize::RESULT) {
            let finding = if index == 0 {
                initialize::judge_result(&init.init)
            } else {
                let mut session = ctx.open(&format!("initialize {revision}"));
                let handshake = ctx.handshake(&mut session, "initialize", revision).await;
                session.close().await;
                initialize::judge_result(&handshake.init)
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
            Ok(results) => found.extend(results.into_iter().map(
                |(id, revision, finding, millis, level)| Found {
                    level,
                    ..Found::new(id, revision, finding, millis)
                },
            )),
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
    let declared_ids: Vec<&'static str> = requests::CHECKS
        .iter()
        .copied()
        .filter(|id| plan.wants(id))
        .collect();
    let declared = probe.declared.clone();
    for (id, revision, finding, millis) in
        requests::run(&mut probe, &first, &declared, &declared_ids).await
    {
        found.push(Found::new(id, revision, finding, millis));
    }
    probe.close().await;
    found.retain(|f| f.id == "harness" || plan.wants(f.id));
    if plan.wants(schema::VALID) {
        let started = Instant::now();
        let finding = schema::judge(&ctx.logs());
        found.push(Found::new(
            schema::VALID,
            first.clone(),
            finding,
            started.elapsed().as_millis(),
        ));
    }
    if plan.wants(SESSION_ID_ASCII) {
        let issued = ctx.issued();
        found.push(Found::new(
            SESSION_ID_ASCII,
            first.clone(),
            http::judge_session_ids(&issued),
            0,
        ));
    }
    for id in [stdio::CLEAN_STDOUT, stdio::EXITS_ON_CLOSE] {
        if plan.wants(id) {
            found.push(Found::new(
                id,
                first.clone(),
                Finding::skip("a stdio check; the target is an HTTP URL"),
                0,
            ));
        }
    }
    debug_assert!(found
        .iter()
        .all(|f| f.id == "harness" || ALL.contains(&f.id)));
    sort(&mut found);
    Ok(found)
}

/// Offers each other revision in a fresh session, concurrently; the probe counts for its own.
async fn negotiates(ctx: &Arc<HttpCtx>, probe: (String, Exchange)) -> Finding {
    let mut tasks = tokio::task::JoinSet::new();
    for revision in initialize::offered().into_iter().filter(|r| *r != probe.0) {
        let ctx = ctx.clone();
        tasks.spawn(async move {
            let label = format!("negotiates {revision}");
            let mut session = ctx.open(&label);
            let handshake = ctx.handshake(&mut session, &label, revision).await;
            session.close().await;
            (revision.to_string(), handshake.init)
        });
    }
    let mut answers = vec![probe];
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(answer) => answers.push(answer),
            Err(e) => {
                return Finding::HarnessFault {
                    reason: format!("a negotiation session failed: {e}"),
                }
            }
        }
    }
    initialize::judge_negotiation(answers)
}

/// The query checks, one after the other in one session.
async fn run_queries(
    ctx: &HttpCtx,
    revision: &str,
    queries: &[&'static str],
    feature_ids: &[&'static str],
    settings: &features::Settings,
) -> Results {
    let (mut session, init) = match ctx.open_initialized("queries", revision).await {
        Ok(opened) => opened,
        Err(reason) => {
            return queries
                .iter()
                .chain(feature_ids)
                .map(|id| {
                    (
                        *id,
                        revision.to_string(),
                        Finding::skip(reason.clone()),
                        0,
                        None,
                    )
                })
                .collect();
        }
    };
    let capabilities = init
        .init
        .result()
        .and_then(|r| r.get("capabilities"))
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for id in queries {
        let started = Instant::now();
        let finding = match *id {
            _ if session.stalled.is_some() => {
                not_asked(session.stalled.as_ref().map_or("", |why| why.why.as_str()))
            }
            jsonrpc::NOTIFICATION_SILENT => jsonrpc::notification_silent_http(&mut session).await,
            other => query(other, &mut session, &capabilities).await,
        };
        out.push((
            *id,
            revision.to_string(),
            finding,
            started.elapsed().as_millis(),
            None,
        ));
    }
    let init_result = init.init.result().cloned().unwrap_or_default();
    let features = features::run(&mut session, revision, &init_result, feature_ids, settings).await;
    out.extend(
        features
            .into_iter()
            .map(|(id, revision, finding, millis)| (id, revision, finding, millis, None)),
    );
    session.close().await;
    out
}

/// Runs one check in a session of its own.
async fn run_one(ctx: &HttpCtx, id: &'static str, revision: &str) -> (Finding, Option<Level>) {
    if id == jsonrpc::PARSE_ERROR {
        return (jsonrpc::parse_error_http(ctx, revision).await, None);
    }
    let (mut session, handshake) = match ctx.open_initialized(id, revision).await {
        Ok(opened) => opened,
        Err(reason) => return (Finding::skip(reason), None),
    };
    let negotiated = session.revision.clone().unwrap_or_default();
    let mut level = None;
    let finding = match id {
        NOTIFICATION_202 => http::notification_202(&handshake),
        ACCEPT_REQUIRED => http::accept_required(&mut session).await,
        UNKNOWN_SESSION_404 => http::unknown_session(&mut session).await,
        MISSING_SESSION_400 => http::missing_session(&mut session).await,
        DELETE => http::delete(&mut session).await,
        PROTOCOL_VERSION_HEADER => http::protocol_version_header(&mut session, &negotiated).await,
        ORIGIN => {
            if negotiated.as_str() >= ORIGIN_MUST_SINCE {
                level = Some(Level::Must);
            }
            http::origin(&mut session).await
        }
        GET_STREAM => http::get_stream(&mut session).await,
        BATCH => http::batch(&mut session, &negotiated).await,
        _ => Finding::HarnessFault {
            reason: format!("{id} is not an HTTP check"),
        },
    };
    session.close().await;
    (finding, level)
}
