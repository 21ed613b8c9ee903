//! `mcp-conformance validate`: against real third-party servers (installed on first use by
//! `tests/validate/install-servers.sh` into `target/validate-servers/`), over stdio and over
//! Streamable HTTP on 127.0.0.1, against deliberately broken scripted servers (one per check,
//! `tests/validate/broken/<check id>.toml` over stdio, `tests/validate/broken-http/<check
//! id>.toml` over HTTP), and with bad input.

use predicates::prelude::*;
use predicates::str::contains;
use rstest::rstest;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-conformance");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The checks that apply to a stdio target (every other one is `server.http.*`).
const STDIO_CHECKS: &[&str] = &[
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
];

/// The checks that apply to an HTTP target (the stdio ones are skipped there).
const HTTP_CHECKS: &[&str] = &[
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
    "server.http.sse-event-ids",
    "server.http.sse-resume",
    "server.http.sse-priming",
    "server.http.sse-retry",
];

/// The authorization checks: HTTP only, judged against a server that answers `initialize`
/// without a token with 401, skipped against one that serves it.
const AUTH_CHECKS: &[&str] = &[
    "server.auth.challenge",
    "server.auth.resource-metadata",
    "server.auth.server-metadata",
    "server.auth.pkce-s256",
    "server.auth.invalid-token-401",
    "server.auth.token-not-in-query",
    "server.auth.audience",
    "server.auth.insufficient-scope",
];

/// The checks of an authorization server judged on its own (`--authorization-server`): their
/// scripted servers are in `tests/validate/*-authorization-server/`.
const AUTHORIZATION_SERVER_CHECKS: &[&str] = &[
    "server.auth.authorization-code-grant",
    "server.auth.pkce-s256",
    "server.auth.server-metadata",
];

/// The authorization checks that need a token of their own (`--token-for-other-resource`,
/// `--token-without-scope`): their scripted servers are in `tests/validate/*-auth-tokens/`.
const AUTH_TOKEN_CHECKS: &[&str] = &["server.auth.audience", "server.auth.insufficient-scope"];

/// The token options the scripts of `tests/validate/*-auth-tokens/` are run with.
const AUTH_TOKEN_ARGS: &[&str] = &[
    "--token-for-other-resource",
    "other-resource-token-1",
    "--token-without-scope",
    "scopeless-token-1",
];

/// The feature checks (issue 13): they run over stdio and HTTP, and skip, with the reason,
/// where the server offers nothing to exercise (no prompts declared, no tool that may be
/// called, …). Each has a broken scripted server in `tests/validate/broken/` and a correct one
/// in `tests/validate/correct/`.
const FEATURE_CHECKS: &[&str] = &[
    "server.lifecycle.before-initialize",
    "server.lifecycle.second-initialize",
    "server.lifecycle.server-info",
    "server.tools.call",
    "server.tools.error-in-result",
    "server.tools.invalid-arguments",
    "server.tools.output-schema",
    "server.tools.names",
    "server.tools.annotations",
    "server.tools.schema-dialect",
    "server.prompts.list",
    "server.prompts.get",
    "server.prompts.missing-argument",
    "server.prompts.unknown",
    "server.resources.list",
    "server.resources.templates",
    "server.resources.read",
    "server.resources.unknown",
    "server.resources.subscribe",
    "server.resources.updated",
    "server.completion.complete",
    "server.logging.set-level",
    "server.logging.level-respected",
    "server.pagination.bogus-cursor",
    "server.progress",
    "server.cancellation",
    "server.concurrent",
    "server.requests.declared",
    "server.notifications.list-changed",
    "server.requests.valid",
    "server.requests.within-declared",
];

#[path = "validate/servers.rs"]
mod servers;

/// The installed third-party servers (installed on first use).
fn servers() -> PathBuf {
    servers::installed(root())
}

/// The installed server-everything entry point.
fn everything() -> Vec<String> {
    let entry =
        servers().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.is_file(),
        "server-everything is missing at {} after its install",
        entry.display()
    );
    vec!["node".into(), entry.display().to_string(), "stdio".into()]
}

/// The Python SDK server.
fn python_server() -> Vec<String> {
    let python = servers().join("venv/bin/python");
    assert!(
        python.is_file(),
        "the Python SDK venv is missing at {} after its install",
        python.display()
    );
    vec![
        python.display().to_string(),
        root()
            .join("tests/validate/python_server.py")
            .display()
            .to_string(),
    ]
}

/// The installed npm reference server `name` (`server-filesystem`), its entry point.
fn reference_server(name: &str) -> String {
    let entry = servers().join(format!(
        "node/node_modules/@modelcontextprotocol/{name}/dist/index.js"
    ));
    assert!(
        entry.is_file(),
        "{name} is missing at {} after its install",
        entry.display()
    );
    entry.display().to_string()
}

/// Every file under `dir` with its contents, to show a run changed nothing.
fn snapshot_of(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path.clone());
                files.push((path, Vec::new()));
            } else {
                let bytes = std::fs::read(&path).unwrap();
                files.push((path, bytes));
            }
        }
    }
    files.sort();
    files
}

