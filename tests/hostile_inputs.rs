//! Hostile files and hostile surroundings: malformed input files (devices, FIFOs, folders,
//! oversized or non-UTF-8 files) for every loader, outputs that cannot be written
//! (`/dev/full`), signals to the validator mid-run, secrets and escapes in command-line
//! input. Each gives one clear error line, a documented exit code, within a bound, and
//! leaves nothing running.

#[path = "hostile/support.rs"]
#[allow(dead_code)]
mod support;

use assert_cmd::Command;
use predicates::prelude::*;
use rstest::rstest;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::*;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-conformance");
/// Every bad-input case ends within this (nothing is waited on but the file system).
const INPUT_BOUND: Duration = Duration::from_secs(5);

fn conformance() -> Command {
    let mut command = Command::new(BIN);
    command.timeout(INPUT_BOUND).write_stdin("");
    command
}

/// A hostile file kind, made at `path`.
fn make(kind: &str, path: &Path) {
    match kind {
        "fifo" => {
            let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: mkfifo reads a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        }
        "device" => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        "folder" => std::fs::create_dir(path).unwrap(),
        "oversized" => std::fs::write(path, "# padding\n".repeat(500_000)).unwrap(),
        "not-utf8" => std::fs::write(path, b"steps = [\xff\xfe]\n").unwrap(),
        other => panic!("unknown kind {other}"),
    }
}

/// What the error says for each kind.
fn reason(kind: &str) -> &'static str {
    match kind {
        "fifo" => "is not a regular file (it is a FIFO)",
        "device" => "is not a regular file (it is a device)",
        "folder" => "is not a regular file (it is a folder)",
        "oversized" => "is larger than 4194304 bytes",
        "not-utf8" => "is not UTF-8 text",
        _ => unreachable!(),
    }
}

#[rstest]
fn a_hostile_input_file_is_one_clear_error(
    #[values(
        "config",
        "baseline",
        "ca-cert",
        "mock-stdio",
        "mock-http",
        "matrix-rows",
        "matrix-baseline"
    )]
    loader: &str,
    #[values("fifo", "device", "folder", "oversized", "not-utf8")] kind: &str,
) {
    assert_one_clear_error(loader, kind);
}

/// A folder in the scenario folder is searched, not read: the scenario loaders get the
/// other kinds.
#[rstest]
fn a_hostile_scenario_file_is_one_clear_error(
    #[values("run", "list")] loader: &str,
    #[values("fifo", "device", "oversized", "not-utf8")] kind: &str,
) {
    assert_one_clear_error(loader, kind);
}

fn assert_one_clear_error(loader: &str, kind: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.toml");
    make(kind, &file);
    let f = file.to_str().unwrap();
    // The rows naming `file` as a row's baseline (loader `matrix-baseline`).
    let rows = dir.path().join("rows.toml");
    let (args, says): (Vec<&str>, &str) = match loader {
        "config" => (
            vec!["validate", "--config", f],
            "cannot read the config file",
        ),
        "baseline" => (
            vec!["validate", "--baseline", f, "--", "true"],
            "cannot read the baseline",
        ),
        "ca-cert" => (
            vec![
                "validate",
                "--url",
                "https://127.0.0.1:9/mcp",
                "--ca-cert",
                f,
            ],
            "--ca-cert",
        ),
        "run" => (
            vec!["run", "--scenarios", dir.path().to_str().unwrap()],
            "cannot read scenario",
        ),
        "list" => (
            vec!["list", "--scenarios", dir.path().to_str().unwrap()],
            "cannot read scenario",
        ),
        "matrix-rows" => (
            vec!["matrix", "--no-build", "--rows", f, "stdio/"],
            "cannot read the rows",
        ),
        "matrix-baseline" => {
            // Read before any build or driver starts: the build would fail the matrix.
            std::fs::write(
                &rows,
                format!(
                    "[[row]]\nname = \"x\"\nprofile = \"strict\"\nbuild = \"false\"\n\
                     driver = \"{{mcp-conformance}} driver --profile strict\"\nbaseline = {f:?}\n"
                ),
            )
            .unwrap();
            (
                vec!["matrix", "--rows", rows.to_str().unwrap(), "stdio/"],
                "cannot read the baseline",
            )
        }
        "mock-stdio" => (vec!["mock-stdio", "--script", f], "cannot read"),
        "mock-http" => (vec!["mock-http", "--script", f], "cannot read"),
        _ => unreachable!(),
    };
    let started = Instant::now();
    let assert = conformance().args(&args).assert().code(2).stdout("");
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(started.elapsed() < INPUT_BOUND);
    assert_eq!(stderr.trim().lines().count(), 1, "not one line: {stderr}");
    // A certificate file is bytes: not UTF-8 is not PEM.
    let reason = if (loader, kind) == ("ca-cert", "not-utf8") {
        "holds no PEM certificate"
    } else {
        reason(kind)
    };
    assert!(
        stderr.contains(says) && stderr.contains(reason),
        "{loader}/{kind}: {stderr}"
    );
    assert!(
        stderr.contains(f),
        "{loader}/{kind} does not name the file: {stderr}"
    );
}

