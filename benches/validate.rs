//! `cargo bench --bench validate`: how long `mcp-conformance validate` takes on a real
//! server, beside how long that server takes to start, in one run.
//!
//! Needs `bash tests/validate/install-servers.sh` first (server-everything from npm).
//! Prints the minimum, median and maximum of several runs of each:
//! - startup: `validate --only server.initialize.result` (one handshake),
//! - full: every check (`--strict` with the checked-in baseline), by default (2026-07-28,
//!   which server-everything does not speak: one `server/discover` beside the rest, and
//!   2025-11-25),
//! - every check at `--revision 2025-11-25` alone (the default before 2026-07-28 joined it).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 7;

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let server = root.join("target/validate-servers/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !server.is_file() {
        eprintln!("server-everything is not installed: run `bash tests/validate/install-servers.sh` first");
        std::process::exit(1);
    }
    let baseline = root.join("tests/validate/baseline/server-everything.toml");
    let server = server.display().to_string();
    let startup = measure(&["validate", "--only", "server.initialize.result", "--", "node", &server, "stdio"]);
    let baseline = baseline.display().to_string();
    let full = measure(&["validate", "--strict", "--baseline", &baseline, "--", "node", &server, "stdio"]);
    let legacy =
        measure(&["validate", "--strict", "--revision", "2025-11-25", "--baseline", &baseline, "--", "node", &server, "stdio"]);
    println!("validate on @modelcontextprotocol/server-everything over stdio, {RUNS} runs each");
    println!("{:<34} {:>8} {:>8} {:>8}", "", "min", "median", "max");
    for (name, times) in
        [("startup (one handshake)", &startup), ("every check", &full), ("every check, 2025-11-25 alone", &legacy)]
    {
        println!("{:<34} {:>8} {:>8} {:>8}", name, secs(times[0]), secs(times[RUNS / 2]), secs(times[RUNS - 1]));
    }
    println!("every check, beyond startup (median): {}", secs(full[RUNS / 2].saturating_sub(startup[RUNS / 2])));
}

/// Runs `mcp-conformance ARGS` RUNS times; the sorted wall times. A run that fails stops the
/// bench: a figure of a failing run means nothing.
fn measure(args: &[&str]) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let output = Command::new(env!("CARGO_BIN_EXE_mcp-conformance")).args(args).output().expect("mcp-conformance runs");
            let elapsed = started.elapsed();
            if !output.status.success() {
                eprintln!("{}", String::from_utf8_lossy(&output.stdout));
                eprintln!("{}", String::from_utf8_lossy(&output.stderr));
                panic!("`mcp-conformance {}` failed: {}", args.join(" "), output.status);
            }
            elapsed
        })
        .collect();
    times.sort();
    times
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}
