//! Bad input gets one clear error naming the file and the cause.

use super::support::*;
use assert_cmd::Command;
use mcp_conformance::scenario;
use predicates::function::function;
use predicates::prelude::*;
use predicates::str::contains;
use rstest::rstest;
use std::path::Path;

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
    assert!(
        message.contains("case.toml"),
        "the error names no file: {message}"
    );
    message
}

#[test]
fn the_valid_base_case_loads() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("case.toml");
    std::fs::write(&path, VALID).unwrap();
    scenario::load(folder.path(), &path).unwrap();
}

/// Each bad file: the edit that breaks the valid base case, and what its one error must name.
#[rstest]
#[case::malformed_toml_names_the_line("requirement = \"r\"", "requirement = \"r", &["line 3"])]
#[case::an_unknown_rule_id_names_the_rule_and_its_line("stdio.ping.answered", "stdio.ping.ansered", &["case.toml:2", "stdio.ping.ansered"])]
#[case::an_unknown_misbehaviour_names_itself_and_its_line("{ handshake = {} }", "{ explode = {} }", &["explode", "line 6"])]
#[case::an_unknown_field_is_refused("steps = [{ connect = {} }]", "steps = [{ connect = {} }]\ntimeout = 5", &["timeout"])]
#[case::an_unknown_profile_is_refused("requirement = \"r\"", "requirement = \"r\"\nprofiles = [\"strcit\"]", &["strcit"])]
fn a_bad_scenario_file_is_one_error_naming_the_cause(
    #[case] valid: &str,
    #[case] broken: &str,
    #[case] named: &[&str],
) {
    assert!(VALID.contains(valid), "the case edits nothing: {valid}");
    let message = load_error(&VALID.replace(valid, broken));
    for part in named {
        assert!(message.contains(part), "{part} not named: {message}");
    }
}

#[test]
fn a_script_that_cannot_parse_stops_the_mock_with_a_usage_error() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("broken-script.toml");
    std::fs::write(&path, "steps = [{ handshake = {} }\n").unwrap();
    Command::new(conformance_bin())
        .args(["mock-stdio", "--script"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(
            contains("broken-script.toml").and(function(|e: &str| e.trim().lines().count() == 1)),
        );
}

fn run_cli(args: &[&str], scenarios: &Path) -> assert_cmd::assert::Assert {
    Command::new(conformance_bin())
        .args(args)
        .arg("--scenarios")
        .arg(scenarios)
        .assert()
}

#[test]
fn the_cli_refuses_a_broken_scenario_folder_with_usage_exit_code() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("bad.toml"), "rules = [").unwrap();
    run_cli(&["run"], folder.path())
        .code(2)
        .stderr(contains("bad.toml"));
}

#[test]
fn the_cli_refuses_an_unknown_profile_and_an_unmatched_prefix() {
    run_cli(&["run", "--profile", "strcit"], &scenarios_root())
        .code(2)
        .stderr(contains("strcit"));
    run_cli(&["run", "no-such-area/"], &scenarios_root())
        .code(2)
        .stderr(contains("no-such-area/"));
}

#[test]
fn the_cli_runs_a_prefix_and_writes_json_and_junit_reports() {
    let folder = tempfile::tempdir().unwrap();
    let json = folder.path().join("report.json");
    let junit = folder.path().join("report.xml");
    Command::new(conformance_bin())
        .args(["run", "lifecycle/", "--profile", "all", "--json"])
        .arg(&json)
        .arg("--junit")
        .arg(&junit)
        .arg("--scenarios")
        .arg(scenarios_root())
        .assert()
        .code(0)
        .stdout(contains("lifecycle/handshake-bounded").and(contains(" passed, 0 failed")));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["summary"]["failed"], 0);
    assert!(report["results"].as_array().unwrap().len() >= 10);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testsuite") && xml.contains("lifecycle/handshake-bounded"),
        "{xml}"
    );
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
    run_cli(&["run", "--profile", "strict"], folder.path())
        .code(1)
        .stdout(
            contains("expected: an error")
                .and(contains("actual:"))
                .and(contains("0 passed, 1 failed")),
        );
}

#[test]
fn the_cli_refuses_an_unknown_revision() {
    run_cli(&["run", "--revision", "2027-13-01"], &scenarios_root())
        .code(2)
        .stderr(contains("unknown revision `2027-13-01`"));
    run_cli(&["list", "--revision", "latest"], &scenarios_root())
        .code(2)
        .stderr(contains("2026-07-28"));
}

#[test]
fn a_listing_at_2026_07_28_neither_shows_nor_counts_the_handshake_ping_or_sessions() {
    let listed = |args: &[&str]| {
        String::from_utf8(
            run_cli(args, &scenarios_root())
                .code(0)
                .get_output()
                .stdout
                .clone(),
        )
        .unwrap()
    };
    let everything = listed(&["list"]);
    let modern = listed(&["list", "--revision", "2026-07-28"]);
    for gone in [
        "lifecycle.initialize.sent-first ",
        "stdio.ping.answered ",
        "http.session.captured ",
        "lifecycle/handshake-bounded",
    ] {
        assert!(
            everything.contains(gone) && !modern.contains(gone),
            "{gone}"
        );
    }
    for kept in [
        "stateless.discover.fallback ",
        "stdio.framing.newline ",
        "stateless/fallback-stdio",
    ] {
        assert!(modern.contains(kept), "{kept}");
    }
    let count = |text: &str| {
        text.lines()
            .last()
            .unwrap_or_default()
            .split(' ')
            .next()
            .unwrap_or_default()
            .parse::<usize>()
            .unwrap()
    };
    assert!(count(&modern) < count(&everything), "{modern}");
}
