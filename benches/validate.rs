//! `cargo bench --bench validate`: how long `mcp-conformance validate` takes on a real
//! server, beside how long that server takes to start, in one run.
//!
//! Needs `bash tests/validate/install-servers.sh` first (server-everything from npm).
//! The rows run interleaved (one run of each in turn, [`RUNS`] rounds), so a load that
//! drifts during the bench moves every row alike; each prints min, median and max of its
//! wall time and of its CPU (user + system of the whole process tree):
//! - server start-up: the server alone, from its spawn to its answer to `initialize` (no
//!   validator): the start-up the goals are judged against,
//! - one handshake: `validate --only server.initialize.result` (the validator's own start,
//!   and the 2026-07-28 probe's server, which every default run starts beside the
//!   `initialize` probe: two start-ups),
//! - the 22 checks the validator had before the feature checks (handshake, negotiation,
//!   wire schema, ping, tools/list, JSON-RPC and stdio rules; the HTTP ones skip), by default,
//! - every check by default (2026-07-28, which server-everything does not speak: one
//!   `server/discover` beside the rest, and 2025-11-25), `--strict` with the checked-in
//!   baseline,
//! - every check at `--revision 2025-11-25` alone.
//!
//! Then each row's median beyond the server's start-up against its goal (issue 14: the 22
//! checks within start-up plus 0.5 s; issue 13: every check within start-up plus 1 s), and
//! beyond the one-handshake row for comparison, the load average
//! before and after, and the slowest checks of the every-check runs (median of each check's
//! own wall time, from `--json`).

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 7;

/// The checks the validator had before issue 13's feature checks.
const ORIGINAL: [&str; 22] = [
    "server.initialize.result",
    "server.initialize.negotiates",
    "server.schema.valid",
    "server.ping",
    "server.tools.list",
    "server.tools.unknown",
    "server.jsonrpc.unknown-method",
    "server.jsonrpc.parse-error",
    "server.jsonrpc.notification-silent",
    "server.capabilities.honest",
    "server.stdio.clean-stdout",
    "server.stdio.exits-on-close",
    "server.http.notification-202",
    "server.http.accept-required",
    "server.http.session-id-ascii",
    "server.http.unknown-session-404",
    "server.http.missing-session-400",
    "server.http.delete",
    "server.http.protocol-version-header",
    "server.http.origin",
    "server.http.get-stream",
    "server.http.batch",
];

