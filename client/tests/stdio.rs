//! The stdio client against tiny `sh` servers whose every step waits on what the client wrote,
//! so nothing here synchronises by sleeping.

#![cfg(unix)]

use std::time::{Duration, Instant};

use mcp_refclient::{Breakage, ClientConfig, ErrorKind, McpClient, McpError, Profile, StdioServer};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}"#;

/// A server running `body` after answering the handshake (it has read `initialized`).
fn server(body: &str) -> StdioServer {
    let script = format!("read init; echo '{INIT}'; read initialized; {body}");
    StdioServer {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        ..Default::default()
    }
}

/// Pinned to the handshake revisions, which these tests are about.
fn config(profile: Profile) -> ClientConfig {
    ClientConfig {
        revision: Some(mcp_refclient::LATEST_PROTOCOL_VERSION.into()),
        ..ClientConfig::new(profile)
    }
}

async fn connect(body: &str, profile: Profile) -> McpClient {
    McpClient::connect_stdio(server(body), config(profile))
        .await
        .expect("handshake")
}

#[tokio::test]
async fn a_server_that_exits_fails_the_call_with_status_and_stderr() {
    let client = connect(
        "read call; echo 'first words' >&2; echo 'fatal: boom' >&2; exit 3",
        Profile::Strict,
    )
    .await;
    let err = client
        .call_tool("echo", serde_json::json!({}), None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Transport);
    let text = err.to_string();
    assert!(
        text.starts_with(
            "Connection closed: MCP server 'sh' exited with exit status: 3; last stderr: "
        ),
        "{text}"
    );
    assert!(text.ends_with("fatal: boom"), "{text}");
    let exited = client.exited().expect("exited");
    assert_eq!(format!("Connection closed: {exited}"), text);
}

#[tokio::test]
async fn a_banner_before_the_close_is_in_the_error() {
    let client = connect(
        "read call; echo 'Server listening on stdio'; exit 0",
        Profile::Yoagent,
    )
    .await;
    let err = client.list_tools().await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("exited with exit status: 0"), "{text}");
    assert!(
        text.contains("last stdout line: Server listening on stdio"),
        "{text}"
    );
}

#[tokio::test]
async fn a_command_that_cannot_start_names_itself_and_the_cause() {
    let server = StdioServer {
        command: "/nonexistent/mcp-server".into(),
        ..Default::default()
    };
    let err = McpClient::connect_stdio(server, config(Profile::Strict))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Transport);
    let text = err.to_string();
    assert!(
        text.contains("'/nonexistent/mcp-server'") && text.contains("No such file"),
        "{text}"
    );
}

#[tokio::test]
async fn an_unsupported_version_is_refused_by_name() {
    let reply = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"1999-01-01","capabilities":{},"serverInfo":{"name":"old","version":"1"}}}"#;
    let script = format!("read init; echo '{reply}'; read next; echo \"got: $next\" >&2");
    let server = StdioServer {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        ..Default::default()
    };
    let err = McpClient::connect_stdio(server, config(Profile::Strict))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    assert!(err.to_string().contains("'1999-01-01'"), "{err}");
}

#[tokio::test]
async fn the_handshake_is_bounded() {
    let server = StdioServer {
        command: "sh".into(),
        args: vec!["-c".into(), "read init; read never".into()],
        ..Default::default()
    };
    let mut config = config(Profile::Kova);
    let mut timeouts = config.timeouts();
    timeouts.handshake = Some(Duration::from_millis(100));
    config.timeouts = Some(timeouts);
    let err = McpClient::connect_stdio(server, config).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert!(err.to_string().contains("timed out after 100ms"), "{err}");
}