#[rstest]
#[case::crash("{ crash = { code = 256 } }", "exit code 256 is outside 0-255")]
#[case::exit("{ exit = { code = 256 } }", "exit code 256 is outside 0-255")]
#[case::negative("{ exit = { code = -1 } }", "exit code -1 is outside 0-255")]
fn a_mock_exit_code_that_would_wrap_is_refused_at_load(#[case] step: &str, #[case] says: &str) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.toml");
    std::fs::write(
        &script,
        format!("steps = [{{ handshake = {{}} }}, {step}]\n"),
    )
    .unwrap();
    for mock in ["mock-stdio", "mock-http"] {
        conformance()
            .args([mock, "--script", script.to_str().unwrap()])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says).and(predicate::str::contains("steps[1]")));
    }
}

/// `/dev/full` as stdout: a clear message and the harness-fault exit code, never a panic.
#[rstest]
#[case::list(&["list"])]
#[case::profile(&["profile", "show", "strict"])]
#[case::validate(&["validate", "--only", "server.ping", "--", "PYTHON", "-S", "tests/hostile/stdio/control-well-behaved.py"])]
#[case::run(&["run", "stdio/banner-before-initialize"])]
fn a_stdout_that_cannot_be_written_is_a_clear_error(#[case] args: &[&str]) {
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "PYTHON" { python() } else { a })
        .collect();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = std::process::Command::new(BIN)
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("error: cannot write to stdout: No space left on device"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_stderr_that_cannot_be_written_is_no_panic() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = std::process::Command::new(BIN)
        .args(["validate", "--", "mcp-conformance-no-such-command"])
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(4));
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = std::process::Command::new(BIN)
        .args(["validate", "--timeout", "soon"])
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(3),
        "a usage error that cannot be shown is a harness fault"
    );
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = std::process::Command::new(BIN)
        .args(["mock-stdio", "--script", "/dev/zero"])
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "the mock's usage error, unseen but no panic"
    );
}

/// SIGINT, SIGTERM and SIGHUP to the validator mid-run: every server process ends (the one
/// that ignores signals, its child that escaped with setsid, its daemonized grandchild), and
/// the exit code is 128 plus the signal's number.
#[rstest]
#[case::sigint(libc::SIGINT, "SIGINT")]
#[case::sigterm(libc::SIGTERM, "SIGTERM")]
#[case::sighup(libc::SIGHUP, "SIGHUP")]
fn a_signal_to_the_validator_ends_every_server_process(#[case] signal: i32, #[case] name: &str) {
    let mark = format!("mcp-hostile-signal-{}-{name}", std::process::id());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/signal-target.py");
    let mut command = std::process::Command::new(BIN);
    command
        .args(["validate", "--timeout", "30s", "--", python(), "-S"])
        .arg(&script);
    // The validator, then its servers (each with an escaped child and grandchild).
    assert_a_signal_mid_run_leaves_nothing(command, &mark, 7, signal, name);
}