/// A server process listening on 127.0.0.1, killed (its whole process group) when dropped.
struct Served {
    child: Child,
    url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: killpg only sends a signal, to the group spawn() created for this child.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port free on 127.0.0.1, outside the ephemeral range (see [`servers::server_port`]).
fn free_port() -> u16 {
    servers::server_port()
}

/// Starts `command` in its own process group and waits (at most 20 s) until 127.0.0.1:`port`
/// accepts connections.
fn serve(mut command: Command, port: u16, what: &str) -> Served {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let mut served = Served {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return served;
        }
        if let Ok(Some(status)) = served.child.try_wait() {
            panic!("{what} exited before listening on 127.0.0.1:{port}: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "{what} is not listening on 127.0.0.1:{port} after 20 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// server-everything in Streamable HTTP mode, forced onto 127.0.0.1 by `loopback.js` (it
/// listens on every interface by default), on a free port given in `PORT`.
fn everything_http() -> Served {
    let entry = &everything()[1];
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg("--require")
        .arg(root().join("tests/validate/loopback.js"))
        .arg(entry)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    serve(command, port, "server-everything (streamableHttp)")
}

/// The Python SDK server over Streamable HTTP on 127.0.0.1.
fn python_http() -> Served {
    let command = python_server();
    let port = free_port();
    let mut cmd = Command::new(&command[0]);
    cmd.arg(&command[1])
        .arg("streamable-http")
        .arg(port.to_string());
    serve(cmd, port, "the Python SDK server (streamable-http)")
}

/// A scripted HTTP server (`mcp-conformance mock-http`), with the lines it printed (its URL
/// first; `ca: FILE` over https).
fn mock_http(script: &Path) -> (Served, Vec<String>) {
    let mut command = Command::new(BIN);
    command.arg("mock-http").arg("--script").arg(script);
    if script_is_https(script) {
        // The CA certificate goes beside the script, not into the shared temp folder.
        command.arg("--state-dir").arg(script.parent().unwrap());
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start mcp-conformance mock-http");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    let mut line = String::new();
    while stdout.read_line(&mut line).unwrap_or(0) > 0 {
        let done =
            line.starts_with("second:") && !script_is_https(script) || line.starts_with("ca:");
        lines.push(line.trim().to_string());
        line.clear();
        if done {
            break;
        }
    }
    assert!(
        !lines.is_empty(),
        "mock-http printed no URL for {}",
        script.display()
    );
    let url = lines[0].clone();
    (Served { child, url }, lines)
}

fn script_is_https(script: &Path) -> bool {
    std::fs::read_to_string(script)
        .unwrap_or_default()
        .contains("transport = \"https\"")
}

/// `mcp-conformance validate ARGS [-- COMMAND]`, ready to run and assert on (assert_cmd).
fn validate_cmd(args: &[&str], command: &[String]) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(BIN);
    cmd.arg("validate").args(args);
    if !command.is_empty() {
        cmd.arg("--").args(command);
    }
    cmd
}

fn validate(args: &[&str], command: &[String]) -> Output {
    validate_cmd(args, command)
        .output()
        .expect("run mcp-conformance validate")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs validate with `--json` and returns the exit code, the report and the terminal output.
fn validate_json(args: &[&str], command: &[String]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let mut all = vec!["--json", json.to_str().unwrap()];
    all.extend_from_slice(args);
    let output = validate(&all, command);
    let shown = format!(
        "stdout:\n{}\nstderr:\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
    let report =
        std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("no JSON report ({e}); {shown}"));
    (
        output.status.code().unwrap_or(-1),
        serde_json::from_str(&report).unwrap(),
        shown,
    )
}

fn statuses(report: &Value) -> Vec<(String, String)> {
    report["targets"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Every stdio check ran (none skipped) and either passed or is a baseline entry. The bound on
/// each wait is 30 s, not the default 10 s: these tests judge conformance, not speed (the
/// benchmark does), and a Python server's start-up, seven at once on two busy cores, has been
/// seen to pass 10 s.
fn assert_keeps_its_baseline(command: &[String], baseline: &str) -> Value {
    let baseline = root().join("tests/validate/baseline").join(baseline);
    let (code, report, shown) = validate_json(
        &[
            "--strict",
            "--timeout",
            "30s",
            "--baseline",
            baseline.to_str().unwrap(),
        ],
        command,
    );
    assert_eq!(code, 0, "{shown}");
    let statuses = statuses(&report);
    for id in STDIO_CHECKS {
        let status = statuses
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, s)| s.as_str());
        assert!(
            matches!(status, Some("pass" | "expected_failure")),
            "{id}: {status:?}\n{shown}"
        );
    }
    for (id, status) in &statuses {
        if id.starts_with("server.http.") || id.starts_with("server.auth.") {
            assert_eq!(status, "skip", "{id}");
        }
    }
    assert_features_judged(&statuses, &shown);
    report
}

/// Every authorization check is skipped with the reason: the server answered without a token.
fn assert_needs_no_authorization(report: &Value, shown: &str) {
    let auth: Vec<&Value> = report["targets"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"].as_str().unwrap().starts_with("server.auth."))
        .collect();
    assert_eq!(auth.len(), AUTH_CHECKS.len(), "{shown}");
    for check in auth {
        assert_eq!(check["status"], "skip", "{check}");
        assert!(
            check["note"]
                .as_str()
                .unwrap()
                .starts_with("the server needs no authorization: it answered `initialize` without a token (HTTP 200)"),
            "{check}"
        );
    }
}

/// Every feature check was reported, and none failed (a skip says why it had nothing to do).
fn assert_features_judged(statuses: &[(String, String)], shown: &str) {
    for id in FEATURE_CHECKS {
        let status = statuses
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, s)| s.as_str());
        assert!(
            matches!(status, Some("pass" | "expected_failure" | "skip")),
            "{id}: {status:?}\n{shown}"
        );
    }
}

/// The resumability checks a server without an event store offers nothing to: no SSE event
/// carries an id (nothing to compare, no stream to resume), and it closes no stream before
/// its response (no `retry` to judge).
const NO_EVENT_STORE: &[&str] = &[
    "server.http.sse-event-ids",
    "server.http.sse-resume",
    "server.http.sse-retry",
];

/// Every HTTP check but those of `unoffered` ran and either passed or is a baseline entry;
/// those of `unoffered` are skipped (the server offers nothing they judge: no session id from
/// a stateless server, no event id without an event store); the stdio checks are skipped.
fn assert_keeps_its_http_baseline_but(
    url: &str,
    baseline: &str,
    unoffered: &[&str],
) -> (Duration, Value) {
    let baseline = root().join("tests/validate/baseline").join(baseline);
    let started = Instant::now();
    let (code, report, shown) = validate_json(
        &[
            "--strict",
            "--baseline",
            baseline.to_str().unwrap(),
            "--url",
            url,
        ],
        &[],
    );
    let elapsed = started.elapsed();
    assert_eq!(code, 0, "{shown}");
    let statuses = statuses(&report);
    for id in HTTP_CHECKS {
        let status = statuses
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, s)| s.as_str());
        if unoffered.contains(id) {
            assert_eq!(status, Some("skip"), "{id}\n{shown}");
            continue;
        }
        assert!(
            matches!(status, Some("pass" | "expected_failure")),
            "{id}: {status:?}\n{shown}"
        );
    }
    for (id, status) in &statuses {
        if id.starts_with("server.stdio.") {
            assert_eq!(status, "skip", "{id}");
        }
    }
    assert_features_judged(&statuses, &shown);
    assert_needs_no_authorization(&report, &shown);
    (elapsed, report)
}

#[test]
fn server_everything_over_http_keeps_every_rule_but_its_baseline() {
    let server = everything_http();
    // Its event store gives ids, primes each stream and resumes; it closes no stream early.
    let (elapsed, report) = assert_keeps_its_http_baseline_but(
        &server.url,
        "server-everything-http.toml",
        &["server.http.sse-retry"],
    );
    assert_does_not_speak_2026(&report);
    println!("validate --url against server-everything: {elapsed:?}");
    // A coarse bound (the bench measures): the feature checks add a session whose slowest
    // tool call is waited for half a second before it is cancelled.
    assert!(elapsed < Duration::from_secs(8), "{elapsed:?}");
}

#[test]
fn a_python_sdk_server_over_http_keeps_every_rule_but_its_baseline() {
    let server = python_http();
    let (elapsed, report) =
        assert_keeps_its_http_baseline_but(&server.url, "python-sdk-http.toml", NO_EVENT_STORE);
    assert_speaks_2026(&report, true);
    println!("validate --url against the Python SDK server: {elapsed:?}");
}

/// `<check id>.toml`, or `<check id>+<what is broken>.toml` for a second way to fail it.
fn check_of(path: &Path) -> String {
    path.file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .split('+')
        .next()
        .unwrap()
        .to_string()
}

/// The checks that have a broken server in `folder`.
fn broken_servers_in(folder: &str) -> Vec<String> {
    let mut covered: Vec<String> = std::fs::read_dir(root().join(folder))
        .unwrap()
        .map(|entry| check_of(&entry.unwrap().path()))
        .collect();
    covered.sort();
    covered.dedup();
    covered
}

/// Asserts a run of one check failed exactly that check, with expected and actual.
fn assert_fails_only(id: &str, (code, report, shown): (i32, Value, String)) {
    assert_eq!(code, 1, "{id}: {shown}");
    assert_eq!(
        statuses(&report),
        vec![(id.to_string(), "fail".to_string())],
        "{id}: {shown}"
    );
    let check = &report["targets"][0]["checks"][0];
    assert!(
        check["failure"]["expected"].is_string() && check["failure"]["actual"].is_string(),
        "{check}"
    );
}

/// Validates, strictly and with `--timeout 3s`, only the check a script file is named for,
/// against that script served over HTTP, with `extra` options: the check's id and the run.
fn one_check_over_http(path: &Path, extra: &[&str]) -> (String, (i32, Value, String)) {
    let id = check_of(path);
    let (server, _) = mock_http(path);
    let mut args = vec![
        "--strict",
        "--timeout",
        "3s",
        "--only",
        &id,
        "--url",
        &server.url,
    ];
    args.extend_from_slice(extra);
    let run = validate_json(&args, &[]);
    (id, run)
}

/// One test per file of `tests/validate/broken-http/` (build.rs rebuilds when one is added).
#[rstest]
fn a_broken_http_server_fails_its_check(
    #[files("tests/validate/broken-http/*.toml")] path: PathBuf,
) {
    let (id, run) = one_check_over_http(&path, &[]);
    assert_fails_only(&id, run);
}

/// One test per file of `tests/validate/correct-http/`: the check passes against it over HTTP.
#[rstest]
fn a_correct_http_server_passes_its_check(
    #[files("tests/validate/correct-http/*.toml")] path: PathBuf,
) {
    let (id, (code, report, shown)) = one_check_over_http(&path, &[]);
    assert_eq!(
        (code, statuses(&report)),
        (0, vec![(id.clone(), "pass".to_string())]),
        "{id}: {shown}"
    );
}

/// Every feature check that applies over Streamable HTTP (all but the stdio-only
/// before-initialize) has a broken server in `tests/validate/broken-http/` and a correct one
/// in `tests/validate/correct-http/`, as over stdio.
#[test]
fn every_feature_check_has_a_broken_and_a_correct_http_server() {
    let mut wanted: Vec<String> = FEATURE_CHECKS
        .iter()
        .filter(|id| **id != "server.lifecycle.before-initialize")
        .map(ToString::to_string)
        .collect();
    wanted.sort();
    let feature_servers: Vec<String> = broken_servers_in("tests/validate/correct-http")
        .into_iter()
        .filter(|id| !id.starts_with("server.http.") && !id.starts_with("server.auth."))
        .collect();
    assert_eq!(feature_servers, wanted);
    let broken = broken_servers_in("tests/validate/broken-http");
    for id in &wanted {
        assert!(
            broken.contains(id),
            "{id} needs a broken server in tests/validate/broken-http"
        );
    }
}

/// The resumability checks (event ids, resumption, priming, `retry`) each have a correct
/// server in `tests/validate/correct-http/` besides their broken one: a server that gives
/// event ids, resumes and primes is judged on them, not skipped.
#[test]
fn every_sse_check_has_a_correct_http_server() {
    let correct = broken_servers_in("tests/validate/correct-http");
    for id in HTTP_CHECKS
        .iter()
        .filter(|id| id.starts_with("server.http.sse-"))
    {
        assert!(
            correct.iter().any(|c| c == id),
            "{id} needs a correct server in tests/validate/correct-http"
        );
    }
}

#[test]
fn every_http_check_has_a_broken_server() {
    let covered = broken_servers_in("tests/validate/broken-http");
    for id in HTTP_CHECKS
        .iter()
        .filter(|id| id.starts_with("server.http."))
    {
        assert!(
            covered.iter().any(|c| c == id),
            "{id} needs a broken server in tests/validate/broken-http"
        );
    }
}

/// One test per file of `tests/validate/broken-auth-tokens/`: run with the token options, its
/// check fails.
#[rstest]
fn a_broken_server_fails_its_token_check(
    #[files("tests/validate/broken-auth-tokens/*.toml")] path: PathBuf,
) {
    let (id, run) = one_check_over_http(&path, AUTH_TOKEN_ARGS);
    assert_fails_only(&id, run);
}

/// One test per file of `tests/validate/correct-auth-tokens/`: run with the token options,
/// its check passes.
#[rstest]
fn a_correct_server_passes_its_token_check(
    #[files("tests/validate/correct-auth-tokens/*.toml")] path: PathBuf,
) {
    let (id, (code, report, shown)) = one_check_over_http(&path, AUTH_TOKEN_ARGS);
    assert_eq!(
        (code, statuses(&report)),
        (0, vec![(id.clone(), "pass".to_string())]),
        "{id}: {shown}"
    );
}

#[test]
fn the_well_known_fallback_passes_from_2025_11_25_and_fails_at_2025_06_18_alone() {
    let path = root().join("tests/validate/correct-http/server.auth.challenge+well-known.toml");
    let id = "server.auth.challenge";
    let (server, _) = mock_http(&path);
    let run = |revision: &str| {
        validate_json(
            &[
                "--strict",
                "--timeout",
                "3s",
                "--revision",
                revision,
                "--only",
                id,
                "--url",
                &server.url,
            ],
            &[],
        )
    };
    let (code, report, shown) = run("2025-06-18,2025-11-25");
    assert_eq!(
        (code, statuses(&report)),
        (0, vec![(id.to_string(), "pass".to_string())]),
        "{shown}"
    );
    let (code, report, shown) = run("2025-06-18");
    assert_fails_only(id, (code, report.clone(), shown));
    let actual = &report["targets"][0]["checks"][0]["failure"]["actual"];
    assert!(
        actual.as_str().unwrap().contains("no `resource_metadata`"),
        "{actual}"
    );
}

#[test]
fn every_auth_check_has_a_broken_and_a_correct_http_server() {
    let mut broken = broken_servers_in("tests/validate/broken-http");
    broken.extend(broken_servers_in("tests/validate/broken-auth-tokens"));
    let mut correct = broken_servers_in("tests/validate/correct-http");
    correct.extend(broken_servers_in("tests/validate/correct-auth-tokens"));
    for id in AUTH_TOKEN_CHECKS {
        assert!(
            !broken_servers_in("tests/validate/broken-http").contains(&id.to_string()),
            "{id} needs its token: its servers go in tests/validate/*-auth-tokens"
        );
    }
    for id in AUTH_CHECKS {
        assert!(
            broken.iter().any(|c| c == id),
            "{id} needs a broken server in tests/validate/broken-http"
        );
        assert!(
            correct.iter().any(|c| c == id),
            "{id} needs a correct server in tests/validate/correct-http"
        );
    }
}

/// The server of `tests/validate/python_auth_server.py`: the Python SDK's `MCPServer` behind
/// its own auth helpers (`AuthSettings`, `RequireAuthMiddleware`, the metadata routes).
fn python_auth_http() -> Served {
    let python = python_server()[0].clone();
    let port = free_port();
    let mut cmd = Command::new(python);
    cmd.arg(root().join("tests/validate/python_auth_server.py"))
        .arg(port.to_string());
    serve(cmd, port, "the Python SDK server behind its auth helpers")
}

/// The checks of a report with their status and note.
fn notes(report: &Value) -> Vec<(String, String, String)> {
    report["targets"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
                c["note"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_python_sdk_server_behind_its_auth_helpers_passes_the_auth_checks_and_is_judged_with_a_token() {
    let server = python_auth_http();
    // Without a token: the authorization checks pass, every other check is skipped, saying
    // why and how to give one.
    let (code, report, shown) = validate_json(&["--strict", "--url", &server.url], &[]);
    assert_eq!(code, 0, "{shown}");
    for (id, status, note) in notes(&report) {
        if AUTH_TOKEN_CHECKS.contains(&id.as_str()) {
            assert_eq!(status, "skip", "{id}: {note}\n{shown}");
            assert!(note.contains("give one with --token-"), "{id}: {note}");
        } else if AUTH_CHECKS.contains(&id.as_str()) {
            assert_eq!(status, "pass", "{id}: {note}\n{shown}");
        } else {
            assert_eq!(status, "skip", "{id}\n{shown}");
            assert!(
                note.contains("requires authorization (401 to `initialize` without a token)")
                    && note.contains("--header 'Authorization: Bearer"),
                "{id}: {note}"
            );
        }
    }
    // With the token: the same checks pass (the query-string one with that token), the
    // token-dependent ones run (the SDK's 403 names no `scope`: its baseline entry), and the
    // others run authenticated: the handshake, the tools, the sessions.
    let token = "validate-token-full";
    let header = format!("Authorization: Bearer {token}");
    let baseline = root().join("tests/validate/baseline/python-sdk-auth.toml");
    let (code, report, shown) = validate_json(
        &[
            "--url",
            &server.url,
            "--header",
            &header,
            "--token-for-other-resource",
            "validate-token-other",
            "--token-without-scope",
            "validate-token-no-scope",
            "--baseline",
            baseline.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{shown}");
    let checks = notes(&report);
    for id in AUTH_CHECKS {
        let (_, status, note) = checks.iter().find(|(i, _, _)| i == id).unwrap();
        let expected = match *id {
            "server.auth.insufficient-scope" => "expected_failure",
            _ => "pass",
        };
        assert_eq!(status, expected, "{id}\n{shown}");
        // Judged with the token given, not an unissued one.
        assert!(!note.contains("unissued"), "{id}: {note}");
    }
    let scope = &report["targets"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "server.auth.insufficient-scope")
        .unwrap()["failure"]["actual"];
    assert!(scope.as_str().unwrap().starts_with("no `scope`"), "{scope}");
    for id in [
        "server.initialize.result",
        "server.tools.list",
        "server.tools.call",
        "server.http.delete",
    ] {
        assert!(
            checks
                .iter()
                .any(|(i, status, _)| i == id && status == "pass"),
            "{id} did not pass authenticated\n{shown}"
        );
    }
    // The tokens are secrets: in no report, no terminal line.
    for token in [token, "validate-token-other", "validate-token-no-scope"] {
        assert!(!shown.contains(token), "{shown}");
        assert!(!report.to_string().contains(token), "{report}");
    }
    // A token issued for another resource is refused like any invalid one: nothing judged.
    let (code, report, shown) = validate_json(
        &[
            "--url",
            &server.url,
            "--header",
            "Authorization: Bearer validate-token-other",
            "--only",
            "server.initialize.result",
        ],
        &[],
    );
    assert_eq!(code, 0, "{shown}");
    let checks = notes(&report);
    assert!(
        checks.iter().all(|(_, status, note)| status == "skip"
            && note.contains("401 to the `Authorization` given")),
        "{checks:?}"
    );
}

#[test]
fn an_https_url_is_trusted_through_ca_cert_and_refused_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "https.toml",
        "transport = \"https\"\nsteps = [{ handshake = {} }]\n",
    );
    let (server, lines) = mock_http(&script);
    let ca = lines
        .iter()
        .find_map(|l| l.strip_prefix("ca: "))
        .expect("the https mock names its CA")
        .to_string();
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );
    let (code, report, shown) = validate_json(
        &[
            "--only",
            "server.ping",
            "--ca-cert",
            &ca,
            "--url",
            &server.url,
        ],
        &[],
    );
    assert_eq!(
        (code, statuses(&report)),
        (0, vec![("server.ping".to_string(), "pass".to_string())]),
        "{shown}"
    );
    let (code, stderr) = bad_input(&["--url", &server.url], &[]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("TLS handshake failed") && stderr.contains("UnknownIssuer"),
        "{stderr}"
    );
}

#[test]
fn server_everything_keeps_every_stdio_rule_but_its_baseline() {
    let report = assert_keeps_its_baseline(&everything(), "server-everything.toml");
    assert_does_not_speak_2026(&report);
    // It asks a client that declares roots for them (350 ms after `initialized`).
    assert_requests_exercised(&report);
}

/// The declared side of server requests was exercised: a request came, valid and in bounds.
fn assert_requests_exercised(report: &Value) {
    let statuses = statuses(report);
    for id in ["server.requests.valid", "server.requests.within-declared"] {
        let status = statuses
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, s)| s.as_str());
        assert_eq!(status, Some("pass"), "{id}\n{report}");
    }
}

#[test]
fn a_python_sdk_server_keeps_every_stdio_rule_but_its_baseline() {
    let report = assert_keeps_its_baseline(&python_server(), "python-sdk.toml");
    assert_speaks_2026(&report, false);
}

/// One test per file of `tests/validate/broken/` (build.rs rebuilds when one is added).
#[rstest]
fn a_broken_stdio_server_fails_its_check(#[files("tests/validate/broken/*.toml")] path: PathBuf) {
    let id = check_of(&path);
    let mock = vec![
        BIN.to_string(),
        "mock-stdio".into(),
        "--script".into(),
        path.display().to_string(),
    ];
    // exits-on-close waits min(5 s, --timeout): judged only when --timeout allows the 5 s.
    let timeout = if id == "server.stdio.exits-on-close" {
        "5s"
    } else {
        "3s"
    };
    assert_fails_only(
        &id,
        validate_json(&["--strict", "--timeout", timeout, "--only", &id], &mock),
    );
}

/// One test per file of `tests/validate/correct/`: the check passes (not skips) against it.
#[rstest]
fn a_correct_stdio_server_passes_its_check(
    #[files("tests/validate/correct/*.toml")] path: PathBuf,
) {
    let id = check_of(&path);
    let mock = vec![
        BIN.to_string(),
        "mock-stdio".into(),
        "--script".into(),
        path.display().to_string(),
    ];
    let (code, report, shown) =
        validate_json(&["--strict", "--timeout", "3s", "--only", &id], &mock);
    assert_eq!(
        (code, statuses(&report)),
        (0, vec![(id.clone(), "pass".to_string())]),
        "{id}: {shown}"
    );
}

#[test]
fn every_feature_check_has_a_correct_server() {
    let mut wanted: Vec<String> = FEATURE_CHECKS.iter().map(ToString::to_string).collect();
    wanted.sort();
    assert_eq!(broken_servers_in("tests/validate/correct"), wanted);
}

#[test]
fn every_stdio_check_has_a_broken_server() {
    let mut wanted: Vec<String> = STDIO_CHECKS
        .iter()
        .chain(FEATURE_CHECKS)
        .map(ToString::to_string)
        .collect();
    wanted.sort();
    assert_eq!(
        broken_servers_in("tests/validate/broken"),
        wanted,
        "every stdio check needs a broken server in tests/validate/broken"
    );
}

#[test]
fn a_should_check_failing_warns_without_strict_and_fails_with_it() {
    let script = root().join("tests/validate/broken/server.tools.unknown.toml");
    let mock = vec![
        BIN.to_string(),
        "mock-stdio".into(),
        "--script".into(),
        script.display().to_string(),
    ];
    let (code, report, shown) = validate_json(&["--only", "server.tools.unknown"], &mock);
    assert_eq!(
        (code, statuses(&report)[0].1.as_str()),
        (0, "warn"),
        "{shown}"
    );
    let (code, _, shown) = validate_json(&["--strict", "--only", "server.tools.unknown"], &mock);
    assert_eq!(code, 1, "{shown}");
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn healthy_mock(dir: &Path) -> Vec<String> {
    let script = write(
        dir,
        "healthy.toml",
        "steps = [{ handshake = {} }, { expect = { method = \"ping\" } }, { reply = {} }]\n",
    );
    vec![
        BIN.to_string(),
        "mock-stdio".into(),
        "--script".into(),
        script.display().to_string(),
    ]
}

#[test]
fn a_baseline_entry_turns_a_failure_into_an_expected_one_and_goes_stale_when_it_passes() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = write(
        dir.path(),
        "baseline.toml",
        "[[expected]]\ncheck = \"server.ping\"\nreason = \"known\"\n",
    );
    let broken = root().join("tests/validate/broken/server.ping.toml");
    let mock = vec![
        BIN.to_string(),
        "mock-stdio".into(),
        "--script".into(),
        broken.display().to_string(),
    ];
    let args = [
        "--strict",
        "--only",
        "server.ping",
        "--baseline",
        baseline.to_str().unwrap(),
    ];
    let (code, report, shown) = validate_json(&args, &mock);
    assert_eq!(
        (code, statuses(&report)[0].1.as_str()),
        (0, "expected_failure"),
        "{shown}"
    );
    assert!(shown.contains("baseline: known"), "{shown}");
    let (code, report, shown) = validate_json(&args, &healthy_mock(dir.path()));
    assert_eq!(
        (code, statuses(&report)[0].1.as_str()),
        (1, "stale"),
        "{shown}"
    );
    assert!(shown.contains("remove the entry"), "{shown}");
}

#[test]
fn reports_come_as_a_table_grouped_by_area_json_and_junit() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    validate_cmd(
        &[
            "--junit",
            junit.to_str().unwrap(),
            "--only",
            "server.ping",
            "--only",
            "server.http.origin",
        ],
        &healthy_mock(dir.path()),
    )
    .assert()
    .code(0)
    .stdout(
        contains("\n  ping\n    pass    must   server.ping")
            .and(contains(
                "skipped: an HTTP check; the target is a stdio command",
            ))
            .and(contains("1 passed, 0 failed, 1 skipped")),
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("server.ping@2025-11-25") && xml.contains("<skipped"),
        "{xml}"
    );
}

#[test]
fn several_revisions_run_the_checks_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let (code, report, shown) = validate_json(
        &[
            "--revision",
            "2024-11-05,2025-06-18",
            "--only",
            "server.ping",
        ],
        &healthy_mock(dir.path()),
    );
    assert_eq!(code, 0, "{shown}");
    let revisions: Vec<&str> = report["targets"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["revision"].as_str().unwrap())
        .collect();
    assert_eq!(revisions, ["2024-11-05", "2025-06-18"]);
}

