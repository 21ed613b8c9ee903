//! Bad input gets one clear error naming the file and the cause.

use super::support::*;
use mcp_conformance::scenario;
use std::path::Path;
use std::process::Command;

const VALID: &str = r#"
rules = ["stdio.ping.answered"]
requirement = "r"

[server]
steps = [{ handshake = {} }]

[client]
steps = [{ connect = {} }]

[expect]
"#;

fn load_error(text: &str) -> String {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("case.toml");
    std::fs::write(&path, text).unwrap();
    let error = scenario::load(folder.path(), &path).expect_err("the scenario must not load");
    let message = mcp_conformance::error_chain(&error);
    assert!(message.contains("case.toml"), "the error names no file: {message}");
    message
}

#[test]
fn the_valid_base_case_loads() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("case.toml");
    std::fs::write(&path, VALID).unwrap();
    scenario::load(folder.path(), &path).unwrap();
}

#[test]
fn malformed_toml_names_the_line() {
    let message = load_error(&VALID.replace("requirement = \"r\"", "requirement = \"r"));
    assert!(message.contains("line 3"), "{message}");
}

#[test]
fn an_unknown_rule_id_names_the_rule_and_its_line() {
    let message = load_error(&VALID.replace("stdio.ping.answered", "stdio.ping.ansered"));
    assert!(message.contains("case.toml:2") && message.contains("stdio.ping.ansered"), "{message}");
}

#[test]
fn an_unknown_misbehaviour_names_itself_and_its_line() {
    let message = load_error(&VALID.replace("{ handshake = {} }", "{ explode = {} }"));
    assert!(message.contains("explode") && message.contains("line 6"), "{message}");
}

#[test]
fn an_unknown_field_is_refused() {
    let message = load_error(&VALID.replace("steps = [{ connect = {} }]", "steps = [{ connect = {} }]\ntimeout = 5"));
    assert!(message.contains("timeout"), "{message}");
}

#[test]
fn an_unknown_profile_is_refused() {
    let message = load_error(&VALID.replace("requirement = \"r\"", "requirement = \"r\"\nprofiles = [\"strcit\"]"));
    assert!(message.contains("strcit"), "{message}");
}

#[test]
fn a_script_that_cannot_parse_stops_the_mock_with_a_usage_error() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("broken-script.toml");
    std::fs::write(&path, "steps = [{ handshake = {} }\n").unwrap();
    let output = Command::new(conformance_bin()).args(["mock-stdio", "--script"]).arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("broken-script.toml"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line wanted: {stderr}");
}

fn run_cli(args: &[&str], scenarios: &Path) -> std::process::Output {
    Command::new(conformance_bin()).args(args).arg("--scenarios").arg(scenarios).output().unwrap()
}

#[test]
fn the_cli_refuses_a_broken_scenario_folder_with_usage_exit_code() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("bad.toml"), "rules = [").unwrap();
    let output = run_cli(&["run"], folder.path());
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("bad.toml"));
}

#[test]
fn the_cli_refuses_an_unknown_profile_and_an_unmatched_prefix() {
    let output = run_cli(&["run", "--profile", "strcit"], &scenarios_root());
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("strcit"));
    let output = run_cli(&["run", "no-such-area/"], &scenarios_root());
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no-such-area/"));
}

#[test]
fn the_cli_runs_a_prefix_and_writes_json_and_junit_reports() {
    let folder = tempfile::tempdir().unwrap();
    let json = folder.path().join("report.json");
    let junit = folder.path().join("report.xml");
    let output = Command::new(conformance_bin())
        .args(["run", "lifecycle/", "--profile", "all", "--json"])
        .arg(&json)
        .arg("--junit")
        .arg(&junit)
        .arg("--scenarios")
        .arg(scenarios_root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("lifecycle/handshake-bounded") && stdout.contains(" passed, 0 failed"), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["summary"]["failed"], 0);
    assert!(report["results"].as_array().unwrap().len() >= 10);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testsuite") && xml.contains("lifecycle/handshake-bounded"), "{xml}");
}

#[test]
fn a_failing_scenario_gives_exit_code_1_with_expected_and_actual() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir(folder.path().join("x")).unwrap();
    std::fs::write(
        folder.path().join("x/wrong.toml"),
        VALID.replace("[expect]", "[expect]\nsteps = [{ step = 1, ok = false }]"),
    )
    .unwrap();
    let output = run_cli(&["run", "--profile", "strict"], folder.path());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("expected: an error") && stdout.contains("actual:"), "{stdout}");
    assert!(stdout.contains("0 passed, 1 failed"), "{stdout}");
}