/// Starts `command` with `mark` in its environment, waits (bounded) until `processes` carry
/// it, sends `signal`, and asserts the run stops at once with 128 plus the signal's number,
/// saying so, and leaves no process carrying the mark.
fn assert_a_signal_mid_run_leaves_nothing(
    mut command: std::process::Command,
    mark: &str,
    processes: usize,
    signal: i32,
    name: &str,
) {
    let child = command
        .env("MCP_HOSTILE_MARK", mark)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    // Judged on the scan that ended the wait: short-lived sessions (a handshake, then killed)
    // come and go between two scans.
    let seen = loop {
        let now = processes_marked_now(mark);
        if now.len() >= processes || Instant::now() >= deadline {
            break now;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        seen.len() >= processes,
        "the servers did not start: {seen:?}"
    );
    let sent = Instant::now();
    // SAFETY: kill sends a signal to our own child.
    assert_eq!(
        unsafe { libc::kill(i32::try_from(child.id()).unwrap(), signal) },
        0
    );
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "took {:?} to stop",
        sent.elapsed()
    );
    assert_eq!(output.status.code(), Some(128 + signal), "{stderr}");
    assert!(
        stderr.contains(&format!("error: interrupted by {name}")),
        "{stderr}"
    );
    let left = processes_marked(mark);
    assert!(left.is_empty(), "processes left after {name}: {left:?}");
}

/// Live processes carrying `mark` right now (no waiting).
fn processes_marked_now(mark: &str) -> Vec<(u32, String)> {
    support::scan(mark)
}

#[rstest]
#[case::header_without_colon(&["--url", "http://127.0.0.1:9/mcp", "--header", "Authorization Bearer sk-live-0123456789"], 2, "--header number 1 is not `Name: value`")]
#[case::header_bad_name(&["--url", "http://127.0.0.1:9/mcp", "--header", "Authorization Bearer sk-live-0123456789 x: y"], 2, "does not start with a valid header name")]
#[case::url_bad_port(&["--url", "http://admin:sk-live-0123456789@127.0.0.1:99999/mcp"], 2, "--url is not a valid URL: invalid port number")]
#[case::url_not_http(&["--url", "ftp://admin:sk-live-0123456789@127.0.0.1/mcp"], 2, "is not an http or https URL")]
#[case::url_refused(&["--url", "http://admin:sk-live-0123456789@127.0.0.1:9/mcp/sk-live-0123456789?key=sk-live-0123456789", "--header", "X-Key: sk-live-0123456789"], 4, "cannot connect to 127.0.0.1:9")]
#[case::env_echoed(&["--env", "KEY=sk-live-0123456789", "--", "sh", "-c", "echo \"bad key $KEY\" >&2; exit 1"], 4, "bad key [redacted]")]
fn a_secret_on_the_command_line_never_reaches_an_error(
    #[case] args: &[&str],
    #[case] code: i32,
    #[case] says: &str,
) {
    conformance()
        .arg("validate")
        .args(args)
        .assert()
        .code(code)
        .stderr(predicate::str::contains(says))
        .stderr(predicate::str::contains("sk-live-0123456789").not())
        .stdout(predicate::str::contains("sk-live-0123456789").not());
}

#[test]
fn a_config_file_keeps_its_secrets_and_its_escapes_out_of_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mcp.json");
    let json = serde_json::json!({"mcpServers": {
        "evil\u{1b}[2J\rname": {"url": "http://127.0.0.1:9/mcp?token=sk-live-0123456789", "headers": {"Authorization": "Bearer cfg-secret-42"}},
        "stdio": {"command": "sh", "args": ["-c", "echo \"token $TOKEN\" >&2; exit 1"], "env": {"TOKEN": "cfg-env-secret-77"}},
    }});
    std::fs::write(&config, json.to_string()).unwrap();
    let json_report = dir.path().join("r.json");
    let assert = conformance()
        .args([
            "validate",
            "--config",
            config.to_str().unwrap(),
            "--json",
            json_report.to_str().unwrap(),
        ])
        .assert()
        .code(4);
    let output = assert.get_output();
    let all = format!(
        "{}{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
        std::fs::read_to_string(&json_report).unwrap()
    );
    for secret in ["sk-live-0123456789", "cfg-secret-42", "cfg-env-secret-77"] {
        assert!(!all.contains(secret), "{secret} in:\n{all}");
    }
    assert!(all.contains("evil\\x1b[2J\\rname"), "{all}");
    let terminal = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        !terminal.chars().any(|c| c.is_control() && c != '\n'),
        "{terminal}"
    );
}