/// Runs validate on bad input; returns the exit code and stderr, checking it is one line
/// and that the run was bounded.
fn bad_input(args: &[&str], command: &[&str]) -> (i32, String) {
    let started = Instant::now();
    let command: Vec<String> = command.iter().map(ToString::to_string).collect();
    let output = validate(args, &command);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "took {:?}",
        started.elapsed()
    );
    let stderr = text(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "not one line: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    (
        output.status.code().unwrap_or(-1),
        stderr.trim().to_string(),
    )
}

#[test]
fn a_command_that_does_not_exist_is_unreachable() {
    let (code, stderr) = bad_input(&[], &["mcp-conformance-no-such-command"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.starts_with(
            "error: cannot reach the server: cannot start `mcp-conformance-no-such-command`"
        ),
        "{stderr}"
    );
}

#[test]
fn a_server_that_exits_at_once_is_unreachable_with_its_status_and_stderr() {
    let (code, stderr) = bad_input(&[], &["sh", "-c", "echo 'config missing' >&2; exit 3"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("exited with exit status: 3; stderr: config missing"),
        "{stderr}"
    );
}

#[test]
fn a_server_that_never_answers_is_unreachable_within_the_timeout() {
    let (code, stderr) = bad_input(&["--timeout", "1s"], &["sleep", "30"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("no answer to `initialize`: nothing within 1s"),
        "{stderr}"
    );
}

#[test]
fn a_url_that_refuses_connections_is_unreachable() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, stderr) = bad_input(&["--url", &url], &[]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains(&format!("cannot connect to 127.0.0.1:{port}")),
        "{stderr}"
    );
    let (code, stderr) = bad_input(&["--url", "not a url"], &[]);
    assert_eq!(code, 2, "{stderr}");
}

/// A scripted server behind the mock's authorization side (`[auth]` with `extra`), whose MCP
/// endpoint answers one handshake and then waits (a step never met keeps it up).
fn oauth_mock(dir: &Path, extra: &str) -> Served {
    let script = write(
        dir,
        "oauth.toml",
        &format!(
            "transport = \"http\"\nsteps = [{{ handshake = {{}} }}, {{ expect = {{ method = \"never/sent\" }} }}]\n\n[auth]\n{extra}\n"
        ),
    );
    mock_http(&script).0
}

#[test]
fn oauth_obtains_the_token_headless_and_every_check_runs_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = oauth_mock(dir.path(), "challenge_scope = \"mcp:read\"");
    let args = [
        "--strict",
        "--timeout",
        "3s",
        "--revision",
        "2025-11-25",
        "--only",
        "server.initialize.result",
        "--only",
        "server.auth.",
        "--oauth",
        "mcp-conformance-client",
        "--url",
        &server.url,
    ];
    let (code, report, shown) = validate_json(&args, &[]);
    assert_eq!(code, 0, "{shown}");
    let checks = notes(&report);
    // The handshake went through with the token the grant gave; the query-string check sent
    // that token, not an unissued one.
    assert!(
        checks.contains(&(
            "server.initialize.result".into(),
            "pass".into(),
            String::new()
        )),
        "{checks:?}"
    );
    let query = checks
        .iter()
        .find(|(id, _, _)| id == "server.auth.token-not-in-query")
        .unwrap();
    assert_eq!(
        (query.1.as_str(), query.2.as_str()),
        ("pass", ""),
        "{shown}"
    );
    assert_flow_secrets_hidden(&shown, &report);
}

