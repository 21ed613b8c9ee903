//! `mcp-conformance validate`: checks a third-party MCP server against the server rules of
//! the registry (`kind = "server"` in `validator/src/rules.toml`) and reports which it keeps.
//!
//! Use it on your own server in CI: point it at a command (stdio), a URL (Streamable HTTP) or
//! a config file, read the table, keep known deviations in a baseline file with their reasons.
//!
//! ```no_run
//! use clap::Parser;
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     args: mcp_validator::ValidateArgs,
//! }
//! let cli = Cli::parse_from(["validate", "--strict", "--", "node", "server.js"]);
//! std::process::exit(i32::from(mcp_validator::main(cli.args)));
//! ```
//!
//! Pieces, one job each: [`cli`] (options), [`target`] (command, URL, config file),
//! [`stdio`] (a raw, bounded stdio session), [`http`] (a raw, bounded Streamable HTTP
//! session), [`log`] (what each session saw), [`checks`] (the session API the checks run on,
//! the checks by area, and the plan that runs them), [`schema`] (the embedded wire schemas),
//! [`baseline`], [`outcome`] (findings and statuses) and [`report`] (table, JSON, JUnit).
//! Below them all, shared with the runner of `mcp-conformance`: [`rules`] (the rule
//! registry), [`terminal`] (what reaches a terminal) and [`exit_code`].

pub mod baseline;
pub mod checks;
pub mod cli;
pub mod declared;
pub mod exchange;
pub mod exit_code;
pub mod fixtures;
pub mod http;
mod job;
pub mod log;
pub mod loopback;
pub mod oauth;
pub mod outcome;
pub mod patience;
pub mod reaper;
pub mod redact;
pub mod report;
pub mod rules;
mod run;
pub mod schema;
pub mod spare;
pub mod stdio;
pub mod target;
pub mod terminal;
pub mod text;
pub mod timeline;
pub mod weight;

pub use cli::ValidateArgs;

pub use schema::LATEST;

use job::prepare;
use outcome::Status;
use report::TargetReport;
use run::validate_one;

/// Runs `validate` and returns its exit code (see [`crate::exit_code`]).
///
/// It owns the process it runs in: it becomes a child subreaper, ends every child it finds
/// that is not one of its servers (escaped descendants), and exits on SIGINT, SIGTERM and
/// SIGHUP; call it from a process of its own (the `mcp-conformance` binary does).
pub fn main(args: ValidateArgs) -> u8 {
    main_with(args, |_| Ok(()))
}

/// [`main`], handing the finished (scrubbed) reports to `also` after the table, JSON and
/// JUnit reports were written: another report of them (the CLI's HTML report). Its error is
/// a harness fault.
pub fn main_with(
    args: ValidateArgs,
    also: impl FnOnce(&[TargetReport]) -> Result<(), String>,
) -> u8 {
    let code = run(args, also);
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

fn run(args: ValidateArgs, also: impl FnOnce(&[TargetReport]) -> Result<(), String>) -> u8 {
    timeline::start();
    let code = run_timed(args, also);
    if let Err(why) = timeline::write() {
        error(&why);
        return exit_code::HARNESS_FAULT;
    }
    code
}

fn run_timed(args: ValidateArgs, also: impl FnOnce(&[TargetReport]) -> Result<(), String>) -> u8 {
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
    if let Err(why) = also(&reports) {
        error(&why);
        return exit_code::HARNESS_FAULT;
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

/// The run's exit code: a harness fault, then an unreachable target, then failures, then
/// checks that only ran out of time.
fn exit_code_of(reports: &[TargetReport]) -> u8 {
    let all = || reports.iter().flat_map(|r| r.checks.iter());
    if all().any(|c| c.status == Status::HarnessFault) {
        exit_code::HARNESS_FAULT
    } else if reports.iter().any(|r| r.unreachable.is_some()) {
        exit_code::UNREACHABLE
    } else if all().any(|c| c.status.fails_run()) {
        exit_code::FAILURES
    } else if all().any(|c| c.status == Status::Inconclusive) {
        exit_code::INCONCLUSIVE
    } else {
        exit_code::SUCCESS
    }
}
