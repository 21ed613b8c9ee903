//! One target validated: the plans at each revision asked, concurrently, their findings
//! merged, and each finding judged (its level, `--strict`, the baseline).

use crate::checks::initialize;
use crate::checks::plan::{self, stateless, Found, Plan, Unreachable};
use crate::checks::stateless::{does_not_speak, DISCOVER};
use crate::job::Job;
use crate::outcome::{self, CheckResult, Finding};
use crate::report::{Summary, TargetReport};
use crate::rules::{self, Level};
use crate::schema::{self, LATEST};
use crate::spare;
use crate::target::Target;
use crate::{fixtures, outcome::Status};
use std::sync::Arc;
use std::time::Instant;

/// Runs the plans against one target and judges what they found.
pub(crate) async fn validate_one(
    job: &Job,
    name: &str,
    config_name: Option<&str>,
    target: &Target,
) -> TargetReport {
    let started = Instant::now();
    let mut plan = job.plan.clone();
    if let (Some(config), Some(name)) = (&job.config, config_name) {
        plan.call_tools
            .extend(fixtures::config_call_tools(config, name));
    }
    if let (true, Target::Http { url, .. }) = (job.authorization_server, target) {
        let found = plan::auth::run_authorization_server(url, &plan, job.oauth.as_deref()).await;
        return report_of(job, name, config_name, target, found, started);
    }
    let authorized = match (&job.oauth, target) {
        (Some(client_id), Target::Http { url, headers }) => {
            let prober = plan::auth::prober(url, headers, &plan);
            match crate::oauth::obtain_token(&prober, client_id, &job.user_agent).await {
                Ok(token) => Ok(Target::Http {
                    url: url.clone(),
                    headers: crate::http::with(
                        headers.clone(),
                        "Authorization",
                        &format!("Bearer {token}"),
                    ),
                }),
                Err(e) => Err(Unreachable(format!(
                    "cannot obtain a token with --oauth: {e}"
                ))),
            }
        }
        _ => Ok(target.clone()),
    };
    let found = match &authorized {
        Ok(target) => run_target(job, &plan, target).await,
        Err(why) => Err(why.clone()),
    };
    report_of(job, name, config_name, target, found, started)
}

/// The report of one target, its findings judged.
fn report_of(
    job: &Job,
    name: &str,
    config_name: Option<&str>,
    target: &Target,
    found: Result<Vec<Found>, Unreachable>,
    started: Instant,
) -> TargetReport {
    let (checks, unreachable) = match found {
        Ok(found) => (
            found
                .into_iter()
                .map(|f| judge(job, config_name, f))
                .collect::<Vec<_>>(),
            None,
        ),
        Err(why) => (Vec::new(), Some(why.0)),
    };
    TargetReport {
        name: name.to_string(),
        target: target.describe(),
        unreachable,
        summary: Summary::of(&checks),
        checks,
        millis: started.elapsed().as_millis(),
    }
}

/// Runs the checks at every revision asked: 2026-07-28 by [`stateless`] (a server that does
/// not speak it gets one not-applicable finding, not a failure a check), the others by the
/// `initialize` plans, concurrently. By default ([`Job::auto`]) a server is judged at
/// 2026-07-28 if it speaks it and at 2025-11-25 if it answers `initialize`; it is unreachable
/// only when it does neither.
async fn run_target(job: &Job, plan: &Plan, target: &Target) -> Result<Vec<Found>, Unreachable> {
    // The authorization checks run on requests of their own, after the others (which tell
    // them whether the server answered without a token); alone, they run by themselves.
    if plan.selected.iter().all(|id| plan::auth::is_auth(id)) {
        return plan::auth::run(target, plan, None, true).await;
    }
    let probe_status = std::sync::Arc::new(std::sync::OnceLock::new());
    let mut found = run_protocol(job, plan, target, &probe_status).await?;
    found.extend(plan::auth::run(target, plan, probe_status.get().copied(), false).await?);
    plan::sort(&mut found);
    Ok(found)
}