/// One plain-HTTP GET of `url` from a test playing the browser: the status and the
/// `Location` of the answer.
fn browser_get(url: &str) -> (u16, Option<String>) {
    use std::io::{Read, Write};
    let url = url::Url::parse(url).unwrap();
    let mut tcp =
        std::net::TcpStream::connect((url.host_str().unwrap(), url.port().unwrap())).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let target = &url[url::Position::BeforePath..];
    write!(
        tcp,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let location = answer
        .lines()
        .find_map(|l| {
            l.strip_prefix("location: ")
                .or_else(|| l.strip_prefix("Location: "))
        })
        .map(str::to_string);
    (status, location)
}

#[test]
fn oauth_browser_prints_the_url_and_takes_the_code_at_its_loopback_redirect() {
    let dir = tempfile::tempdir().unwrap();
    let server = oauth_mock(dir.path(), "challenge_scope = \"mcp:read\"");
    let json = dir.path().join("report.json");
    let mut child = Command::new(BIN)
        .args([
            "validate",
            "--json",
            json.to_str().unwrap(),
            "--timeout",
            "3s",
        ])
        .args([
            "--revision",
            "2025-11-25",
            "--only",
            "server.initialize.result",
        ])
        .args([
            "--oauth",
            "mcp-conformance-client",
            "--oauth-browser",
            "--oauth-wait",
            "20s",
        ])
        .args(["--url", &server.url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let url = loop {
        let mut line = String::new();
        assert_ne!(
            stderr.read_line(&mut line).unwrap(),
            0,
            "no URL printed: {said}"
        );
        said.push_str(&line);
        if let Some(url) = line.trim().strip_prefix("http://") {
            break format!("http://{url}");
        }
    };
    assert!(said.contains("open this URL in a browser"), "{said}");
    // The browser: the authorization endpoint redirects to the loopback redirect URI it was
    // given, which answers with a page once it has the code.
    let redirect_uri = url::Url::parse(&url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "redirect_uri")
        .map(|(_, v)| v.into_owned())
        .unwrap();
    assert!(
        redirect_uri.starts_with("http://127.0.0.1:") && redirect_uri.ends_with("/callback"),
        "{redirect_uri}"
    );
    let (status, location) = browser_get(&url);
    let location = location.unwrap_or_else(|| panic!("HTTP {status} without a redirect"));
    assert!(location.starts_with(&redirect_uri), "{location}");
    assert_eq!(browser_get(&location).0, 200);
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(status.code(), Some(0), "{said}{rest}");
    assert_eq!(
        notes(&report),
        [(
            "server.initialize.result".to_string(),
            "pass".to_string(),
            String::new()
        )]
    );
    assert_flow_secrets_hidden(&format!("{said}{rest}"), &report);
}

#[test]
fn oauth_browser_that_never_comes_back_ends_the_wait_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let server = oauth_mock(dir.path(), "");
    let output = validate(
        &[
            "--timeout",
            "3s",
            "--oauth",
            "mcp-conformance-client",
            "--oauth-browser",
            "--oauth-wait",
            "200ms",
            "--url",
            &server.url,
        ],
        &[],
    );
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(
            "cannot obtain a token with --oauth: no browser came back to http://127.0.0.1:"
        ) && stderr.contains("/callback within 200ms"),
        "{stderr}"
    );
    for (args, says) in [
        (
            vec!["--oauth-browser", "--url", "http://127.0.0.1:9/mcp"],
            "--oauth-browser applies to --oauth CLIENT_ID with --url",
        ),
        (
            vec![
                "--oauth",
                "c",
                "--url",
                "http://127.0.0.1:9/mcp",
                "--oauth-redirect-port",
                "8123",
            ],
            "--oauth-redirect-port applies to --oauth-browser",
        ),
    ] {
        let (code, stderr) = bad_input(&args, &[]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

#[test]
fn oauth_obtains_a_token_from_the_python_sdks_authorization_server() {
    // The SDK's own authorization and token endpoints (PKCE and the redirect URI checked by
    // the SDK), its provider approving the pre-registered client at once.
    let server = python_auth_http();
    let (code, report, shown) = validate_json(
        &[
            "--strict",
            "--revision",
            "2025-11-25",
            "--only",
            "server.initialize.result",
            "--only",
            "server.tools.list",
            "--only",
            "server.auth.token-not-in-query",
            "--oauth",
            "validate-client",
            "--url",
            &server.url,
        ],
        &[],
    );
    assert_eq!(code, 0, "{shown}");
    assert_eq!(
        notes(&report),
        [
            (
                "server.initialize.result".to_string(),
                "pass".to_string(),
                String::new()
            ),
            (
                "server.tools.list".into(),
                "pass".into(),
                "1 tool(s) on 1 page(s)".into()
            ),
            (
                "server.auth.token-not-in-query".into(),
                "pass".into(),
                String::new()
            ),
        ],
        "{shown}"
    );
    // A client the authorization server does not know gets no redirect back.
    let (code, stderr) = bad_input(&["--oauth", "unknown-client", "--url", &server.url], &[]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains(
            "the authorization endpoint did not redirect to http://127.0.0.1/callback: HTTP 400"
        ),
        "{stderr}"
    );
}

#[test]
fn oauth_stops_at_a_refused_flow_saying_why_and_shows_no_credential() {
    let dir = tempfile::tempdir().unwrap();
    for (fault, says) in [
        ("wrong_state = true", "the authorization response is refused: its `state` is not the request's"),
        ("iss = \"wrong\"", "its `iss` is `http://issuer.invalid`"),
        ("no_pkce_methods = true", "does not list `S256` in `code_challenge_methods_supported` (absent): no authorization is asked without PKCE"),
        ("wrong_issuer = true", "its `issuer` is `http://issuer.invalid`"),
        ("token_error_echoes = true", "the token endpoint gave no access token: 400"),
    ] {
        let server = oauth_mock(dir.path(), fault);
        let (code, stderr) = bad_input(
            &["--timeout", "3s", "--oauth", "mcp-conformance-client", "--url", &server.url],
            &[],
        );
        assert_eq!(code, 4, "{fault}: {stderr}");
        assert!(
            stderr.contains("cannot obtain a token with --oauth") && stderr.contains(says),
            "{fault}: {stderr}"
        );
        assert!(!stderr.contains("authz-code-5f1e9a"), "{fault}: {stderr}");
    }
    for (args, says) in [
        (vec!["--oauth", "c"], "--oauth applies to --url"),
        (
            vec![
                "--oauth",
                "c",
                "--url",
                "http://127.0.0.1:9/mcp",
                "--header",
                "Authorization: Bearer t-1234",
            ],
            "--oauth obtains the token an `Authorization` --header gives",
        ),
    ] {
        let command: &[&str] = if args.contains(&"--url") {
            &[]
        } else {
            &["true"]
        };
        let (code, stderr) = bad_input(&args, command);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

#[test]
fn the_auth_checks_stop_sending_once_a_request_runs_out_of_time() {
    // Answers the first request with a 401 whose metadata URL is its own, then reads every
    // later request and never answers it, until a connection closes without a request.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let answering = std::thread::spawn(move || {
        let mut held = Vec::new();
        for (index, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { break };
            let mut head = [0u8; 4096];
            // A connection closed at once is the test's word that the run is over.
            if std::io::Read::read(&mut stream, &mut head).unwrap_or(0) == 0 {
                break;
            }
            if index == 0 {
                let challenge = format!("Bearer resource_metadata=\"http://127.0.0.1:{port}/prm\"");
                let answer = format!("HTTP/1.1 401 Unauthorized\r\nwww-authenticate: {challenge}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                let _ = std::io::Write::write_all(&mut stream, answer.as_bytes());
            } else if held.len() < 16 {
                held.push(stream);
            } else {
                break;
            }
        }
    });
    let url = format!("http://127.0.0.1:{port}/mcp");
    let started = Instant::now();
    let (code, report, shown) = validate_json(
        &["--timeout", "1s", "--only", "server.auth.", "--url", &url],
        &[],
    );
    let took = started.elapsed();
    // The metadata request ran out of time; nothing more was sent (else each of the four
    // later requests would wait its second too).
    assert!(took < Duration::from_millis(2500), "{took:?}\n{shown}");
    assert_eq!(code, 1, "{shown}");
    let checks = notes(&report);
    let challenge = checks
        .iter()
        .find(|(id, _, _)| id == "server.auth.challenge")
        .unwrap();
    assert_eq!(challenge.1, "fail", "{shown}");
    let invalid = &report["targets"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "server.auth.invalid-token-401")
        .unwrap()["failure"]["actual"];
    assert!(invalid.as_str().unwrap().contains("not sent"), "{invalid}");
    drop(std::net::TcpStream::connect(("127.0.0.1", port)));
    answering.join().unwrap();
}

#[test]
fn the_token_options_apply_to_a_url_and_are_never_echoed() {
    for option in ["--token-for-other-resource", "--token-without-scope"] {
        let (code, stderr) = bad_input(&[option, "secret-token-y"], &["true"]);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&format!("{option} applies to --url")),
            "{stderr}"
        );
        let (code, stderr) = bad_input(
            &["--url", "http://127.0.0.1:9/mcp", option, "secret\ntoken-y"],
            &[],
        );
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains("not a token that fits a header value"),
            "{stderr}"
        );
        assert!(!stderr.contains("secret"), "{stderr}");
    }
}

#[test]
fn a_url_that_never_answers_is_unreachable_within_the_timeout() {
    // Connections complete in the listener's backlog; no request is ever read.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let (code, stderr) = bad_input(
        &[
            "--timeout",
            "1s",
            "--url",
            &url,
            "--header",
            "Authorization: Bearer secret-x",
        ],
        &[],
    );
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("no answer to `initialize`: nothing within 1s"),
        "{stderr}"
    );
    assert!(!stderr.contains("secret-x"), "{stderr}");
    drop(listener);
}

