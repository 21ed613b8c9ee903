//! `mcp-conformance validate`: checks a third-party MCP server against the server rules of
//! the registry (`kind = "server"` in `src/rules.toml`) and reports which it keeps.
//!
//! Use it on your own server in CI: point it at a command (stdio), a URL (Streamable HTTP) or
//! a config file, read the table, keep known deviations in a baseline file with their reasons.
//!
//! ```no_run
//! use clap::Parser;
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     args: mcp_conformance::validate::ValidateArgs,
//! }
//! let cli = Cli::parse_from(["validate", "--strict", "--", "node", "server.js"]);
//! std::process::exit(i32::from(mcp_conformance::validate::main(cli.args)));
//! ```
//!
//! Pieces, one job each: [`cli`] (options), [`target`] (command, URL, config file),
//! [`stdio`] (a raw, bounded stdio session), [`http`] (a raw, bounded Streamable HTTP session), [`log`] (what each session saw), [`checks`] (the
//! checks by area and the plan that runs them), [`schema`] (the embedded wire schemas),
//! [`baseline`], [`outcome`] (findings and statuses) and [`report`] (table, JSON, JUnit).

pub mod baseline;
pub mod checks;
pub mod cli;
pub mod fixtures;
pub mod http;
pub mod log;
pub mod outcome;
pub mod reaper;
pub mod redact;
pub mod report;
pub mod schema;
pub mod spare;
pub mod stdio;
pub mod target;
pub mod timeline;
pub mod weight;

pub use cli::ValidateArgs;

use crate::rules::{self, Level};
use crate::{exit_code, terminal};
use baseline::Baseline;
use checks::{stateless, Found, Plan};
use outcome::{CheckResult, Finding, Status};
use report::{Summary, TargetReport};
use std::sync::Arc;
use std::time::Instant;
use target::Target;

/// The newest revision with an `initialize` handshake: judged by default when the server
/// answers `initialize` (beside [`schema::STATELESS`] when it speaks that).
pub const LATEST: &str = "2025-11-25";

/// A prepared run.
struct Job {
    targets: Vec<(String, Option<String>, Target)>,
    plan: Plan,
    strict: bool,
    baseline: Baseline,
    /// No `--revision`: 2026-07-28 if the server speaks it, 2025-11-25 if it answers `initialize`.
    auto: bool,
    /// The config file, whose entries may name tools to call (`callTools`).
    config: Option<std::path::PathBuf>,
}

/// Runs `validate` and returns its exit code (see [`crate::exit_code`]).
///
/// It owns the process it runs in: it becomes a child subreaper, ends every child it finds
/// that is not one of its servers (escaped descendants), and exits on SIGINT, SIGTERM and
/// SIGHUP; call it from a process of its own (the `mcp-conformance` binary does).
pub fn main(args: ValidateArgs) -> u8 {
    let code = run(args);
    if terminal::stderr_failed() && code == exit_code::SUCCESS {
        exit_code::HARNESS_FAULT
    } else {
        code
    }
}

/// Prints an error line: secrets scrubbed, control characters escaped.
fn error(message: &str) {
    terminal::eprint(&format!("error: {}", redact::scrub(message)));
}

fn run(args: ValidateArgs) -> u8 {
    timeline::start();
    let code = run_timed(args);
    if let Err(why) = timeline::write() {
        error(&why);
        return exit_code::HARNESS_FAULT;
    }
    code
}

fn run_timed(args: ValidateArgs) -> u8 {
    let job = match prepare(&args) {
        Ok(job) => job,
        Err(message) => {
            error(&message);
            return exit_code::USAGE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            error(&format!("cannot start the async runtime: {e}"));
            return exit_code::HARNESS_FAULT;
        }
    };
    // Escaped descendants of the servers become this process's children, to be ended.
    reaper::become_subreaper();
    match watch_signals(&runtime) {
        Ok(watch) => drop(runtime.spawn(watch)),
        Err(e) => {
            error(&format!("cannot watch for signals: {e}"));
            return exit_code::HARNESS_FAULT;
        }
    }
    let progress = job.targets.len() > 1 || args.config.is_some();
    let mut reports = Vec::new();
    let count = job.targets.len();
    for (index, (name, config_name, target)) in job.targets.iter().enumerate() {
        if progress {
            terminal::eprint(&redact::scrub(&format!(
                "[{}/{count}] {name}: validating {}",
                index + 1,
                target.describe()
            )));
        }
        let mut report = runtime.block_on(validate_one(&job, name, config_name.as_deref(), target));
        reaper::sweep(std::time::Duration::from_secs(1));
        report::scrub(&mut report, redact::scrub);
        if let Some(why) = &report.unreachable {
            error(&format!(
                "cannot reach {}: {why}",
                if progress {
                    report.name.as_str()
                } else {
                    "the server"
                }
            ));
        } else if progress {
            terminal::eprint(&format!(
                "[{}/{count}] {}: {} ({} ms)",
                index + 1,
                report.name,
                report.summary.line(),
                report.millis
            ));
        }
        reports.push(report);
    }
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    let single_unreachable = reports.len() == 1 && reports[0].unreachable.is_some();
    if !single_unreachable {
        if let Err(why) = terminal::print(&report::table(&reports)) {
            error(&why);
            return exit_code::HARNESS_FAULT;
        }
    }
    for (path, text) in [
        (&args.json, report::json(&reports)),
        (&args.junit, report::junit(&reports)),
    ] {
        if let Some(path) = path {
            if let Err(e) = std::fs::write(path, text) {
                error(&format!("cannot write {}: {e}", path.display()));
                return exit_code::HARNESS_FAULT;
            }
        }
    }
    exit_code_of(&reports)
}