/// [`run_target`] for every check but the authorization checks; the `initialize` plan's
/// probe status goes into `probe_status`.
async fn run_protocol(
    job: &Job,
    plan: &Plan,
    target: &Target,
    probe_status: &std::sync::Arc<std::sync::OnceLock<u16>>,
) -> Result<Vec<Found>, Unreachable> {
    let mut plan = plan.clone();
    plan.selected.retain(|id| !plan::auth::is_auth(id));
    let plan = &plan;
    let mut modern = plan.clone();
    modern.selected.retain(|id| stateless::applies(id));
    // By default `server/discover` is asked whatever was selected: it says whether the
    // server's refusal of `initialize` is a failure or not its revision.
    let run_modern = job.auto
        || plan.revisions.iter().any(|r| r == schema::STATELESS) && !modern.selected.is_empty();
    let mut legacy = plan.clone();
    legacy.revisions.retain(|r| r != schema::STATELESS);
    legacy.selected.retain(|id| !stateless::OWN.contains(id));
    legacy.probe_status = Some(probe_status.clone());
    let run_legacy = !legacy.revisions.is_empty() && !legacy.selected.is_empty();
    // By default the handshake's answer decides whether the server claims 2025-11-25 at all.
    let result_asked = plan.wants(initialize::RESULT);
    if job.auto && !result_asked {
        legacy.selected.push(initialize::RESULT);
    }
    // By default a server of the `initialize` era may stay silent on `server/discover`: the
    // wait for it ends a moment after the `initialize` checks are done.
    let (legacy_done, legacy_seen) = tokio::sync::oneshot::channel::<()>();
    let auto = job.auto;
    // Over stdio the 2026-07-28 session takes a start-up slot first (shared with the
    // `initialize` plan's launches, so at most one start-up a core, the probe's beside it);
    // over HTTP it waits until the `initialize` probe is over (or the whole `initialize` run
    // is, when it ends first), so the probe is not slowed by it.
    let run_started = Instant::now();
    let probed = Arc::new(tokio::sync::Notify::new());
    let finished = Arc::new(tokio::sync::Notify::new());
    // How long the probe took, once it is over: the HTTP gate waits on it, the abandon
    // bound reads it.
    let (took_tx, probe_took) = tokio::sync::watch::channel(None::<std::time::Duration>);
    legacy.probed = Some(probed.clone());
    // The probe of the `initialize` plan measures the start-up; the 2026-07-28 session's
    // `server/discover` is as patient as that plan's later handshakes.
    let patience = Arc::new(std::sync::OnceLock::new());
    legacy.patience = Some(patience.clone());
    // Without an `initialize` plan, nothing sets it.
    modern.patience = run_legacy.then_some(patience);
    let probe_watch = {
        let (probed, finished) = (probed.clone(), finished.clone());
        async move {
            if run_legacy {
                tokio::select! {
                    () = probed.notified() => {}
                    () = finished.notified() => {}
                }
                took_tx.send_replace(Some(run_started.elapsed()));
            }
        }
    };
    let gate = {
        let mut probe_took = probe_took.clone();
        let stdio = target.is_stdio();
        async move {
            if run_legacy && !stdio {
                // Past the probe, or past the whole run should its watch be gone.
                let _ = probe_took.wait_for(Option::is_some).await;
            }
        }
    };
    // Given up on once the `initialize` run is done and the answer has been awaited twice as
    // long as the probe's start-up took, plus a grace: a server of 2026-07-28 starting at the
    // same load answers by then.
    let abandon = move || {
        let asked = Instant::now();
        async move {
            if auto && legacy_seen.await.is_ok() {
                let took = probe_took.borrow().unwrap_or_default();
                tokio::time::sleep_until((asked + took * 2 + stateless::ABANDON_GRACE).into())
                    .await;
            } else {
                std::future::pending::<()>().await;
            }
        }
    };
    // Over stdio, a server that answers `server/discover` as one of the `initialize` era is
    // handed to the `initialize` plan instead of another start-up (see [`spare`]).
    let (giver, spare) = match (run_modern && run_legacy, target) {
        (true, Target::Stdio { .. }) => {
            let (giver, spare) = spare::channel();
            (Some(giver), Some(spare))
        }
        _ => (None, None),
    };
    let modern_run = async {
        if !run_modern {
            return None;
        }
        gate.await;
        match target {
            Target::Stdio { .. } => {
                Some(stateless::run_stdio(target, &modern, abandon, giver).await)
            }
            Target::Http { .. } => Some(stateless::run_http(target, &modern, abandon).await),
        }
    };
    let legacy_run = async {
        let found = match (run_legacy, target) {
            (false, _) => None,
            (true, Target::Stdio { .. }) => {
                Some(plan::stdio::run_stdio(target, &legacy, spare).await)
            }
            (true, Target::Http { .. }) => Some(plan::http::run_http(target, &legacy).await),
        };
        finished.notify_one();
        if found.is_some() {
            let _ = legacy_done.send(());
        }
        found
    };
    // The 2026-07-28 session first: over stdio its start-up slot is taken before the
    // `initialize` plan's launches queue for theirs (its one start-up is not left for last).
    let (modern_found, legacy_found, ()) = tokio::join!(modern_run, legacy_run, probe_watch);
    // Behind authorization (the probe got 401), 2026-07-28 is not judged either: its checks
    // are skipped with the same reason, whatever `server/discover` got.
    let modern_found = match (target, probe_status.get(), modern_found) {
        (Target::Http { headers, .. }, Some(401), Some(_)) => {
            let mut modern = modern.clone();
            modern.revisions = vec![schema::STATELESS.to_string()];
            Some(Ok(stateless::Spoken::Yes(
                plan::http::behind_authorization(&modern, headers),
            )))
        }
        (_, _, modern_found) => modern_found,
    };
    let mut found = Vec::new();
    let mut speaks = false;
    match modern_found {
        None => {}
        Some(Err(unreachable)) if legacy_found.is_none() => return Err(unreachable),
        // The `initialize` plan says whether the server is there at all.
        Some(Err(_)) => {}
        Some(Ok(stateless::Spoken::Yes(modern_found))) => {
            speaks = true;
            found.extend(modern_found);
        }
        // Nothing else asked: a server that could not be heard, or that does not speak the
        // only revision asked, has nothing judged, which is never a pass.
        Some(Ok(stateless::Spoken::Unanswered(why))) if legacy_found.is_none() => {
            return Err(Unreachable(why))
        }
        Some(Ok(stateless::Spoken::No(why))) if legacy_found.is_none() => {
            return Err(Unreachable(format!(
                "it does not speak 2026-07-28, the only revision asked ({why})"
            )))
        }
        Some(Ok(stateless::Spoken::Unanswered(why))) if plan.wants(DISCOVER) => {
            found.push(Found::new(
                DISCOVER,
                schema::STATELESS,
                Finding::skip(format!("not judged at 2026-07-28: {why}")),
                0,
            ));
        }
        Some(Ok(stateless::Spoken::Unanswered(_))) => {}
        Some(Ok(stateless::Spoken::No(why))) if !job.auto || plan.wants(DISCOVER) => {
            found.push(Found::new(
                DISCOVER,
                schema::STATELESS,
                does_not_speak(&why),
                0,
            ));
        }
        Some(Ok(stateless::Spoken::No(_))) => {}
    }
    match legacy_found {
        None => {}
        Some(Ok(legacy_found)) => {
            let refusal = legacy_found.iter().find_map(|f| match &f.finding {
                Finding::Fail(failure)
                    if f.id == initialize::RESULT
                        && failure.actual.starts_with("an error response") =>
                {
                    Some(
                        failure
                            .received
                            .clone()
                            .unwrap_or_else(|| failure.actual.clone()),
                    )
                }
                _ => None,
            });
            match refusal {
                // A server of 2026-07-28 only, asked by default: 2025-11-25 is not its revision.
                Some(answer) if job.auto && speaks => {
                    if result_asked {
                        let reason = format!(
                            "not applicable: the server speaks 2026-07-28 only and refuses `initialize` ({})",
                            outcome::excerpt(&answer)
                        );
                        found.push(Found::new(
                            initialize::RESULT,
                            LATEST,
                            Finding::skip(reason),
                            0,
                        ));
                    }
                }
                _ => found.extend(
                    legacy_found
                        .into_iter()
                        .filter(|f| result_asked || f.id != initialize::RESULT),
                ),
            }
        }
        Some(Err(why)) if speaks && plan.wants(initialize::RESULT) && !job.auto => {
            let reason =
                format!("the server speaks 2026-07-28 and answers no `initialize` ({why})");
            for revision in &legacy.revisions {
                found.push(Found::new(
                    initialize::RESULT,
                    revision.clone(),
                    Finding::skip(reason.clone()),
                    0,
                ));
            }
        }
        Some(Err(_)) if speaks => {}
        Some(Err(why)) => return Err(why),
    }
    plan::sort(&mut found);
    Ok(found)
}