#[test]
fn a_config_file_with_an_error_is_a_usage_error_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(
        dir.path(),
        "mcp.json",
        "{\"mcpServers\": {\"a\": {\"command\": [1]}}}",
    );
    let (code, stderr) = bad_input(&["--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("is not a valid mcpServers config") && stderr.contains("line 1 column"),
        "{stderr}"
    );
    let (code, stderr) = bad_input(
        &["--config", dir.path().join("none.json").to_str().unwrap()],
        &[],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot read the config file"), "{stderr}");
    let good = write(
        dir.path(),
        "ok.json",
        "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}",
    );
    let (code, stderr) = bad_input(&["--config", good.to_str().unwrap(), "b"], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no server named `b`"), "{stderr}");
}

#[rstest]
#[case::no_server(&[], &[], "name one server")]
#[case::unknown_revision(&["--revision", "2020-01-01"], &["x"], "--revision `2020-01-01`")]
#[case::prefix_matching_nothing(&["--only", "client."], &["x"], "matches no check")]
#[case::env_without_equals(&["--env", "NOEQUALS"], &["x"], "is not KEY=VALUE")]
fn a_bad_option_is_a_usage_error_naming_it(
    #[case] args: &[&str],
    #[case] command: &[&str],
    #[case] wanted: &str,
) {
    let (code, stderr) = bad_input(args, command);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(wanted), "{stderr}");
}

#[test]
fn a_config_file_validates_each_server_with_progress() {
    let dir = tempfile::tempdir().unwrap();
    let mock = healthy_mock(dir.path());
    let config = serde_json::json!({"mcpServers": {
        "good": {"command": mock[0], "args": mock[1..], "env": {"UNUSED": "1"}},
        "missing": {"command": "mcp-conformance-no-such-command"},
    }});
    let config = write(dir.path(), "mcp.json", &config.to_string());
    validate_cmd(
        &[
            "--config",
            config.to_str().unwrap(),
            "--only",
            "server.ping",
        ],
        &[],
    )
    .assert()
    .code(4)
    .stderr(
        contains("[1/2] good: validating")
            .and(contains("[1/2] good: 1 passed, 0 failed"))
            .and(contains("error: cannot reach missing: cannot start")),
    )
    .stdout(contains("UNREACHABLE: cannot start").and(contains("2 servers (1 unreachable)")));
}

/// The checks of 2026-07-28 (`server.result.server-info` and the rest; the shared query
/// checks have broken servers of their own above).
const STATELESS_CHECKS: &[&str] = &[
    "server.discover",
    "server.meta.required",
    "server.meta.unsupported-version",
    "server.result.type",
    "server.result.cacheable",
    "server.result.server-info",
    "server.logging.unrequested",
    "server.subscriptions.acknowledged",
    "server.resources.not-found",
    "server.http.header-mismatch",
];

/// One test per file of `tests/validate/broken-2026/`: a scripted 2026-07-28 server broken in
/// one way, over stdio, fails that check alone.
#[rstest]
fn a_broken_stateless_server_fails_its_check(
    #[files("tests/validate/broken-2026/*.toml")] path: PathBuf,
) {
    let id = check_of(&path);
    let mock = vec![
        BIN.to_string(),
        "mock-stdio".into(),
        "--script".into(),
        path.display().to_string(),
    ];
    let args = [
        "--strict",
        "--timeout",
        "3s",
        "--revision",
        "2026-07-28",
        "--only",
        &id,
    ];
    assert_fails_only(&id, validate_json(&args, &mock));
}

/// One test per file of `tests/validate/broken-2026-http/`: the same over Streamable HTTP.
#[rstest]
fn a_broken_stateless_http_server_fails_its_check(
    #[files("tests/validate/broken-2026-http/*.toml")] path: PathBuf,
) {
    let id = check_of(&path);
    let (server, _) = mock_http(&path);
    let args = [
        "--strict",
        "--timeout",
        "3s",
        "--revision",
        "2026-07-28",
        "--only",
        &id,
        "--url",
        &server.url,
    ];
    assert_fails_only(&id, validate_json(&args, &[]));
}

/// One test per file of `tests/validate/correct-2026/`: a feature check that applies at
/// 2026-07-28 passes against a correct stateless server (`server/discover`, no handshake).
#[rstest]
fn a_correct_stateless_server_passes_its_feature_check(
    #[files("tests/validate/correct-2026/*.toml")] path: PathBuf,
) {
    let id = check_of(&path);
    let mock = vec![
        BIN.to_string(),
        "mock-stdio".into(),
        "--script".into(),
        path.display().to_string(),
    ];
    let args = [
        "--strict",
        "--timeout",
        "3s",
        "--revision",
        "2026-07-28",
        "--only",
        &id,
    ];
    let (code, report, shown) = validate_json(&args, &mock);
    assert_eq!(
        (code, statuses(&report)),
        (0, vec![(id.clone(), "pass".to_string())]),
        "{id}: {shown}"
    );
}

/// Every feature check that applies at 2026-07-28 has a broken and a correct stateless server.
#[test]
fn every_feature_check_at_2026_has_a_broken_and_a_correct_server() {
    let mut wanted: Vec<String> = FEATURE_CHECKS
        .iter()
        .filter(|id| {
            **id != "server.lifecycle.before-initialize" && !NOT_APPLICABLE_AT_2026.contains(id)
        })
        .map(ToString::to_string)
        .collect();
    wanted.sort();
    assert_eq!(broken_servers_in("tests/validate/correct-2026"), wanted);
    let broken = broken_servers_in("tests/validate/broken-2026");
    for id in &wanted {
        assert!(
            broken.contains(id),
            "{id} needs a broken server in tests/validate/broken-2026"
        );
    }
}

/// The lists above (whose broken and correct servers the tests hold complete) are every
/// server check of the registry: a check added to `validator/src/rules.toml` without its
/// scripted servers fails here.
#[test]
fn the_check_lists_are_every_server_check_of_the_registry() {
    let mut listed: Vec<&str> = STDIO_CHECKS
        .iter()
        .chain(HTTP_CHECKS)
        .chain(FEATURE_CHECKS)
        .chain(STATELESS_CHECKS)
        .chain(AUTH_CHECKS)
        .chain(AUTHORIZATION_SERVER_CHECKS)
        .copied()
        .collect();
    listed.sort();
    listed.dedup();
    let mut registry: Vec<&str> = mcp_conformance::rules::all()
        .iter()
        .filter(|r| r.kind == mcp_conformance::rules::RuleKind::Server)
        .map(|r| r.id.as_str())
        .collect();
    registry.sort();
    assert_eq!(listed, registry);
}

#[test]
fn every_stateless_check_has_a_broken_server() {
    let mut covered = broken_servers_in("tests/validate/broken-2026");
    covered.extend(broken_servers_in("tests/validate/broken-2026-http"));
    for id in STATELESS_CHECKS {
        assert!(
            covered.iter().any(|c| c == id),
            "{id} needs a broken server in tests/validate/broken-2026(-http)"
        );
    }
}

/// The checks judged at 2026-07-28 besides [`STATELESS_CHECKS`]: the older revisions' query
/// checks, asked with `_meta`.
const SHARED_AT_2026: &[&str] = &[
    "server.schema.valid",
    "server.tools.list",
    "server.tools.unknown",
    "server.jsonrpc.unknown-method",
    "server.capabilities.honest",
];

/// (id, status) of the report's checks at `revision`.
fn statuses_at(report: &Value, revision: &str) -> Vec<(String, String)> {
    report["targets"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["revision"] == revision)
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The default run judged the server at 2026-07-28 too: every check of that revision ran and
/// passed or is a baseline entry (the HTTP one is skipped over stdio).
fn assert_speaks_2026(report: &Value, http: bool) {
    let at_2026 = statuses_at(report, "2026-07-28");
    for id in STATELESS_CHECKS.iter().chain(SHARED_AT_2026) {
        let status = at_2026
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, s)| s.as_str());
        let wanted: &[&str] = if *id == "server.http.header-mismatch" && !http {
            &["skip"]
        } else {
            &["pass", "expected_failure"]
        };
        assert!(
            status.is_some_and(|s| wanted.contains(&s)),
            "{id} at 2026-07-28: {status:?}\n{report}"
        );
    }
    // The feature checks ran there too (or skip, saying why: not applicable, nothing to do).
    let features: Vec<&&str> = FEATURE_CHECKS
        .iter()
        .filter(|id| **id != "server.lifecycle.before-initialize")
        .collect();
    for id in &features {
        let status = at_2026
            .iter()
            .find(|(i, _)| i == *id)
            .map(|(_, s)| s.as_str());
        let wanted: &[&str] = if NOT_APPLICABLE_AT_2026.contains(id) {
            &["skip"]
        } else {
            &["pass", "expected_failure", "skip"]
        };
        assert!(
            status.is_some_and(|s| wanted.contains(&s)),
            "{id} at 2026-07-28: {status:?}\n{report}"
        );
    }
    assert_eq!(
        at_2026.len(),
        STATELESS_CHECKS.len() + SHARED_AT_2026.len() + features.len(),
        "{at_2026:?}"
    );
}