/// One row: its name, the arguments before `--` (none: the server alone), and the most it
/// may take beyond the server's start-up.
struct Row {
    name: &'static str,
    args: Option<Vec<String>>,
    goal: Option<Duration>,
    /// Whether its per-check times are collected.
    per_check: bool,
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let server = root.join("target/validate-servers/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !server.is_file() {
        eprintln!("server-everything is not installed: run `bash tests/validate/install-servers.sh` first");
        std::process::exit(1);
    }
    let baseline = root
        .join("tests/validate/baseline/server-everything.toml")
        .display()
        .to_string();
    let strict = |extra: &[&str]| {
        let mut args: Vec<String> = ["--strict", "--baseline", &baseline]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let original: Vec<&str> = ORIGINAL.iter().flat_map(|id| ["--only", id]).collect();
    let rows = [
        Row {
            name: "server start-up (no validator)",
            args: None,
            goal: None,
            per_check: false,
        },
        Row {
            name: "one handshake (validate)",
            args: Some(strict(&["--only", "server.initialize.result"])),
            goal: None,
            per_check: false,
        },
        Row {
            name: "the 22 original checks",
            args: Some(strict(&original)),
            goal: Some(Duration::from_millis(500)),
            per_check: false,
        },
        Row {
            name: "every check",
            args: Some(strict(&[])),
            goal: Some(Duration::from_secs(1)),
            per_check: true,
        },
        Row {
            name: "every check, 2025-11-25 alone",
            args: Some(strict(&["--revision", "2025-11-25"])),
            goal: Some(Duration::from_secs(1)),
            per_check: false,
        },
    ];
    let json =
        std::env::temp_dir().join(format!("mcp-conformance-bench-{}.json", std::process::id()));
    let load_before = load();
    let mut times = vec![Vec::new(); rows.len()];
    let mut cpus = vec![Vec::new(); rows.len()];
    let mut checks: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for _ in 0..RUNS {
        for ((row, times), cpus) in rows.iter().zip(&mut times).zip(&mut cpus) {
            let cpu_before = children_cpu();
            let Some(row_args) = &row.args else {
                times.push(bare_startup(&server));
                cpus.push(children_cpu() - cpu_before);
                continue;
            };
            let mut args: Vec<String> = vec!["validate".into()];
            args.extend(row_args.iter().cloned());
            if row.per_check {
                args.extend(["--json".to_string(), json.display().to_string()]);
            }
            args.extend([
                "--".to_string(),
                "node".to_string(),
                server.display().to_string(),
                "stdio".to_string(),
            ]);
            times.push(run(&args));
            cpus.push(children_cpu() - cpu_before);
            if row.per_check {
                for (check, millis) in per_check(&json) {
                    checks.entry(check).or_default().push(millis);
                }
            }
        }
    }
    let _ = std::fs::remove_file(&json);
    let load_after = load();
    times.iter_mut().for_each(|t| t.sort());
    cpus.iter_mut().for_each(|t| t.sort());
    let median = |t: &Vec<Duration>| t[RUNS / 2];
    let (startup, handshake) = (median(&times[0]), median(&times[1]));
    println!("validate on @modelcontextprotocol/server-everything over stdio, {RUNS} interleaved runs each");
    println!(
        "load average (1 min) {load_before} before, {load_after} after, on {} cores",
        cores()
    );
    println!("goals beyond the server's start-up (spawn to `initialize` answered); beyond the one-handshake row beside it");
    println!(
        "{:<32} {:>7} {:>7} {:>7}   {:>7} {:>7} {:>7}   {:>9} {:>9}  goal",
        "", "min", "median", "max", "cpu min", "median", "max", "+start-up", "+1 hshake"
    );
    for ((row, t), c) in rows.iter().zip(&times).zip(&cpus) {
        let beyond = median(t).saturating_sub(startup);
        let (goal, beyond, beyond_handshake) = match row.goal {
            None => (String::new(), String::new(), String::new()),
            Some(goal) => (
                format!(
                    "+{} {}",
                    secs(goal),
                    if beyond <= goal { "met" } else { "NOT met" }
                ),
                format!("+{}", secs(beyond)),
                format!("+{}", secs(median(t).saturating_sub(handshake))),
            ),
        };
        println!(
            "{:<32} {:>7} {:>7} {:>7}   {:>7} {:>7} {:>7}   {beyond:>9} {beyond_handshake:>9}  {goal}",
            row.name,
            secs(t[0]),
            secs(median(t)),
            secs(t[RUNS - 1]),
            secs(c[0]),
            secs(median(c)),
            secs(c[RUNS - 1]),
        );
    }
    let mut slowest: Vec<(u64, String)> = checks
        .into_iter()
        .map(|(check, mut millis)| {
            millis.sort_unstable();
            (millis[millis.len() / 2], check)
        })
        .collect();
    slowest.sort_by(|a, b| b.cmp(a));
    println!("slowest checks of `every check` (median of each check's own wall time, launch included where it has one):");
    for (millis, check) in slowest.iter().take(10) {
        println!("  {millis:>6} ms  {check}");
    }
}

/// Runs `mcp-conformance ARGS` once; its wall time. A run that fails stops the bench: a
/// figure of a failing run means nothing.
fn run(args: &[String]) -> Duration {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-conformance"))
        .args(args)
        .output()
        .expect("mcp-conformance runs");
    let elapsed = started.elapsed();
    if !output.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&output.stdout));
        eprintln!("{}", String::from_utf8_lossy(&output.stderr));
        panic!(
            "`mcp-conformance {}` failed: {}",
            args.join(" "),
            output.status
        );
    }
    elapsed
}

/// The server alone: spawned, asked `initialize`, timed until its answer's line; then its
/// stdin is closed and it is waited for (not timed).
fn bare_startup(server: &Path) -> Duration {
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
    let started = Instant::now();
    let mut child = Command::new("node")
        .arg(server)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("node starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    writeln!(stdin, "{initialize}").expect("the server reads its stdin");
    let mut answer = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout is piped"))
        .read_line(&mut answer)
        .expect("the server answers");
    let elapsed = started.elapsed();
    assert!(
        answer.contains("protocolVersion"),
        "the server answered `initialize` with {answer}"
    );
    drop(stdin);
    child.wait().expect("the server exits");
    elapsed
}

/// User plus system CPU of this process's reaped children (and theirs).
fn children_cpu() -> Duration {
    mcp_conformance::validate::timeline::cpu_time(libc::RUSAGE_CHILDREN)
}

/// Each check's `id@revision` and wall time from a `--json` report.
fn per_check(path: &Path) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(path).expect("the JSON report was written");
    let report: Value = serde_json::from_str(&text).expect("the JSON report parses");
    report["targets"][0]["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|check| {
            let id = check["id"].as_str().unwrap_or("?");
            let revision = check["revision"].as_str().unwrap_or("?");
            (
                format!("{id}@{revision}"),
                check["millis"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// The 1-minute load average.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(0, usize::from)
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}