#[rstest]
#[case::a_day("86400s", "name one server")]
#[case::tiny("1e-300", "`1e-300` is shorter than the least bound, 1ms")]
#[case::too_long("86401s", "is longer than the greatest bound, 86400s")]
#[case::not_a_number("soon", "`soon` is not a duration")]
fn timeouts_are_bounded_with_clear_errors(#[case] timeout: &str, #[case] says: &str) {
    conformance()
        .args(["validate", "--timeout", timeout])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(says));
}

#[test]
fn a_fifo_named_like_a_scenario_does_not_hang_the_runner() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("stdio")).unwrap();
    make("fifo", &dir.path().join("stdio/hang.toml"));
    let scenarios: PathBuf = dir.path().into();
    conformance()
        .args(["run", "--scenarios", scenarios.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "hang.toml: is not a regular file (it is a FIFO)",
        ));
}

/// The runner drives the reference client against a mock that writes terminal escapes, from
/// a scenario file whose name holds them too: the same promises as the validator's (exit
/// code, wall time, peak memory, no raw control character, no process left).
#[test]
fn the_runner_keeps_its_promises_against_a_hostile_mock() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("stdio")).unwrap();
    let scenario = |expect_log: &str| {
        format!(
            r#"rules = ["stdio.banner.skipped"]
requirement = "escapes from a server are logged, never obeyed"
profiles = ["strict"]

[server]
steps = [
  {{ banner = {{ lines = ["\u001b[2J\u001b]0;pwned\u0007\r  12 passed, 0 failed \u009b31m"] }} }},
  {{ handshake = {{}} }},
  {{ expect = {{ method = "tools/call" }} }},
  {{ reply = {{ result = {{ content = [{{ type = "text", text = "\u001b[1A\rforged" }}] }} }} }},
]

[client]
steps = [{{ connect = {{}} }}, {{ call_tool = {{ name = "echo" }} }}, {{ close = {{}} }}]

[expect]
steps = [{{ step = 1, ok = true }}, {{ step = 2, ok = true }}]
logs = [{{ level = "WARN", contains = "{expect_log}" }}]
"#
        )
    };
    std::fs::write(
        dir.path().join("stdio/evil\u{1b}[2J\rname.toml"),
        scenario("0 failed"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("stdio/fails.toml"),
        scenario("a log line that never comes"),
    )
    .unwrap();
    let mark = format!("mcp-hostile-runner-{}", std::process::id());
    let mut command = std::process::Command::new(BIN);
    command
        .args(["run", "--scenarios"])
        .arg(dir.path())
        .env("MCP_HOSTILE_MARK", &mark)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let (output, wall, peak_mib) = run_measured(command);
    let terminal = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(1), "{terminal}");
    assert!(
        terminal.contains("stdio/evil\\x1b[2J\\rname  strict    pass"),
        "{terminal}"
    );
    assert!(terminal.contains("1 passed, 1 failed"), "{terminal}");
    assert!(
        !terminal.chars().any(|c| c.is_control() && c != '\n'),
        "{terminal}"
    );
    assert!(wall < Duration::from_secs(10), "took {wall:?}");
    assert!(peak_mib < RSS_BOUND_MIB, "peak {peak_mib} MiB");
    let left = processes_marked(&mark);
    assert!(left.is_empty(), "processes left: {left:?}");
}