/// The feature checks that do not apply at 2026-07-28 (no `initialize`, no
/// `resources/subscribe`, no `logging/setLevel`, no client capability declared): skipped
/// there with the reason.
const NOT_APPLICABLE_AT_2026: &[&str] = &[
    "server.lifecycle.second-initialize",
    "server.lifecycle.server-info",
    "server.resources.unknown",
    "server.resources.subscribe",
    "server.resources.updated",
    "server.logging.set-level",
    "server.logging.level-respected",
    "server.requests.valid",
    "server.requests.within-declared",
];

/// The default run found the server does not speak 2026-07-28 and said so once.
fn assert_does_not_speak_2026(report: &Value) {
    let at_2026 = statuses_at(report, "2026-07-28");
    assert_eq!(
        at_2026,
        [("server.discover".to_string(), "skip".to_string())],
        "{report}"
    );
    let check = report["targets"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["revision"] == "2026-07-28")
        .unwrap();
    let note = check["note"].as_str().unwrap_or_default();
    // Over stdio an unknown method (-32601); over HTTP server-everything's 400 "Server not initialized".
    assert!(
        note.contains("does not speak 2026-07-28")
            && (note.contains("-32601") || note.contains("400 Bad Request")),
        "{check}"
    );
}

/// The TypeScript SDK 2.x server over stdio, on a free port over HTTP.
fn ts_server(port: Option<u16>) -> Vec<String> {
    servers::ts_server(root(), port)
}

#[test]
fn a_typescript_sdk_server_keeps_every_stdio_rule_but_its_baseline_at_both_revisions() {
    let report = assert_keeps_its_baseline(&ts_server(None), "ts-sdk.toml");
    assert_speaks_2026(&report, false);
}

#[test]
fn a_typescript_sdk_server_over_http_keeps_every_rule_but_its_baseline_at_both_revisions() {
    let port = free_port();
    let command = ts_server(Some(port));
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    let server = serve(cmd, port, "the TypeScript SDK server (streamable-http)");
    // Its 2025-era fallback is stateless: no session id, so the session checks do not apply;
    // it has no event store.
    let mut unoffered = vec![
        "server.http.session-id-ascii",
        "server.http.unknown-session-404",
        "server.http.missing-session-400",
        "server.http.delete",
    ];
    unoffered.extend(NO_EVENT_STORE);
    let (elapsed, report) =
        assert_keeps_its_http_baseline_but(&server.url, "ts-sdk-http.toml", &unoffered);
    assert_speaks_2026(&report, true);
    println!("validate --url against the TypeScript SDK server: {elapsed:?}");
}

/// Asked for 2026-07-28 alone, a server of the `initialize` era has nothing judged: that is
/// exit 4 with the reason, never a pass of nothing.
#[test]
fn only_2026_07_28_against_a_server_of_the_initialize_era_judges_nothing_and_exits_4() {
    let (code, report, shown) =
        validate_json(&["--strict", "--revision", "2026-07-28"], &everything());
    assert_eq!(code, 4, "{shown}");
    assert_eq!(statuses(&report), [], "{shown}");
    assert!(
        shown.contains("it does not speak 2026-07-28, the only revision asked (`server/discover` answered error"),
        "{shown}"
    );
}