/// Registers SIGINT, SIGTERM and SIGHUP (before any server starts) and returns the task that,
/// on the first of them, kills every server group, ends escaped descendants and exits with
/// [`exit_code::SIGNALLED`] plus the signal's number.
fn watch_signals(
    runtime: &tokio::runtime::Runtime,
) -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let _entered = runtime.enter();
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    Ok(async move {
        let (name, number) = tokio::select! {
            _ = interrupt.recv() => ("SIGINT", libc::SIGINT),
            _ = terminate.recv() => ("SIGTERM", libc::SIGTERM),
            _ = hangup.recv() => ("SIGHUP", libc::SIGHUP),
        };
        let groups = reaper::kill_all();
        let escaped = reaper::sweep(std::time::Duration::from_secs(1));
        error(&format!("interrupted by {name}: {groups} server process group(s) and {escaped} other process(es) ended"));
        std::process::exit(i32::from(exit_code::SIGNALLED) + number);
    })
}

/// The run's exit code: a harness fault, then an unreachable target, then failures.
fn exit_code_of(reports: &[TargetReport]) -> u8 {
    let all = || reports.iter().flat_map(|r| r.checks.iter());
    if all().any(|c| c.status == Status::HarnessFault) {
        exit_code::HARNESS_FAULT
    } else if reports.iter().any(|r| r.unreachable.is_some()) {
        exit_code::UNREACHABLE
    } else if all().any(|c| c.status.fails_run()) {
        exit_code::FAILURES
    } else {
        exit_code::SUCCESS
    }
}

fn prepare(args: &ValidateArgs) -> Result<Job, String> {
    let modes = usize::from(!args.command.is_empty())
        + usize::from(args.url.is_some())
        + usize::from(args.config.is_some());
    if modes != 1 {
        return Err(
            "name one server: a command after `--`, --url URL, or --config FILE [NAME...]".into(),
        );
    }
    if !args.names.is_empty() && args.config.is_none() {
        return Err(format!(
            "`{}` given without --config (a command goes after `--`)",
            args.names[0]
        ));
    }
    if !args.env.is_empty() && args.command.is_empty() {
        return Err("--env applies to a command given after `--`".into());
    }
    if !args.headers.is_empty() && args.url.is_none() {
        return Err("--header applies to --url".into());
    }
    let ca_cert = match &args.ca_cert {
        Some(_) if !args.command.is_empty() => {
            return Err("--ca-cert applies to https targets (--url or --config)".into())
        }
        Some(path) => {
            let pem = mcp_mock_servers::files::read_capped(
                path,
                mcp_mock_servers::files::MAX_INPUT_BYTES,
            )
            .map_err(|e| format!("cannot read --ca-cert {}: {e}", path.display()))?;
            http::check_ca_cert(&pem).map_err(|e| format!("--ca-cert {} {e}", path.display()))?;
            Some(pem)
        }
        None => None,
    };
    for revision in &args.revisions {
        if !schema::REVISIONS.contains(&revision.as_str()) && revision != schema::STATELESS {
            return Err(format!(
                "--revision `{revision}` is not one of {}, {}",
                schema::REVISIONS.join(", "),
                schema::STATELESS
            ));
        }
    }
    let selected: Vec<&'static str> = checks::ALL
        .iter()
        .copied()
        .filter(|id| args.only.is_empty() || args.only.iter().any(|p| id.starts_with(p.as_str())))
        .collect();
    if selected.is_empty() {
        return Err(format!(
            "--only {} matches no check (they start with `server.`)",
            args.only.join(", ")
        ));
    }
    let baseline = match &args.baseline {
        Some(path) => Baseline::load(path, checks::ALL)?,
        None => Baseline::default(),
    };
    for (_, value) in target::parse_env(&args.env).unwrap_or_default() {
        redact::env_value(&value);
    }
    let targets: Vec<(String, Option<String>, Target)> = if let Some(config) = &args.config {
        target::load_config(config, &args.names)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|(name, target)| (name.clone(), Some(name), target))
            .collect()
    } else if let Some(url) = &args.url {
        redact::url(url);
        match url::Url::parse(url) {
            Ok(parsed)
                if matches!(parsed.scheme(), "http" | "https") && parsed.host_str().is_some() => {}
            Ok(parsed) => {
                return Err(format!(
                    "--url {} is not an http or https URL",
                    redact::public_url(parsed.as_str())
                ))
            }
            // The text may hold credentials and did not parse: it is not shown.
            Err(e) => return Err(format!("--url is not a valid URL: {e}")),
        }
        let headers = target::parse_headers(&args.headers).map_err(|e| e.to_string())?;
        for (_, value) in &headers {
            redact::header_value(value);
        }
        http::check_headers(&headers)?;
        let target = Target::Http {
            url: url.clone(),
            headers,
        };
        vec![(target.describe(), None, target)]
    } else {
        let env = target::parse_env(&args.env).map_err(|e| e.to_string())?;
        let target = Target::Stdio {
            command: args.command[0].clone(),
            args: args.command[1..].to_vec(),
            env,
        };
        vec![(target.describe(), None, target)]
    };
    for (_, _, target) in &targets {
        match target {
            Target::Http { url, headers } => {
                redact::url(url);
                headers
                    .iter()
                    .for_each(|(_, value)| redact::header_value(value));
            }
            Target::Stdio { env, .. } => env.iter().for_each(|(_, value)| redact::env_value(value)),
        }
    }
    let mut revisions = args.revisions.clone();
    revisions.dedup();
    let auto = revisions.is_empty();
    if auto {
        revisions = vec![schema::STATELESS.to_string(), LATEST.to_string()];
    }
    let plan = Plan {
        selected,
        revisions,
        timeout: args.timeout,
        ca_cert,
        call_tools: args.call_tools.clone(),
        probed: None,
    };
    Ok(Job {
        targets,
        plan,
        strict: args.strict,
        baseline,
        auto,
        config: args.config.clone(),
    })
}