/// SIGINT, SIGTERM and SIGHUP to `run` mid-scenario: the scripted server (in a process group
/// of its own, so a Ctrl-C at the terminal would not reach it) and the child it started end,
/// and the exit code is 128 plus the signal's number.
#[rstest]
#[case::sigint(libc::SIGINT, "SIGINT")]
#[case::sigterm(libc::SIGTERM, "SIGTERM")]
#[case::sighup(libc::SIGHUP, "SIGHUP")]
fn a_signal_to_run_ends_every_server_process(#[case] signal: i32, #[case] name: &str) {
    let mark = format!("mcp-run-signal-{}-{name}", std::process::id());
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir(folder.path().join("x")).unwrap();
    std::fs::write(
        folder.path().join("x/stalls.toml"),
        r#"rules = ["timeouts.call.bounded"]
requirement = "a call the server never answers, for the signal to arrive during"

[server]
steps = [{ spawn_child = {} }, { handshake = {} }, { expect = { method = "tools/call" } }, { stall = {} }]

[client]
own_process_group = true
timeouts = { call_ms = 60000 }
steps = [{ connect = {} }, { call_tool = { name = "echo" } }]

[expect]
steps = [{ step = 2, ok = false }]
"#,
    )
    .unwrap();
    let mut command = std::process::Command::new(BIN);
    command
        .args(["run", "--profile", "strict", "--scenarios"])
        .arg(folder.path());
    // `run`, then the server and its child.
    assert_a_signal_mid_run_leaves_nothing(command, &mark, 3, signal, name);
}

/// SIGINT and SIGTERM to `run --client` while its driver daemonizes a child every few
/// milliseconds (forks, `setsid`s and hand-overs to the subreaper under way when the signal
/// comes): every one of them ends. One look at the process tree missed the processes started
/// while it was read (about one signal run in 17 left one behind); this storm makes that
/// window wide.
#[rstest]
#[case::sigint(libc::SIGINT, "SIGINT")]
#[case::sigterm(libc::SIGTERM, "SIGTERM")]
fn a_signal_to_run_during_a_fork_storm_ends_every_process(#[case] signal: i32, #[case] name: &str) {
    let mark = format!("mcp-run-storm-{}-{name}", std::process::id());
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/signal-driver.py");
    let mut command = std::process::Command::new(BIN);
    command
        .args(["run", "--client"])
        .arg(format!("{} -S {}", python(), driver.display()))
        .args(["--step-guard-ms", "30000", "stdio/banner-before-initialize"]);
    // `run`, the driver, and daemons of its storm.
    assert_a_signal_mid_run_leaves_nothing(command, &mark, 40, signal, name);
}

/// A row's build that never ends is killed with everything it started once past
/// `--build-timeout-s`: the matrix stops with a harness fault naming the bound, in time, and
/// leaves nothing running.
#[test]
fn a_matrix_build_past_its_time_limit_is_killed_with_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let rows = dir.path().join("rows.toml");
    std::fs::write(
        &rows,
        "[[row]]\nname = \"x\"\nprofile = \"strict\"\nbuild = \"sh -c 'sleep 300 & sleep 300'\"\n\
         driver = \"{mcp-conformance} driver --profile strict\"\n",
    )
    .unwrap();
    let mark = format!("mcp-hostile-build-{}", std::process::id());
    let mut command = std::process::Command::new(BIN);
    command
        .args(["matrix", "--build-timeout-s", "1", "--rows"])
        .arg(&rows)
        .arg("stdio/")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("MCP_HOSTILE_MARK", &mark)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let (output, wall, peak_mib) = run_measured(command);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("took longer than 1 s (--build-timeout-s) and was killed"),
        "{stderr}"
    );
    assert!(wall < INPUT_BOUND, "took {wall:?}");
    assert!(peak_mib < RSS_BOUND_MIB, "peak {peak_mib} MiB");
    let left = processes_marked(&mark);
    assert!(left.is_empty(), "processes left: {left:?}");
}

/// A valid scenario but for `client_steps`, `client_http` and `server_steps`.
fn scenario_text(client_steps: &str, client_http: &str, server_steps: &str) -> String {
    format!(
        "rules = [\"stdio.banner.skipped\"]\nrequirement = \"x\"\n\n[server]\nsteps = [{server_steps}]\n\n\
         [client]\n{client_http}steps = [{client_steps}]\n\n[expect]\nsteps = []\n"
    )
}