/// Over Streamable HTTP, a server that reads each request and never answers is unreachable
/// (exit 4) at every revision, the default included.
#[rstest]
fn a_silent_http_server_is_unreachable_at_every_revision(
    #[values(None, Some("2024-11-05"), Some("2025-11-25"), Some("2026-07-28"))] revision: Option<
        &str,
    >,
) {
    let mut child = Command::new("python3")
        .arg("-S")
        .arg(root().join("tests/hostile/http/never-answers.py"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start the silent HTTP server");
    let mut port = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let served = Served {
        child,
        url: format!("http://127.0.0.1:{}/mcp", port.trim()),
    };
    let mut args = vec!["--strict", "--timeout", "1s", "--url", &served.url];
    if let Some(revision) = revision {
        args.extend(["--revision", revision]);
    }
    let started = Instant::now();
    let (code, report, shown) = validate_json(&args, &[]);
    assert_eq!(code, 4, "at {revision:?}: {shown}");
    assert_eq!(statuses(&report), [], "{shown}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "at {revision:?} took {:?}",
        started.elapsed()
    );
}

/// A server that cannot be heard (it exits at once, never reads its input, or reads it and
/// never answers) is never passed: exit 4 at every revision, the default included.
#[rstest]
fn a_server_that_cannot_be_heard_is_unreachable_at_every_revision(
    #[values("exits", "never-reads", "never-answers")] server: &str,
    #[values(
        None,
        Some("2024-11-05"),
        Some("2025-06-18"),
        Some("2025-11-25"),
        Some("2026-07-28")
    )]
    revision: Option<&str>,
) {
    let command: Vec<String> = match server {
        "exits" => vec!["false".into()],
        "never-reads" => vec!["sleep".into(), "30".into()],
        _ => vec!["sh".into(), "-c".into(), "exec cat > /dev/null".into()],
    };
    let mut args = vec!["--strict", "--timeout", "1s"];
    if let Some(revision) = revision {
        args.extend(["--revision", revision]);
    }
    let started = Instant::now();
    let (code, report, shown) = validate_json(&args, &command);
    assert_eq!(code, 4, "{server} at {revision:?}: {shown}");
    assert_eq!(statuses(&report), [], "{shown}");
    assert!(shown.contains("cannot reach"), "{shown}");
    // The documented bound of a run at --timeout 1s (handshake, then each check's bound).
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{server} at {revision:?} took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_server_of_2026_07_28_only_is_judged_at_that_revision_alone_by_default() {
    let port = free_port();
    let command = ts_server(Some(port));
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]).env("MCP_TS_LEGACY", "reject");
    let server = serve(
        cmd,
        port,
        "the TypeScript SDK server, 2026-07-28 only (streamable-http)",
    );
    // Its 2026-07-28 deviations are those of the dual-era server (the same SDK handlers).
    let baseline = root().join("tests/validate/baseline/ts-sdk-http.toml");
    let (code, report, shown) = validate_json(
        &[
            "--strict",
            "--baseline",
            baseline.to_str().unwrap(),
            "--url",
            &server.url,
        ],
        &[],
    );
    assert_eq!(code, 0, "{shown}");
    assert_speaks_2026(&report, true);
    assert_eq!(
        statuses_at(&report, "2025-11-25"),
        [("server.initialize.result".to_string(), "skip".to_string())],
        "{shown}"
    );
    assert!(
        shown.contains("speaks 2026-07-28 only and refuses `initialize`")
            && shown.contains("-32022"),
        "{shown}"
    );
}

/// A scripted server with a read-only tool and a destructive one, logging every message it
/// receives (`--log`) to the returned file; every launch appends to it.
fn two_tools_mock(dir: &Path) -> (Vec<String>, PathBuf) {
    let script = write(
        dir,
        "two-tools.toml",
        r#"
tools = [
  { name = "read", input_schema = { type = "object", properties = { q = { type = "string" } }, required = ["q"] }, annotations = { readOnlyHint = true } },
  { name = "wipe", input_schema = { type = "object", properties = { path = { type = "string" } }, required = ["path"] }, annotations = { readOnlyHint = false, destructiveHint = true } },
]
incidental = ["initialize", "tools/list", "tools/call", "ping", "logging/setLevel", "prompts/list", "resources/list", "resources/templates/list"]
steps = [{ handshake = {} }]
"#,
    );
    let log = dir.join("wire.jsonl");
    let mock = vec![
        BIN.to_string(),
        "mock-stdio".into(),
        "--script".into(),
        script.display().to_string(),
        "--log".into(),
        log.display().to_string(),
    ];
    (mock, log)
}

/// The listed tools (`read`, `wipe`) the mock received a `tools/call` for (the unknown-tool
/// check's call of a name no server has is left out).
fn tools_called(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|record| {
            let message = record.get("message")?;
            (message.get("method")? == "tools/call").then(|| {
                message
                    .pointer("/params/name")?
                    .as_str()
                    .map(str::to_string)
            })?
        })
        .collect();
    names.retain(|name| name == "read" || name == "wipe");
    names.sort();
    names.dedup();
    names
}

#[test]
fn a_destructive_tool_is_never_called_by_default_and_is_called_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let (mock, log) = two_tools_mock(dir.path());
    // Every check (the invalid-argument probes and cancellation included).
    let (_, report, shown) = validate_json(&["--timeout", "3s"], &mock);
    assert!(
        statuses(&report)
            .iter()
            .any(|(id, s)| id == "server.tools.call" && s == "pass"),
        "{shown}"
    );
    assert_eq!(tools_called(&log), vec!["read".to_string()], "{shown}");

    std::fs::remove_file(&log).unwrap();
    let (_, _, shown) = validate_json(&["--timeout", "3s", "--call-tool", "wipe"], &mock);
    assert_eq!(
        tools_called(&log),
        vec!["read".to_string(), "wipe".to_string()],
        "{shown}"
    );

    std::fs::remove_file(&log).unwrap();
    let config = serde_json::json!({"mcpServers": {"two": {"command": mock[0], "args": mock[1..], "callTools": ["wipe"]}}});
    let config = write(dir.path(), "mcp.json", &config.to_string());
    let (_, _, shown) = validate_json(
        &["--timeout", "3s", "--config", config.to_str().unwrap()],
        &[],
    );
    assert_eq!(
        tools_called(&log),
        vec!["read".to_string(), "wipe".to_string()],
        "{shown}"
    );
}

#[test]
fn the_filesystem_reference_server_keeps_every_stdio_rule_but_its_baseline_and_is_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "kept as it is\n").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let before = snapshot_of(dir.path());
    let command = vec![
        "node".to_string(),
        reference_server("server-filesystem"),
        dir.path().display().to_string(),
    ];
    let report = assert_keeps_its_baseline(&command, "server-filesystem.toml");
    // It asks a client that declares roots for them (the answer, no roots, changes nothing).
    assert_requests_exercised(&report);
    // Only its read-only tools were called: nothing written, moved or created.
    assert_eq!(snapshot_of(dir.path()), before);
}

#[test]
fn the_memory_reference_server_keeps_every_stdio_rule_but_its_baseline_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let memory = dir.path().join("memory.jsonl");
    let command = vec![
        "env".to_string(),
        format!("MEMORY_FILE_PATH={}", memory.display()),
        "node".to_string(),
        reference_server("server-memory"),
    ];
    assert_keeps_its_baseline(&command, "server-memory.toml");
    // create_entities, add_observations, delete_* are not read-only: never called.
    assert!(
        !memory.exists(),
        "the validator stored something in the memory server"
    );
}

#[test]
fn the_time_reference_server_keeps_every_stdio_rule_but_its_baseline() {
    let program = servers().join("venv-time/bin/mcp-server-time");
    assert!(
        program.is_file(),
        "mcp-server-time is missing at {}",
        program.display()
    );
    let command = vec![
        program.display().to_string(),
        "--local-timezone".into(),
        "UTC".into(),
    ];
    assert_keeps_its_baseline(&command, "mcp-server-time.toml");
}

/// The content types a tool result may use follow the negotiated revision: a resource_link
/// (2025-06-18) fails `server.tools.call` at 2025-03-26 and passes from 2025-06-18; the
/// revision-bound checks skip before their revision, saying so.
#[test]
fn feature_checks_judge_at_the_revision_negotiated() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "link.toml",
        r#"
tools = [{ name = "read", annotations = { readOnlyHint = true } }]
steps = [
  { handshake = {} },
  { expect = { method = "tools/call" } },
  { reply = { result = { content = [{ type = "resource_link", uri = "file:///a", name = "a" }] } } },
]
"#,
    );
    let mock = vec![
        BIN.to_string(),
        "mock-stdio".into(),
        "--script".into(),
        script.display().to_string(),
    ];
    let outcome = |revision: &str| {
        let (_, report, shown) = validate_json(
            &[
                "--strict",
                "--timeout",
                "3s",
                "--only",
                "server.tools.call",
                "--revision",
                revision,
            ],
            &mock,
        );
        (statuses(&report)[0].1.clone(), shown)
    };
    let (old, shown) = outcome("2025-03-26");
    assert_eq!(old, "fail", "{shown}");
    assert!(
        shown.contains(
            "content type `resource_link` is not one of text, image, audio, resource at 2025-03-26"
        ),
        "{shown}"
    );
    assert_eq!(outcome("2025-06-18").0, "pass");
    let names = root().join("tests/validate/broken/server.tools.names.toml");
    let mock = vec![
        BIN.to_string(),
        "mock-stdio".into(),
        "--script".into(),
        names.display().to_string(),
    ];
    let (_, report, shown) = validate_json(
        &["--only", "server.tools.names", "--revision", "2025-06-18"],
        &mock,
    );
    assert_eq!(
        statuses(&report),
        vec![("server.tools.names".to_string(), "skip".to_string())],
        "{shown}"
    );
    assert!(
        shown.contains("the tool naming guidance is from 2025-11-25"),
        "{shown}"
    );
}