#[tokio::test]
async fn a_ping_is_answered_with_an_empty_result() {
    let body = r#"read call; echo '{"jsonrpc":"2.0","id":"p1","method":"ping"}'; read answer; echo "$answer" >&2; exit 4"#;
    let client = connect(body, Profile::Strict).await;
    let text = client
        .call_tool("x", serde_json::json!({}), None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        text.ends_with(r#"last stderr: {"jsonrpc":"2.0","id":"p1","result":{}}"#),
        "{text}"
    );
}

#[tokio::test]
async fn the_ping_breakage_leaves_the_ping_unanswered() {
    let body = r#"read call; echo '{"jsonrpc":"2.0","id":"p1","method":"ping"}'; read answer; echo "answered: $answer" >&2"#;
    let mut config = config(Profile::Strict);
    config.hooks.broken.push(Breakage::NoPingAnswer);
    let client = McpClient::connect_stdio(server(body), config)
        .await
        .unwrap();
    let err = client
        .call_tool("x", serde_json::json!({}), Some(Duration::from_millis(200)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
}

#[tokio::test]
async fn another_server_request_is_declined_with_method_not_found() {
    let body = r#"read call; echo '{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}'; read answer; echo "$answer" >&2; exit 4"#;
    let client = connect(body, Profile::Strict).await;
    let text = client
        .request("tools/list", None)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        text.contains(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601"#),
        "{text}"
    );
}

#[tokio::test]
async fn yoagent_answers_a_ping_between_calls_only_after_the_next_request() {
    // The ping goes out while no call is open; the server then reports the order of what it read.
    let body = r#"echo '{"jsonrpc":"2.0","id":"p1","method":"ping"}'; read a; read b; echo "first=$a" >&2; echo "second=$b" >&2; exit 5"#;
    let client = connect(body, Profile::Yoagent).await;
    let text = client.list_tools().await.unwrap_err().to_string();
    assert!(
        text.contains(r#"first={"jsonrpc":"2.0","id":2,"method":"tools/list"}"#),
        "{text}"
    );
    assert!(
        text.contains(r#"second={"jsonrpc":"2.0","id":"p1","result":{}}"#),
        "{text}"
    );
}

#[tokio::test]
async fn list_changed_and_other_notifications_before_the_answer() {
    let body = r#"read call;
        echo '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}';
        echo '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}';
        echo '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ok"}],"isError":true}}';
        read never"#;
    let client = connect(body, Profile::Strict).await;
    let result = client
        .call_tool("x", serde_json::json!({}), None)
        .await
        .unwrap();
    assert!(result.is_error);
    assert_eq!(client.tools_list_changes(), 1);
}

#[tokio::test]
async fn strict_follows_the_cursor_and_yoagent_reads_one_page() {
    let body = r#"read one;
        echo '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c2"}}';
        read two; echo "$two" >&2;
        echo '{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}}';
        read never"#;
    let strict = connect(body, Profile::Strict).await;
    let names: Vec<_> = strict
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b"]);
    let yoagent = connect(body, Profile::Yoagent).await;
    let names: Vec<_> = yoagent
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a"]);
}

#[tokio::test]
async fn a_timed_out_call_may_still_run_and_its_late_answer_is_dropped() {
    // Strict sends notifications/cancelled after the timeout; the server reads it, then the
    // next call, and only then answers both: the late answer first.
    let body = r#"read slow; read cancelled; echo "$cancelled" >&2; read next;
        echo '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"late"}]}}';
        echo '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"fresh"}]}}';
        read never"#;
    let client = connect(body, Profile::Strict).await;
    let err = client
        .call_tool(
            "slow",
            serde_json::json!({}),
            Some(Duration::from_millis(100)),
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert_eq!(
        err.to_string(),
        "MCP call 'tools/call' timed out after 100ms; the server may still carry it out"
    );
    let result = client
        .call_tool("fast", serde_json::json!({}), None)
        .await
        .unwrap();
    assert_eq!(result.content[0]["text"], "fresh");
}

#[tokio::test]
async fn a_json_rpc_error_keeps_its_code_and_message() {
    let body = r#"read call; echo '{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: nope"}}'; read never"#;
    let client = connect(body, Profile::Kova).await;
    match client
        .call_tool("nope", serde_json::json!({}), None)
        .await
        .unwrap_err()
    {
        McpError::JsonRpc { code, message, .. } => {
            assert_eq!(code, mcp_refclient::ErrorCode::INVALID_PARAMS);
            assert_eq!(message, "Unknown tool: nope");
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test]
async fn exited_is_none_while_running_and_was_closed_after_close() {
    let client = connect("read never", Profile::Strict).await;
    assert_eq!(client.exited(), None);
    client.close().await.unwrap();
    assert_eq!(
        client.exited().as_deref(),
        Some("MCP server 'sh' was closed")
    );
    client.close().await.unwrap();
    let err = client.list_tools().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "Connection closed: MCP server 'sh' was closed"
    );
}

#[tokio::test]
async fn exited_does_not_wait_behind_a_call_in_flight() {
    let client = std::sync::Arc::new(connect("read call; read never", Profile::Strict).await);
    let calling = client.clone();
    let call =
        tokio::spawn(async move { calling.call_tool("hang", serde_json::json!({}), None).await });
    let started = Instant::now();
    assert_eq!(client.exited(), None);
    assert!(started.elapsed() < Duration::from_millis(50));
    client.close().await.unwrap();
    let err = call.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("was closed"), "{err}");
}

#[tokio::test]
async fn the_unwaitable_hook_reports_the_server_as_exited() {
    let mut config = config(Profile::Strict);
    config.hooks.unwaitable_child = true;
    let client = McpClient::connect_stdio(server("read never"), config)
        .await
        .unwrap();
    let text = client.exited().expect("reported as exited");
    assert!(
        text.starts_with("MCP server 'sh' cannot be waited on: "),
        "{text}"
    );
}

/// Waits (bounded) until `pid` is gone or a zombie: a SIGKILL lands asynchronously.
fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z')) =>
            {
                return true
            }
            Ok(_) if Instant::now() >= deadline => return false,
            Ok(_) => std::thread::yield_now(),
        }
    }
}

fn grandchild_server(own_process_group: bool) -> StdioServer {
    let init = INIT
        .replace(r#""name":"sh""#, r#""name":"$!""#)
        .replace('"', "\\\"");
    let script = format!("sleep 300 & read init; echo \"{init}\"; read initialized; read never");
    StdioServer {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        own_process_group,
        ..Default::default()
    }
}

#[tokio::test]
async fn close_kills_the_whole_group() {
    let client = McpClient::connect_stdio(grandchild_server(true), config(Profile::Strict))
        .await
        .unwrap();
    let grandchild: u32 = client.server_info()["serverInfo"]["name"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let pid = client.server_pid().unwrap();
    client.close().await.unwrap();
    assert!(gone(pid));
    assert!(
        gone(grandchild),
        "the backgrounded sleep {grandchild} survived close()"
    );
}

#[tokio::test]
async fn drop_kills_the_whole_group() {
    let client = McpClient::connect_stdio(grandchild_server(true), config(Profile::Yoagent))
        .await
        .unwrap();
    let grandchild: u32 = client.server_info()["serverInfo"]["name"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    drop(client);
    assert!(
        gone(grandchild),
        "the backgrounded sleep {grandchild} survived drop"
    );
}

#[tokio::test]
async fn the_group_breakage_leaves_the_grandchild() {
    let mut config = config(Profile::Strict);
    config.hooks.broken.push(Breakage::NoGroupKillOnClose);
    let client = McpClient::connect_stdio(grandchild_server(true), config)
        .await
        .unwrap();
    let grandchild: u32 = client.server_info()["serverInfo"]["name"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    client.close().await.unwrap();
    let alive = std::fs::metadata(format!("/proc/{grandchild}")).is_ok();
    // SAFETY: kill only signals the sleep this test started.
    unsafe { libc::kill(grandchild as i32, libc::SIGKILL) };
    assert!(alive);
}

#[tokio::test]
async fn a_launcher_that_exits_takes_its_group_when_a_call_sees_it() {
    let script =
        format!("sleep 300 & echo \"$!\" >&2; read init; echo '{INIT}'; read initialized; exit 0");
    let server = StdioServer {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        own_process_group: true,
        ..Default::default()
    };
    let client = McpClient::connect_stdio(server, config(Profile::Strict))
        .await
        .unwrap();
    let err = client.list_tools().await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(
            "Connection closed: MCP server 'sh' exited with exit status: 0; last stderr: "
        ),
        "{text}"
    );
    let grandchild: u32 = text.rsplit(": ").next().unwrap().parse().unwrap();
    assert!(
        gone(grandchild),
        "the backgrounded sleep {grandchild} survived the launcher"
    );
}

#[tokio::test]
async fn a_launcher_that_exits_takes_its_group_when_exited_sees_it() {
    let script =
        format!("sleep 300 & read init; echo '{INIT}'; read initialized; echo \"$!\" >&2; exit 0");
    let server = StdioServer {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        own_process_group: true,
        ..Default::default()
    };
    let client = McpClient::connect_stdio(server, config(Profile::Yoagent))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let text = loop {
        if let Some(text) = client.exited() {
            break text;
        }
        assert!(
            Instant::now() < deadline,
            "the launcher's exit was never seen"
        );
        tokio::task::yield_now().await;
    };
    assert!(
        text.starts_with("MCP server 'sh' exited with exit status: 0"),
        "{text}"
    );
    // The grandchild's pid is the last of stderr; it may arrive after the first text.
    let grandchild: u32 = loop {
        let now = client.exited().unwrap();
        if let Ok(pid) = now.rsplit(": ").next().unwrap().parse() {
            break pid;
        }
        assert!(Instant::now() < deadline, "no pid in {now}");
        tokio::task::yield_now().await;
    };
    assert!(
        gone(grandchild),
        "the backgrounded sleep {grandchild} survived the launcher"
    );
}

// Multi-threaded: the poll below blocks its thread (as a caller polling from its own thread
// does), and the client's stderr drain must go on meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exited_shows_at_most_two_texts_the_last_soon_after_the_first() {
    let client = connect("read call; echo 'dying' >&2; exit 9", Profile::Strict).await;
    let _ = client
        .call_tool("x", serde_json::json!({}), Some(Duration::from_millis(1)))
        .await;
    let mut texts: Vec<(Instant, String)> = Vec::new();
    let end = Instant::now() + Duration::from_millis(700);
    while Instant::now() < end {
        if let Some(text) = client.exited() {
            if texts.last().is_none_or(|(_, last)| *last != text) {
                texts.push((Instant::now(), text));
            }
        }
        std::thread::sleep(Duration::from_millis(10)); // the poll cadence, not a synchronisation
    }
    assert!(!texts.is_empty() && texts.len() <= 2, "{texts:?}");
    assert!(texts[texts.len() - 1].0 - texts[0].0 <= Duration::from_millis(500));
    assert!(
        texts[texts.len() - 1]
            .1
            .ends_with("exited with exit status: 9; last stderr: dying"),
        "{texts:?}"
    );
}

#[tokio::test]
async fn a_wrapper_that_closes_its_output_reads_as_exited() {
    let client = connect("read call; exec >&-; read never", Profile::Strict).await;
    let err = client
        .call_tool("x", serde_json::json!({}), None)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Connection closed: MCP server 'sh' closed its output; last stderr: (none)"
    );
    assert_eq!(
        client.exited().as_deref(),
        Some("MCP server 'sh' closed its output; last stderr: (none)")
    );
    assert!(gone(client.server_pid().unwrap()));
}

#[tokio::test]
async fn an_initialized_that_cannot_be_delivered_fails_the_connect() {
    let script = format!("read init; exec 0<&-; echo '{INIT}'; exec sleep 300");
    let server = StdioServer {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        ..Default::default()
    };
    let err = McpClient::connect_stdio(server, config(Profile::Yoagent))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Transport);
    assert!(
        err.to_string().starts_with(
            "Connection closed: MCP server 'sh' no longer reads its input (write failed: "
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_response_for_another_id_is_dropped_unless_any_id_is_accepted() {
    let body = r#"read call; echo '{"jsonrpc":"2.0","id":99,"result":{"content":[]}}'; read never"#;
    let client = connect(body, Profile::Strict).await;
    let err = client
        .call_tool("x", serde_json::json!({}), Some(Duration::from_millis(150)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    let mut config = config(Profile::Strict);
    config.hooks.broken.push(Breakage::AnyIdAccepted);
    let broken = McpClient::connect_stdio(server(body), config)
        .await
        .unwrap();
    assert!(broken
        .call_tool("x", serde_json::json!({}), Some(Duration::from_secs(10)))
        .await
        .is_ok());
}

#[tokio::test]
async fn a_banner_is_skipped_unless_banners_are_fatal() {
    let body = r#"read call; echo 'debug: hello'; echo '{"jsonrpc":"2.0","id":2,"result":{"content":[]}}'; read never"#;
    let client = connect(body, Profile::Kova).await;
    assert!(client
        .call_tool("x", serde_json::json!({}), None)
        .await
        .is_ok());
    let mut config = config(Profile::Kova);
    config.hooks.broken.push(Breakage::BannerFatal);
    let broken = McpClient::connect_stdio(server(body), config)
        .await
        .unwrap();
    let err = broken
        .call_tool("x", serde_json::json!({}), None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    assert!(err.to_string().contains("debug: hello"), "{err}");
}

#[tokio::test]
async fn the_count_breakage_stops_counting_list_changed() {
    let body = r#"read call; echo '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'; echo '{"jsonrpc":"2.0","id":2,"result":{"content":[]}}'; read never"#;
    let mut config = config(Profile::Strict);
    config.hooks.broken.push(Breakage::NoListChangedCount);
    let client = McpClient::connect_stdio(server(body), config)
        .await
        .unwrap();
    client
        .call_tool("x", serde_json::json!({}), None)
        .await
        .unwrap();
    assert_eq!(client.tools_list_changes(), 0);
}

#[tokio::test]
async fn the_decline_breakage_leaves_a_server_request_unanswered() {
    let body = r#"read call; echo '{"jsonrpc":"2.0","id":7,"method":"roots/list"}'; read answer; echo "$answer" >&2; exit 4"#;
    let mut config = config(Profile::Strict);
    config.hooks.broken.push(Breakage::NoDecline);
    let client = McpClient::connect_stdio(server(body), config)
        .await
        .unwrap();
    let err = client
        .call_tool("x", serde_json::json!({}), Some(Duration::from_millis(200)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
}

/// Call A is never answered and times out at 300 ms; call B, queued behind it (yoagent
/// keeps one call on the wire), is answered at once when sent. Its 200 ms count from when it
/// is sent, so it succeeds — unless the breakage counts the queue too.
async fn queued_call(broken: bool) -> Result<(), McpError> {
    // The server announces (list_changed) that it read A, so B queues only once A is sent.
    let body = r#"read a; echo '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}';
        read b; echo '{"jsonrpc":"2.0","id":3,"result":{"content":[]}}'; read never"#;
    let mut config = config(Profile::Yoagent);
    if broken {
        config.hooks.broken.push(Breakage::TimeoutIncludesQueue);
    }
    let client = std::sync::Arc::new(
        McpClient::connect_stdio(server(body), config)
            .await
            .unwrap(),
    );
    let first = client.clone();
    let a = tokio::spawn(async move {
        first
            .call_tool("a", serde_json::json!({}), Some(Duration::from_millis(300)))
            .await
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while client.tools_list_changes() == 0 {
        assert!(Instant::now() < deadline, "the server never read call A");
        tokio::task::yield_now().await;
    }
    let b = client
        .call_tool("b", serde_json::json!({}), Some(Duration::from_millis(200)))
        .await;
    assert!(a.await.unwrap().is_err());
    b.map(|_| ())
}

#[tokio::test]
async fn a_call_bound_counts_from_when_it_is_sent() {
    queued_call(false).await.unwrap();
    let err = queued_call(true).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
}

#[tokio::test]
async fn a_stderr_flood_neither_blocks_the_server_nor_loses_its_last_line() {
    let body = r"echo 'the first line' >&2; head -c 20000000 /dev/zero | tr '\0' x >&2; echo >&2; echo 'the last line' >&2; read call; exit 2";
    let client = connect(body, Profile::Strict).await;
    let text = client.list_tools().await.unwrap_err().to_string();
    assert!(
        text.ends_with("x\nthe last line"),
        "{}",
        &text[text.len().saturating_sub(100)..]
    );
    assert!(!text.contains("the first line"));
    assert!(text.len() < 8 * 1024 + 200, "{} bytes", text.len());
}

#[tokio::test]
async fn the_client_keeps_the_configuration_it_was_given() {
    let mut config = config(Profile::Kova);
    config.client_name = Some("kept-name".into());
    let client = McpClient::connect_stdio(server("read never"), config)
        .await
        .expect("handshake");
    let kept = client.config();
    assert_eq!(kept.profile, Profile::Kova);
    assert_eq!(kept.client_name.as_deref(), Some("kept-name"));
    assert_eq!(
        kept.revision.as_deref(),
        Some(mcp_refclient::LATEST_PROTOCOL_VERSION)
    );
}
