//! `mcp-conformance validate`: against real third-party servers (installed by
//! `tests/validate/install-servers.sh` into `target/validate-servers/`), against deliberately
//! broken scripted servers (one per check, `tests/validate/broken/<check id>.toml`), and with
//! bad input.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
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

fn servers() -> PathBuf {
    root().join("target/validate-servers")
}

/// The installed server-everything entry point; fails the test when it is missing.
fn everything() -> Vec<String> {
    let entry = servers().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.is_file(),
        "server-everything is not installed at {}: run tests/validate/install-servers.sh (CI runs it from .ci/run)",
        entry.display()
    );
    vec!["node".into(), entry.display().to_string(), "stdio".into()]
}

/// The Python SDK server; fails the test when the venv is missing.
fn python_server() -> Vec<String> {
    let python = servers().join("venv/bin/python");
    assert!(
        python.is_file(),
        "the Python SDK venv is not installed at {}: run tests/validate/install-servers.sh (CI runs it from .ci/run)",
        python.display()
    );
    vec![python.display().to_string(), root().join("tests/validate/python_server.py").display().to_string()]
}

fn validate(args: &[&str], command: &[String]) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.arg("validate").args(args);
    if !command.is_empty() {
        cmd.arg("--").args(command);
    }
    cmd.output().expect("run mcp-conformance validate")
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
    let shown = format!("stdout:\n{}\nstderr:\n{}", text(&output.stdout), text(&output.stderr));
    let report = std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("no JSON report ({e}); {shown}"));
    (output.status.code().unwrap_or(-1), serde_json::from_str(&report).unwrap(), shown)
}

fn statuses(report: &Value) -> Vec<(String, String)> {
    report["targets"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().to_string(), c["status"].as_str().unwrap().to_string()))
        .collect()
}

/// Every stdio check ran (none skipped) and either passed or is a baseline entry.
fn assert_keeps_its_baseline(command: &[String], baseline: &str) {
    let baseline = root().join("tests/validate/baseline").join(baseline);
    let (code, report, shown) = validate_json(&["--strict", "--baseline", baseline.to_str().unwrap()], command);
    assert_eq!(code, 0, "{shown}");
    let statuses = statuses(&report);
    for id in STDIO_CHECKS {
        let status = statuses.iter().find(|(i, _)| i == id).map(|(_, s)| s.as_str());
        assert!(matches!(status, Some("pass" | "expected_failure")), "{id}: {status:?}\n{shown}");
    }
    for (id, status) in &statuses {
        if id.starts_with("server.http.") {
            assert_eq!(status, "skip", "{id}");
        }
    }
}

#[test]
fn server_everything_keeps_every_stdio_rule_but_its_baseline() {
    assert_keeps_its_baseline(&everything(), "server-everything.toml");
}

#[test]
fn a_python_sdk_server_keeps_every_stdio_rule_but_its_baseline() {
    assert_keeps_its_baseline(&python_server(), "python-sdk.toml");
}

#[test]
fn server_everything_is_validated_within_its_startup_time_plus_three_seconds() {
    let command = everything();
    let started = Instant::now();
    let startup = validate(&["--only", "server.initialize.result"], &command);
    let startup_time = started.elapsed();
    assert_eq!(startup.status.code(), Some(0), "{}", text(&startup.stderr));
    let started = Instant::now();
    let full = validate(&[], &command);
    let full_time = started.elapsed();
    assert_eq!(full.status.code(), Some(0), "{}", text(&full.stdout));
    println!("startup (one handshake) {startup_time:?}, every check {full_time:?}");
    assert!(full_time <= startup_time + Duration::from_secs(3), "startup {startup_time:?}, full run {full_time:?}");
}

#[test]
fn every_stdio_check_fails_against_its_broken_server() {
    let folder = root().join("tests/validate/broken");
    let mut covered = Vec::new();
    for entry in std::fs::read_dir(&folder).unwrap() {
        let path = entry.unwrap().path();
        let id = path.file_stem().unwrap().to_str().unwrap().to_string();
        let mock = vec![BIN.to_string(), "mock-stdio".into(), "--script".into(), path.display().to_string()];
        let (code, report, shown) = validate_json(&["--strict", "--timeout", "3s", "--only", &id], &mock);
        assert_eq!(code, 1, "{id}: {shown}");
        let statuses = statuses(&report);
        assert_eq!(statuses, vec![(id.clone(), "fail".to_string())], "{id}: {shown}");
        let check = &report["targets"][0]["checks"][0];
        assert!(check["failure"]["expected"].is_string() && check["failure"]["actual"].is_string(), "{check}");
        covered.push(id);
    }
    covered.sort();
    let mut wanted: Vec<String> = STDIO_CHECKS.iter().map(ToString::to_string).collect();
    wanted.sort();
    assert_eq!(covered, wanted, "every stdio check needs a broken server in {}", folder.display());
}

#[test]
fn a_should_check_failing_warns_without_strict_and_fails_with_it() {
    let script = root().join("tests/validate/broken/server.tools.unknown.toml");
    let mock = vec![BIN.to_string(), "mock-stdio".into(), "--script".into(), script.display().to_string()];
    let (code, report, shown) = validate_json(&["--only", "server.tools.unknown"], &mock);
    assert_eq!((code, statuses(&report)[0].1.as_str()), (0, "warn"), "{shown}");
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
    vec![BIN.to_string(), "mock-stdio".into(), "--script".into(), script.display().to_string()]
}