#[test]
fn the_git_reference_server_keeps_every_stdio_rule_but_its_baseline_and_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    servers::git_repo_with_one_commit(dir.path());
    std::fs::write(dir.path().join("tracked.txt"), "two\n").unwrap();
    std::fs::write(dir.path().join("untracked.txt"), "new\n").unwrap();
    // `git status` may rewrite the index's stat cache: the index is compared by what it
    // stages (`git diff --cached`), everything else byte for byte.
    let index = dir.path().join(".git/index");
    let snapshot = || {
        snapshot_of(dir.path())
            .into_iter()
            .filter(|(path, _)| *path != index)
            .collect::<Vec<_>>()
    };
    let before = snapshot();
    let program = servers().join("venv-time/bin/mcp-server-git");
    assert!(
        program.is_file(),
        "mcp-server-git is missing at {}",
        program.display()
    );
    let command = vec![
        program.display().to_string(),
        "--repository".into(),
        dir.path().display().to_string(),
    ];
    assert_keeps_its_baseline(&command, "mcp-server-git.toml");
    // git_add, git_commit, git_reset, git_checkout, git_create_branch are not read-only:
    // never called, so the work tree, the index and the history are as they were.
    assert_eq!(snapshot(), before);
    servers::git(dir.path(), &["diff", "--cached", "--quiet"]);
}

#[test]
fn a_server_of_the_initialize_era_silent_on_discover_is_not_waited_for_past_the_other_checks() {
    let script = root()
        .join("tests/validate/silent_legacy_server.py")
        .display()
        .to_string();
    let started = Instant::now();
    let (code, report, shown) = validate_json(
        &[
            "--timeout",
            "20s",
            "--only",
            "server.ping",
            "--only",
            "server.discover",
        ],
        &["python3".into(), script],
    );
    assert_eq!(code, 0, "{shown}");
    assert_eq!(
        statuses(&report),
        [
            ("server.ping".to_string(), "pass".to_string()),
            ("server.discover".to_string(), "skip".to_string())
        ],
        "{shown}"
    );
    assert!(
        shown.contains("no answer to `server/discover` within"),
        "{shown}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "waited {:?}: the 20 s --timeout, not the other checks",
        started.elapsed()
    );
}

/// The mock's second origin (`http://localhost:PORT`, where its `[auth]` side serves the
/// authorization server), from the lines it printed (`second: ` and the endpoint's URL there).
fn second_origin(lines: &[String]) -> String {
    let url = lines
        .iter()
        .find_map(|l| l.strip_prefix("second: "))
        .expect("the mock's second origin");
    let host_at = url.find("://").expect("a URL") + 3;
    let path_at = url[host_at..].find('/').map_or(url.len(), |i| host_at + i);
    url[..path_at].to_string()
}

/// Validates, strictly and with `--timeout 3s`, only the check a script file of
/// `tests/validate/*-authorization-server/` is named for, against the mock's authorization
/// server judged on its own (`--authorization-server`: the mock's second origin with the
/// script's `issuer_path`), as the client the mock knows (`--oauth`).
fn one_check_of_authorization_server(path: &Path) -> (String, (i32, Value, String)) {
    let id = check_of(path);
    let (_server, lines) = mock_http(path);
    let second = second_origin(&lines);
    let script = std::fs::read_to_string(path).unwrap();
    let issuer_path = script
        .lines()
        .find_map(|l| l.strip_prefix("issuer_path = \""))
        .map(|rest| rest.trim_end_matches('"'))
        .unwrap_or_default();
    let issuer = format!("{second}{issuer_path}");
    let run = validate_json(
        &[
            "--strict",
            "--timeout",
            "3s",
            "--only",
            &id,
            "--oauth",
            "mcp-conformance-client",
            "--authorization-server",
            &issuer,
        ],
        &[],
    );
    (id, run)
}

/// One test per file of `tests/validate/broken-authorization-server/`.
#[rstest]
fn a_broken_authorization_server_fails_its_check(
    #[files("tests/validate/broken-authorization-server/*.toml")] path: PathBuf,
) {
    let (id, run) = one_check_of_authorization_server(&path);
    let (shown, report) = (run.2.clone(), run.1.clone());
    assert_fails_only(&id, run);
    assert_flow_secrets_hidden(&shown, &report);
}

/// The mock authorization server's code and token are credentials of the flow: neither the
/// output nor the JSON report shows them.
fn assert_flow_secrets_hidden(shown: &str, report: &Value) {
    for secret in ["authz-code-5f1e9a", "access-token-7c3d2b"] {
        assert!(!shown.contains(secret), "{shown}");
        assert!(!report.to_string().contains(secret), "{report}");
    }
}

/// One test per file of `tests/validate/correct-authorization-server/`.
#[rstest]
fn a_correct_authorization_server_passes_its_check(
    #[files("tests/validate/correct-authorization-server/*.toml")] path: PathBuf,
) {
    let (id, (code, report, shown)) = one_check_of_authorization_server(&path);
    assert_eq!(
        (code, statuses(&report)),
        (0, vec![(id.clone(), "pass".to_string())]),
        "{id}: {shown}"
    );
    assert_flow_secrets_hidden(&shown, &report);
}

/// Each check of an authorization server on its own has a broken and a correct scripted one.
#[test]
fn every_authorization_server_check_has_a_broken_and_a_correct_server() {
    let wanted = AUTHORIZATION_SERVER_CHECKS;
    assert_eq!(
        broken_servers_in("tests/validate/broken-authorization-server"),
        wanted
    );
    assert_eq!(
        broken_servers_in("tests/validate/correct-authorization-server"),
        wanted
    );
}

#[test]
fn an_authorization_server_alone_is_judged_on_its_own_checks_and_the_grant_needs_oauth() {
    let dir = tempfile::tempdir().unwrap();
    let script = write(
        dir.path(),
        "as.toml",
        "transport = \"http\"\nsteps = [{ handshake = {} }]\n\n[auth]\nresource_optional = true\n",
    );
    let (_server, lines) = mock_http(&script);
    let second = second_origin(&lines);
    let (code, report, shown) = validate_json(
        &[
            "--strict",
            "--timeout",
            "3s",
            "--authorization-server",
            &second,
        ],
        &[],
    );
    assert_eq!(code, 0, "{shown}");
    let checks = notes(&report);
    assert_eq!(
        checks
            .iter()
            .map(|c| (c.0.as_str(), c.1.as_str()))
            .collect::<Vec<_>>(),
        [
            ("server.auth.server-metadata", "pass"),
            ("server.auth.pkce-s256", "pass"),
            ("server.auth.authorization-code-grant", "skip"),
        ],
        "{shown}"
    );
    assert!(
        checks[2].2.contains("give its id with --oauth"),
        "{checks:?}"
    );
    // A client the authorization server does not know: the grant fails, saying why.
    let (code, report, shown) = validate_json(
        &[
            "--timeout",
            "3s",
            "--only",
            "server.auth.authorization-code-grant",
            "--oauth",
            "unknown-client",
            "--authorization-server",
            &second,
        ],
        &[],
    );
    assert_eq!(code, 1, "{shown}");
    assert!(
        report["targets"][0]["checks"][0]["failure"]["actual"]
            .as_str()
            .is_some_and(|a| a.contains("error `unauthorized_client`")),
        "{report}"
    );
}

#[test]
fn an_authorization_server_that_cannot_be_reached_or_misnamed_options_are_told() {
    let port = free_port();
    let (code, stderr) = bad_input(
        &[
            "--authorization-server",
            &format!("http://127.0.0.1:{port}"),
        ],
        &[],
    );
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("no answer at any of its metadata URLs"),
        "{stderr}"
    );
    for (args, says) in [
        (
            vec![
                "--authorization-server",
                "http://127.0.0.1:9",
                "--url",
                "http://127.0.0.1:9/mcp",
            ],
            "name one server",
        ),
        (
            vec!["--authorization-server", "ftp://127.0.0.1:9"],
            "--authorization-server ftp://127.0.0.1:9/ is not an http or https URL",
        ),
        (
            vec![
                "--authorization-server",
                "http://127.0.0.1:9",
                "--only",
                "server.tools.",
            ],
            "matches no check of an authorization server",
        ),
        (
            vec![
                "--authorization-server",
                "http://127.0.0.1:9",
                "--header",
                "X-A: b",
            ],
            "--header applies to --url",
        ),
    ] {
        let (code, stderr) = bad_input(&args, &[]);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn the_python_sdks_authorization_server_passes_on_its_own() {
    // The SDK's own metadata, authorization and token endpoints (PKCE and the redirect URI
    // checked by the SDK), its provider approving the pre-registered client at once.
    let server = python_auth_http();
    let issuer = server.url.trim_end_matches("/mcp").to_string();
    let (code, report, shown) = validate_json(
        &[
            "--strict",
            "--oauth",
            "validate-client",
            "--authorization-server",
            &issuer,
        ],
        &[],
    );
    assert_eq!(code, 0, "{shown}");
    assert_eq!(
        statuses(&report),
        [
            (
                "server.auth.server-metadata".to_string(),
                "pass".to_string()
            ),
            ("server.auth.pkce-s256".into(), "pass".into()),
            ("server.auth.authorization-code-grant".into(), "pass".into()),
        ],
        "{shown}"
    );
}
