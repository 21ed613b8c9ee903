//! The mock binaries' command lines, run as real processes: help, version and usage errors
//! with their exit codes, and the HTTP mock printing where it listens.

use assert_cmd::Command;
use predicates::function::function;
use predicates::prelude::*;
use predicates::str::{contains, starts_with};
use rstest::rstest;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

const STDIO: &str = env!("CARGO_BIN_EXE_mcp-mock-stdio");
const HTTP: &str = env!("CARGO_BIN_EXE_mcp-mock-http");

#[rstest]
#[case::stdio_help(STDIO, &["--help"], 0, "Usage: mcp-mock-stdio --script FILE")]
#[case::http_help(HTTP, &["--help"], 0, "Usage: mcp-mock-http --script FILE")]
#[case::stdio_version(STDIO, &["--version"], 0, concat!("mcp-mock-stdio ", env!("CARGO_PKG_VERSION")))]
#[case::http_version(HTTP, &["--version"], 0, concat!("mcp-mock-http ", env!("CARGO_PKG_VERSION")))]
fn help_and_version_print_on_stdout_and_succeed(
    #[case] program: &str,
    #[case] args: &[&str],
    #[case] code: i32,
    #[case] printed: &str,
) {
    Command::new(program)
        .args(args)
        .assert()
        .code(code)
        .stdout(contains(printed))
        .stderr("");
}

#[rstest]
#[case::stdio_without_a_script(STDIO, &[], "--script <FILE>")]
#[case::http_without_a_script(HTTP, &[], "--script <FILE>")]
#[case::stdio_unknown_option(STDIO, &["--script", "x.toml", "--verbose"], "--verbose")]
#[case::http_unknown_option(HTTP, &["--script", "x.toml", "--port", "1"], "--port")]
fn usage_errors_exit_2_naming_the_problem_on_stderr(
    #[case] program: &str,
    #[case] args: &[&str],
    #[case] named: &str,
) {
    Command::new(program)
        .args(args)
        .assert()
        .code(2)
        .stdout("")
        .stderr(contains(named).and(contains("Usage:")));
}

/// A script whose steps need the other transport: one usage error naming the file.
#[rstest]
#[case::stdio_given_an_http_script(STDIO, "transport = \"http\"\nsteps = [{ hang = {} }]\n")]
#[case::stdio_given_an_http_step(STDIO, "steps = [{ hang = {} }]\n")]
#[case::http_given_a_stdio_script(HTTP, "steps = [{ handshake = {} }]\n")]
fn a_script_for_the_other_transport_is_a_usage_error(#[case] program: &str, #[case] text: &str) {
    let folder = tempfile::tempdir().unwrap();
    let script = folder.path().join("script.toml");
    std::fs::write(&script, text).unwrap();
    Command::new(program)
        .arg("--script")
        .arg(&script)
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(contains("script.toml").and(function(|e: &str| e.trim().lines().count() == 1)));
}

#[test]
fn the_http_mock_prints_its_loopback_url_first_and_ends_when_the_script_is_done_and_stdin_closes() {
    let folder = tempfile::tempdir().unwrap();
    let script = folder.path().join("script.toml");
    std::fs::write(&script, "transport = \"http\"\nsteps = []\n").unwrap();
    let mut child = std::process::Command::new(HTTP)
        .arg("--script")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(
        starts_with("http://127.0.0.1:").eval(first.trim()),
        "{first}"
    );
    child.stdin.take().unwrap().write_all(b"").unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}