#[test]
fn a_baseline_entry_turns_a_failure_into_an_expected_one_and_goes_stale_when_it_passes() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = write(dir.path(), "baseline.toml", "[[expected]]\ncheck = \"server.ping\"\nreason = \"known\"\n");
    let broken = root().join("tests/validate/broken/server.ping.toml");
    let mock = vec![BIN.to_string(), "mock-stdio".into(), "--script".into(), broken.display().to_string()];
    let args = ["--strict", "--only", "server.ping", "--baseline", baseline.to_str().unwrap()];
    let (code, report, shown) = validate_json(&args, &mock);
    assert_eq!((code, statuses(&report)[0].1.as_str()), (0, "expected_failure"), "{shown}");
    assert!(shown.contains("baseline: known"), "{shown}");
    let (code, report, shown) = validate_json(&args, &healthy_mock(dir.path()));
    assert_eq!((code, statuses(&report)[0].1.as_str()), (1, "stale"), "{shown}");
    assert!(shown.contains("remove the entry"), "{shown}");
}

#[test]
fn reports_come_as_a_table_grouped_by_area_json_and_junit() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("report.xml");
    let output = validate(
        &["--junit", junit.to_str().unwrap(), "--only", "server.ping", "--only", "server.http.origin"],
        &healthy_mock(dir.path()),
    );
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("\n  ping\n    pass    must   server.ping"), "{stdout}");
    assert!(stdout.contains("skipped: an HTTP check; the target is a stdio command"), "{stdout}");
    assert!(stdout.contains("1 passed, 0 failed, 1 skipped"), "{stdout}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("server.ping@2025-11-25") && xml.contains("<skipped"), "{xml}");
}

#[test]
fn several_revisions_run_the_checks_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let (code, report, shown) =
        validate_json(&["--revision", "2024-11-05,2025-06-18", "--only", "server.ping"], &healthy_mock(dir.path()));
    assert_eq!(code, 0, "{shown}");
    let revisions: Vec<&str> =
        report["targets"][0]["checks"].as_array().unwrap().iter().map(|c| c["revision"].as_str().unwrap()).collect();
    assert_eq!(revisions, ["2024-11-05", "2025-06-18"]);
}

/// Runs validate on bad input; returns the exit code and stderr, checking it is one line
/// and that the run was bounded.
fn bad_input(args: &[&str], command: &[&str]) -> (i32, String) {
    let started = Instant::now();
    let command: Vec<String> = command.iter().map(ToString::to_string).collect();
    let output = validate(args, &command);
    assert!(started.elapsed() < Duration::from_secs(8), "took {:?}", started.elapsed());
    let stderr = text(&output.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "not one line: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    (output.status.code().unwrap_or(-1), stderr.trim().to_string())
}

#[test]
fn a_command_that_does_not_exist_is_unreachable() {
    let (code, stderr) = bad_input(&[], &["mcp-conformance-no-such-command"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.starts_with("error: cannot reach the server: cannot start `mcp-conformance-no-such-command`"),
        "{stderr}"
    );
}

#[test]
fn a_server_that_exits_at_once_is_unreachable_with_its_status_and_stderr() {
    let (code, stderr) = bad_input(&[], &["sh", "-c", "echo 'config missing' >&2; exit 3"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("exited with exit status: 3; stderr: config missing"), "{stderr}");
}

#[test]
fn a_server_that_never_answers_is_unreachable_within_the_timeout() {
    let (code, stderr) = bad_input(&["--timeout", "1s"], &["sleep", "30"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("no answer to `initialize`: nothing within 1s"), "{stderr}");
}

#[test]
fn a_url_that_refuses_connections_is_unreachable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, stderr) = bad_input(&["--url", &url], &[]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains(&format!("cannot connect to 127.0.0.1:{port}")), "{stderr}");
    let (code, stderr) = bad_input(&["--url", "not a url"], &[]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn a_reachable_url_has_every_check_skipped_as_not_supported_yet() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", listener.local_addr().unwrap().port());
    let output = validate(&["--url", &url, "--header", "Authorization: Bearer x"], &[]);
    assert_eq!(output.status.code(), Some(2));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("skipped: HTTP targets are not supported yet") && !stdout.contains("pass "), "{stdout}");
}

#[test]
fn a_config_file_with_an_error_is_a_usage_error_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(dir.path(), "mcp.json", "{\"mcpServers\": {\"a\": {\"command\": [1]}}}");
    let (code, stderr) = bad_input(&["--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is not a valid mcpServers config") && stderr.contains("line 1 column"), "{stderr}");
    let (code, stderr) = bad_input(&["--config", dir.path().join("none.json").to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot read the config file"), "{stderr}");
    let good = write(dir.path(), "ok.json", "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}");
    let (code, stderr) = bad_input(&["--config", good.to_str().unwrap(), "b"], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no server named `b`"), "{stderr}");
}

#[test]
fn bad_options_are_usage_errors() {
    for (args, command, wanted) in [
        (vec![], vec![], "name one server"),
        (vec!["--revision", "2020-01-01"], vec!["x"], "--revision `2020-01-01`"),
        (vec!["--only", "client."], vec!["x"], "matches no check"),
        (vec!["--env", "NOEQUALS"], vec!["x"], "is not KEY=VALUE"),
    ] {
        let (code, stderr) = bad_input(&args, &command);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(wanted), "{stderr}");
    }
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
    let output = validate(&["--config", config.to_str().unwrap(), "--only", "server.ping"], &[]);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(stderr.contains("[1/2] good: validating") && stderr.contains("[1/2] good: 1 passed, 0 failed"), "{stderr}");
    assert!(stderr.contains("error: cannot reach missing: cannot start"), "{stderr}");
    assert!(stdout.contains("UNREACHABLE: cannot start") && stdout.contains("2 servers (1 unreachable)"), "{stdout}");
}
