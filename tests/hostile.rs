//! Hostile servers and hostile files: the validator's and the runner's promises under attack.
//!
//! Each file under `tests/hostile/stdio/` and `tests/hostile/http/` is one kind of hostile
//! server (adding a kind is adding a file); its header states the exit code the validator
//! must give (`# exit: N`) and, optionally, what it must say (`# says: ...`, on stdout or
//! stderr), what it must never say (`# never-says: ...`) and more `validate` arguments
//! (`# args: --revision 2026-07-28`). Each file under `tests/hostile/drivers/` is a hostile driver, run by
//! `run --client` over the scenarios of [`DRIVER_PREFIX`], with the same header and promises
//! (the run within [`DRIVER_RUN_BOUND`]), and no forged line in any report. Every
//! server case is run with its `--timeout` (`# timeout: N` seconds, else [`TIMEOUT`]) and
//! asserted on:
//! - the exit code;
//! - wall time: the run within [`run_bound`], each check's own time within [`check_bound`];
//! - peak RSS of the validator (and what it reaped) under [`RSS_BOUND_MIB`];
//! - no secret (an `--env` value, a `--header` value, URL credentials) in stdout, stderr,
//!   the JSON or the JUnit report;
//! - no raw control character on the terminal (stdout, stderr);
//! - no process left: every process carrying the case's mark in its environment is gone.
//!
//! One trial per file, named by its path under `tests/hostile/` (`cargo test --test hostile
//! stdio/` runs the stdio cases). The cases mostly wait (on their `--timeout`, on a server
//! that stalls): several run per core unless `--test-threads` says otherwise.

#[path = "hostile/support.rs"]
mod support;
#[path = "support/trials.rs"]
mod trials;

use libtest_mimic::Trial;
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::*;

/// The scenarios every hostile driver is run over: a whole folder, as a client author runs.
const DRIVER_PREFIX: &str = "stdio/";

/// A hostile driver's run over [`DRIVER_PREFIX`]: each scenario ends at the driver's first
/// fault, once its process group is killed; Python starts slowly on a loaded 2-core machine.
const DRIVER_RUN_BOUND: Duration = Duration::from_secs(60);

/// What a forging driver's texts hold after a newline (see `drivers/forged-lines.py`).
const FORGED: &[&str] = &["FORGED-LINE", "99 passed"];

fn main() {
    // The trials wait on servers and bounds far more than they compute.
    let args = trials::waiting_trials(3);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile");
    let mut trials = Vec::new();
    for (folder, case) in [
        ("stdio", stdio_server as fn(PathBuf)),
        ("http", http_server),
        ("drivers", driver),
    ] {
        for script in cases(&root.join(folder)) {
            let name = format!(
                "{folder}/{}",
                script.file_name().unwrap_or_default().to_string_lossy()
            );
            trials.push(Trial::test(name, move || {
                case(script);
                Ok(())
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The `.py` files of `folder`, those whose name starts with `_` (shared code) left out, in
/// name order.
fn cases(folder: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .map(|entry| entry.expect("a folder entry").path())
        .filter(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            name.ends_with(".py") && !name.starts_with('_')
        })
        .collect();
    found.sort();
    found
}

/// A hostile stdio server cannot break a promise of `validate`.
fn stdio_server(script: PathBuf) {
    let case = Case::read(&script);
    let run = Run::validate(
        &case,
        &[
            "--env",
            &format!("API_KEY={ENV_SECRET}"),
            "--",
            python(),
            "-S",
        ],
        &script,
        None,
    );
    run.assert_promises(&case);
}

/// A hostile HTTP server cannot break a promise of `validate`, given a URL and a header
/// that carry secrets.
fn http_server(script: PathBuf) {
    let case = Case::read(&script);
    let server = HttpServer::start(&script);
    let url = format!(
        "http://{URL_USER}:{URL_PASSWORD}@127.0.0.1:{}/mcp?token={URL_TOKEN}",
        server.port
    );
    let header = format!("Authorization: Bearer {HEADER_SECRET}");
    let run = Run::validate(
        &case,
        &["--url", &url, "--header", &header],
        &script,
        Some(&server),
    );
    run.assert_promises(&case);
}

/// A hostile driver cannot break a promise of `run --client`.
fn driver(script: PathBuf) {
    let case = Case::read(&script);
    let run = Run::client(&script, DRIVER_PREFIX);
    run.assert_no_forged_line(&case, FORGED);
    run.assert_promises_within(&case, DRIVER_RUN_BOUND);
}