/// Scenario files under the 4 MiB cap that would expand to hundreds of megabytes (or ask
/// for a setting no scenario needs) are refused at load: exit 2, one short line naming the
/// bound, within [`INPUT_BOUND`] and [`RSS_BOUND_MIB`]; a syntax error on a line of 600 KB
/// shows its place and a short message, never the line.
#[rstest]
#[case::client_steps("client-steps", "too large to load: it holds more than 20000 values")]
#[case::server_steps("server-steps", "too large to load: it holds more than 20000 values")]
#[case::integers("integers", "too large to load: it holds more than 20000 values")]
#[case::deep("deep", "nests arrays and tables deeper than 64 levels")]
#[case::max_body(
    "max-body",
    "max_body_bytes = 9223372036854775807 is over the maximum, 67108864 bytes"
)]
#[case::steps_over_max(
    "steps-over-max",
    "the client has 2001 steps, over the maximum of 2000"
)]
#[case::long_line_error("long-line-error", "x.toml: line 5, column 600018: expected newline")]
fn a_scenario_that_would_expand_is_refused_within_bounds(#[case] kind: &str, #[case] says: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("x")).unwrap();
    let text = match kind {
        "client-steps" => scenario_text(&"{close={}},".repeat(300_000), "", "{handshake={}}"),
        "server-steps" => scenario_text("{connect={}}", "", &"{handshake={}},".repeat(190_000)),
        "integers" => scenario_text(
            &format!(
                "{{call_tool={{name=\"e\",arguments={{a=[{}0]}}}}}}",
                "0,".repeat(2_000_000)
            ),
            "",
            "{handshake={}}",
        ),
        "deep" => scenario_text(
            &format!(
                "{{call_tool={{name=\"e\",arguments={{a={}{}}}}}}}",
                "[".repeat(300_000),
                "]".repeat(300_000)
            ),
            "",
            "{handshake={}}",
        ),
        "max-body" => scenario_text(
            "{connect={}}",
            "http = { max_body_bytes = 9223372036854775807 }\n",
            "{handshake={}}",
        ),
        "steps-over-max" => scenario_text(&"{close={}},".repeat(2_001), "", "{handshake={}}"),
        "long-line-error" => format!(
            "rules = [\"stdio.banner.skipped\"]\n\n\n\nrequirement = \"{}\" garbage\n",
            "x".repeat(600_000)
        ),
        _ => unreachable!(),
    };
    assert!(text.len() < 4 << 20, "{kind}: {} bytes", text.len());
    std::fs::write(dir.path().join("x/x.toml"), text).unwrap();
    let mut command = std::process::Command::new(BIN);
    command
        .args(["run", "--scenarios"])
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let (output, wall, peak_mib) = run_measured(command);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!(
        "{kind}: exit {:?}, {wall:?}, peak {peak_mib} MiB",
        output.status.code()
    );
    assert_eq!(output.status.code(), Some(2), "{kind}: {stderr:.2000}");
    assert!(stderr.contains(says), "{kind}: {stderr:.2000}");
    assert_eq!(stderr.trim().lines().count(), 1, "{kind}: {stderr:.2000}");
    assert!(
        stderr.len() < 1000,
        "{kind}: {} bytes of error",
        stderr.len()
    );
    assert!(wall < INPUT_BOUND, "{kind}: took {wall:?}");
    assert!(peak_mib < RSS_BOUND_MIB, "{kind}: peak {peak_mib} MiB");
}

/// A matrix row whose driver's children leave its process group (`setsid`, a double fork):
/// they are found and ended by the time `matrix` exits.
#[test]
fn a_matrix_row_whose_driver_escapes_its_group_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let rows = dir.path().join("rows.toml");
    let driver =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/drivers/setsid-escapee.py");
    std::fs::write(
        &rows,
        format!(
            "[[row]]\nname = \"x\"\nprofile = \"strict\"\ndriver = \"{} -S {}\"\n",
            python(),
            driver.display()
        ),
    )
    .unwrap();
    let mark = format!("mcp-hostile-matrix-escapee-{}", std::process::id());
    let mut command = std::process::Command::new(BIN);
    command
        .args(["matrix", "--no-build", "--rows"])
        .arg(&rows)
        .arg("stdio/")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("MCP_HOSTILE_MARK", &mark)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let (output, wall, peak_mib) = run_measured(command);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(wall < Duration::from_secs(60), "took {wall:?}");
    assert!(peak_mib < RSS_BOUND_MIB, "peak {peak_mib} MiB");
    let left = processes_marked(&mark);
    assert!(left.is_empty(), "{} processes left: {left:?}", left.len());
}
