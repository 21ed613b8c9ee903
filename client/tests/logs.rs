//! The reference client's own log rules, asserted on what it logged (tracing-test): a banner
//! at WARN, skipped notifications at DEBUG, stderr at DEBUG under its own target, a declined
//! server request at WARN. (A `#[traced_test]` test on tokio's current-thread runtime polls
//! the client's reader and stderr tasks inside its span, so it sees its connection's lines.)

#![cfg(unix)]

use mcp_refclient::{ClientConfig, McpClient, Profile, StdioServer};
use tracing_test::traced_test;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}"#;
const TOOLS: &str = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#;

/// A `sh` server: `before` ahead of the handshake, then `body` once it read `initialized`.
async fn connect(before: &str, body: &str) -> McpClient {
    let script = format!("{before} read init; echo '{INIT}'; read initialized; {body}");
    let server = StdioServer {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        ..Default::default()
    };
    // These servers speak the handshake revisions only: the client is pinned to them.
    let config = ClientConfig {
        revision: Some(mcp_refclient::LATEST_PROTOCOL_VERSION.into()),
        ..ClientConfig::new(Profile::Strict)
    };
    McpClient::connect_stdio(server, config)
        .await
        .expect("handshake")
}

/// Exactly one line at `level` under `target` contains `needle`.
fn one_line(lines: &[&str], level: &str, target: &str, needle: &str) -> Result<(), String> {
    let found = lines
        .iter()
        .filter(|l| {
            l.contains(&format!(" {level} "))
                && l.contains(&format!("{target}:"))
                && l.contains(needle)
        })
        .count();
    match found {
        1 => Ok(()),
        n => Err(format!(
            "{n} {level} lines of {target} contain {needle:?}, wanted one:\n{}",
            lines.join("\n")
        )),
    }
}

#[tokio::test]
#[traced_test]
async fn a_banner_line_is_skipped_and_logged_at_warn_once() {
    let client = connect(
        "echo 'my-server v1.0 starting';",
        &format!("read call; echo '{TOOLS}'; read rest"),
    )
    .await;
    client.list_tools().await.unwrap();
    logs_assert(|lines| {
        one_line(
            lines,
            "WARN",
            "mcp_refclient",
            "skipped a stdout line that is not JSON: my-server v1.0 starting",
        )
    });
}

#[tokio::test]
#[traced_test]
async fn a_notification_ahead_of_a_response_is_skipped_at_debug() {
    let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
    let client = connect(
        "",
        &format!("read call; echo '{note}'; echo '{TOOLS}'; read rest"),
    )
    .await;
    client.list_tools().await.unwrap();
    logs_assert(|lines| {
        one_line(
            lines,
            "DEBUG",
            "mcp_refclient",
            "skipped notification 'notifications/message'",
        )
    });
    assert!(!logs_contain("WARN"), "a notification is no warning");
}

#[tokio::test]
#[traced_test]
async fn stderr_lines_are_logged_at_debug_under_their_own_target() {
    let client = connect(
        "",
        "read call; echo 'loading the index' >&2; echo 'fatal: boom' >&2; exit 3",
    )
    .await;
    let err = client.list_tools().await.unwrap_err();
    assert!(err.to_string().ends_with("fatal: boom"), "{err}");
    logs_assert(|lines| one_line(lines, "DEBUG", "mcp_refclient::stderr", "loading the index"));
    logs_assert(|lines| one_line(lines, "DEBUG", "mcp_refclient::stderr", "fatal: boom"));
}

#[tokio::test]
#[traced_test]
async fn a_declined_server_request_is_logged_at_warn() {
    let sampling = r#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}"#;
    // The server asks, reads the client's answer, then answers the call.
    let client = connect(
        "",
        &format!("read call; echo '{sampling}'; read answer; echo '{TOOLS}'; read rest"),
    )
    .await;
    client.list_tools().await.unwrap();
    logs_assert(|lines| one_line(lines, "WARN", "mcp_refclient", "sampling/createMessage"));
}