async fn validate_one(
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
    let found = run_target(job, &plan, target).await;
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
async fn run_target(
    job: &Job,
    plan: &Plan,
    target: &Target,
) -> Result<Vec<Found>, checks::Unreachable> {
    let mut modern = plan.clone();
    modern.selected.retain(|id| stateless::applies(id));
    // By default `server/discover` is asked whatever was selected: it says whether the
    // server's refusal of `initialize` is a failure or not its revision.
    let run_modern = job.auto
        || plan.revisions.iter().any(|r| r == schema::STATELESS) && !modern.selected.is_empty();
    let mut legacy = plan.clone();
    legacy.revisions.retain(|r| r != schema::STATELESS);
    legacy.selected.retain(|id| !stateless::OWN.contains(id));
    let run_legacy = !legacy.revisions.is_empty() && !legacy.selected.is_empty();
    // By default the handshake's answer decides whether the server claims 2025-11-25 at all.
    let result_asked = plan.wants(checks::initialize::RESULT);
    if job.auto && !result_asked {
        legacy.selected.push(checks::initialize::RESULT);
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
    let probe_took = Arc::new(std::sync::Mutex::new(None::<std::time::Duration>));
    legacy.probed = Some(probed.clone());
    let probe_watch = {
        let (probed, finished, probe_took) = (probed.clone(), finished.clone(), probe_took.clone());
        async move {
            if run_legacy {
                tokio::select! {
                    () = probed.notified() => {}
                    () = finished.notified() => {}
                }
                *probe_took.lock().unwrap_or_else(|e| e.into_inner()) = Some(run_started.elapsed());
            }
        }
    };
    let gate = {
        let probe_took = probe_took.clone();
        let stdio = target.is_stdio();
        async move {
            while run_legacy
                && !stdio
                && probe_took
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .is_none()
            {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
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
                let took = probe_took
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .unwrap_or_default();
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
            (true, Target::Stdio { .. }) => Some(checks::run_stdio(target, &legacy, spare).await),
            (true, Target::Http { .. }) => Some(checks::http::run_http(target, &legacy).await),
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
        Some(Ok(stateless::Spoken::No(why))) if !job.auto || plan.wants(stateless::DISCOVER) => {
            found.push(Found::new(
                stateless::DISCOVER,
                schema::STATELESS,
                stateless::does_not_speak(&why),
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
                    if f.id == checks::initialize::RESULT
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
                            checks::initialize::RESULT,
                            LATEST,
                            Finding::skip(reason),
                            0,
                        ));
                    }
                }
                _ => found.extend(
                    legacy_found
                        .into_iter()
                        .filter(|f| result_asked || f.id != checks::initialize::RESULT),
                ),
            }
        }
        Some(Err(why)) if speaks && plan.wants(checks::initialize::RESULT) && !job.auto => {
            let reason =
                format!("the server speaks 2026-07-28 and answers no `initialize` ({why})");
            for revision in &legacy.revisions {
                found.push(Found::new(
                    checks::initialize::RESULT,
                    revision.clone(),
                    Finding::skip(reason.clone()),
                    0,
                ));
            }
        }
        Some(Err(_)) if speaks => {}
        Some(Err(why)) => return Err(why),
    }
    checks::sort(&mut found);
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
