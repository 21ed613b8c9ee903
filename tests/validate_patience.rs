//! Verdicts that hold under load: a server slow to start is judged, not failed; one that
//! never answers is unreachable at every revision; and a real server gets the same verdicts
//! on a quiet machine and beside a CPU hog on every core, at the default `--timeout`.

use cpu_hog::CpuHog;
use rstest::rstest;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

#[path = "support/cpu_hog.rs"]
#[allow(dead_code)]
mod cpu_hog;
#[path = "validate/servers.rs"]
mod servers;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-conformance");

/// How long the CPU hog may run at most, whatever happens to the test: `timeout` ends it.
const HOG_BOUND: u32 = 600;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `validate ARGS -- COMMAND` with `--json`, `env` set for the server: the exit code, the
/// report (`Null` when none was written) and the terminal output.
fn validate(args: &[&str], env: &[(&str, &str)], command: &[String]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let output: Output = Command::new(BIN)
        .arg("validate")
        .arg("--json")
        .arg(&json)
        .args(args)
        .arg("--")
        .args(command)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let shown = format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let report = std::fs::read_to_string(&json)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    (output.status.code().unwrap_or(-1), report, shown)
}

/// Every check's `(id, revision, status)`.
fn verdicts(report: &Value) -> Vec<(String, String, String)> {
    report["targets"][0]["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let field = |name: &str| c[name].as_str().unwrap_or_default().to_string();
            (field("id"), field("revision"), field("status"))
        })
        .collect()
}

fn slow_start_server() -> Vec<String> {
    vec![
        "python3".into(),
        root()
            .join("tests/validate/slow_start_server.py")
            .display()
            .to_string(),
    ]
}

/// Six seconds to answer `initialize`, in every one of its launches, at the default 10 s:
/// every check is judged on its merits (one should-rule warns: the server answers a cursor it
/// never issued), none failed and none inconclusive.
#[test]
fn a_server_that_takes_six_seconds_to_start_is_judged_not_failed() {
    let (code, report, shown) = validate(&[], &[("SLOW_START_S", "6")], &slow_start_server());
    assert_eq!(code, 0, "{shown}");
    let verdicts = verdicts(&report);
    let status = |id: &str| {
        verdicts
            .iter()
            .find(|(i, _, _)| i == id)
            .map_or("absent", |(_, _, s)| s.as_str())
    };
    for id in [
        "server.initialize.result",
        "server.initialize.negotiates",
        "server.ping",
        "server.tools.list",
        "server.concurrent",
    ] {
        assert_eq!(status(id), "pass", "{id}: {shown}");
    }
    assert_eq!(status("server.pagination.bogus-cursor"), "warn", "{shown}");
    let unjudged: Vec<_> = verdicts
        .iter()
        .filter(|(_, _, s)| s == "fail" || s == "inconclusive")
        .collect();
    assert!(unjudged.is_empty(), "{unjudged:?}\n{shown}");
}

/// A server whose start-up takes 1.5 s and whose answer to the 2026-07-28 session's
/// `server/discover` (-32601: a server of the `initialize` era) comes 2.5 s late, at
/// `--timeout 2s`: the discover waits as long as the probe's start-up says this server needs,
/// so the server is heard not to speak 2026-07-28, instead of "not judged" for lack of time.
#[test]
fn a_late_discover_answer_is_waited_for_as_long_as_a_handshake() {
    let (code, report, shown) = validate(
        &[
            "--timeout",
            "2s",
            "--only",
            "server.discover",
            "--only",
            "server.ping",
        ],
        &[("SLOW_START_S", "1.5"), ("DISCOVER_S", "2.5")],
        &slow_start_server(),
    );
    assert_eq!(code, 0, "{shown}");
    let discover = report["targets"][0]["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["id"] == "server.discover")
        .cloned()
        .unwrap_or_default();
    let note = discover["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("does not speak 2026-07-28") && note.contains("-32601"),
        "{discover}\n{shown}"
    );
}

/// A Streamable HTTP server whose first `initialize` takes 0.7 s and every later one 1.4 s,
/// at `--timeout 1s`: the later handshakes (one a revision offered, at once) wait as long as
/// the probe's first answer says this server needs, and are judged, not inconclusive.
#[test]
fn an_http_server_slower_on_later_handshakes_than_the_timeout_is_judged_not_failed() {
    let mut server = Command::new("python3")
        .arg(root().join("tests/validate/slow_http_server.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut url,
    )
    .unwrap();
    let started = Instant::now();
    let (code, report, shown) = validate(
        &[
            "--timeout",
            "1s",
            "--only",
            "server.initialize.negotiates",
            "--url",
            url.trim(),
        ],
        &[],
        &[],
    );
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(code, 0, "{shown}");
    assert_eq!(
        verdicts(&report)
            .into_iter()
            .map(|(id, _, status)| (id, status))
            .collect::<Vec<_>>(),
        [(
            "server.initialize.negotiates".to_string(),
            "pass".to_string()
        )],
        "{shown}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// A server that never answers is unreachable (exit 4), never a pass or a failure, whichever
/// revision is asked.
#[rstest]
fn a_server_that_never_answers_is_unreachable_at_every_revision(
    #[values(None, Some("2024-11-05"), Some("2025-11-25"), Some("2026-07-28"))] revision: Option<
        &str,
    >,
) {
    let mut args = vec!["--timeout", "1s"];
    args.extend(revision.iter().flat_map(|r| ["--revision", r]));
    let started = Instant::now();
    let (code, _, shown) = validate(&args, &[("SLOW_START_S", "never")], &slow_start_server());
    assert_eq!(code, 4, "{revision:?}: {shown}");
    assert!(shown.contains("cannot reach"), "{revision:?}: {shown}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{revision:?}: took {:?}",
        started.elapsed()
    );
}

/// server-everything at the default `--timeout`, quiet and then beside a busy process on
/// every core: the same verdict for every check.
#[test]
fn a_real_server_gets_the_same_verdicts_quiet_and_beside_a_cpu_hog() {
    let entry = servers::installed(root())
        .join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let command = vec!["node".into(), entry.display().to_string(), "stdio".into()];
    let baseline = root().join("tests/validate/baseline/server-everything.toml");
    let args = ["--baseline", baseline.to_str().unwrap()];
    let (quiet_code, quiet, quiet_shown) = validate(&args, &[], &command);
    let hog = CpuHog::start(HOG_BOUND);
    let (loaded_code, loaded, loaded_shown) = validate(&args, &[], &command);
    drop(hog);
    assert_eq!(quiet_code, 0, "{quiet_shown}");
    assert_eq!(
        verdicts(&quiet),
        verdicts(&loaded),
        "quiet:\n{quiet_shown}\nloaded:\n{loaded_shown}"
    );
    assert_eq!(loaded_code, quiet_code, "{loaded_shown}");
}