/// Applies the level, `--strict` and the baseline to one finding.
fn judge(job: &Job, server: Option<&str>, found: Found) -> CheckResult {
    let rule = rules::find(found.id);
    let level = if job.strict {
        Level::Must
    } else {
        found.level.or(rule.map(|r| r.level)).unwrap_or(Level::Must)
    };
    let expected = job.baseline.find(found.id, server, &found.revision);
    let (status, note, failure) = match found.finding {
        Finding::Pass { note } => match expected {
            Some(entry) => (
                Status::Stale,
                Some(format!(
                    "the baseline expects a failure ({}) but the check passes: remove the entry",
                    entry.reason
                )),
                None,
            ),
            None => (Status::Pass, note, None),
        },
        Finding::Fail(failure) if failure.ran_out_of_time().is_some() => (
            Status::Inconclusive,
            failure
                .ran_out_of_time()
                .map(|figure| format!("inconclusive, time ran out: {figure}")),
            Some(failure),
        ),
        Finding::Fail(failure) => match expected {
            Some(entry) => (
                Status::ExpectedFailure,
                Some(entry.reason.clone()),
                Some(failure),
            ),
            None if level == Level::Must => (Status::Fail, None, Some(failure)),
            None => (Status::Warn, None, Some(failure)),
        },
        Finding::Skip { reason } => (Status::Skip, Some(reason), None),
        Finding::HarnessFault { reason } => (Status::HarnessFault, Some(reason), None),
    };
    CheckResult {
        id: found.id.to_string(),
        level: level.name(),
        revision: found.revision,
        requirement: rule.map_or_else(|| "the harness itself".to_string(), |r| r.text.clone()),
        status,
        note,
        failure,
        millis: found.millis,
    }
}
