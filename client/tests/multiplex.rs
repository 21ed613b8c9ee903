//! Several calls on one stdio connection: `strict` keeps them in flight together and routes
//! each answer by id; yoagent and kova keep one call on the wire at a time. The `sh` servers
//! wait on what the client wrote, so nothing here synchronises by sleeping.

#![cfg(unix)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_refclient::{ClientConfig, ErrorKind, McpClient, Profile, StdioServer};
use serde_json::json;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}"#;

/// A server running `body` after answering the handshake (it has read `initialized`).
async fn connect(body: &str, profile: Profile) -> Arc<McpClient> {
    let script = format!("read init; echo '{INIT}'; read initialized; {body}");
    let server = StdioServer {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        ..Default::default()
    };
    Arc::new(
        McpClient::connect_stdio(
            server,
            ClientConfig {
                revision: Some(mcp_refclient::LATEST_PROTOCOL_VERSION.into()),
                ..ClientConfig::new(profile)
            },
        )
        .await
        .expect("handshake"),
    )
}

const LIST_CHANGED: &str = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;

/// The answer to one request line: its id, and its tool's name as the text.
const ANSWER: &str = r#"sed -E 's/.*"id":([0-9]+),.*"name":"([^"]*)".*/{"jsonrpc":"2.0","id":\1,"result":{"content":[{"type":"text","text":"\2"}]}}/'"#;

fn text(result: &mcp_refclient::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn strict_keeps_eight_calls_in_flight_and_routes_each_answer_by_id() {
    // The server reads all eight requests before it answers any, then answers the last first.
    let body = format!(
        "for i in 1 2 3 4 5 6 7 8; do read line; lines=\"$line
$lines\"; done; printf '%s' \"$lines\" | while read line; do echo \"$line\" | {ANSWER}; done; read never"
    );
    let client = connect(&body, Profile::Strict).await;
    let calls: Vec<_> = (0..8)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                let name = format!("tool-{i}");
                let result = client
                    .call_tool(&name, json!({}), Some(Duration::from_secs(10)))
                    .await;
                (name, result)
            })
        })
        .collect();
    for call in calls {
        let (name, result) = call.await.unwrap();
        assert_eq!(
            text(&result.unwrap_or_else(|e| panic!("{name}: {e}"))),
            name
        );
    }
    assert_eq!(client.exited(), None);
    client.close().await.unwrap();
}

/// The server waits for a second request before it answers the first: a client that keeps
/// one call on the wire never sends it, so the first call runs into its bound; then the
/// second goes out and is answered, and the late answer to the first is dropped.
async fn second_call_waits_for_the_first(
    profile: Profile,
    first_bound: Duration,
) -> (Result<String, ErrorKind>, Result<String, ErrorKind>) {
    // The server says (list_changed) that it read the first, so the second is made only then.
    let body = format!(
        "read first; echo '{LIST_CHANGED}'; read second; echo \"$second\" | {ANSWER}; echo \"$first\" | {ANSWER}; read never"
    );
    let client = connect(&body, profile).await;
    let calling = client.clone();
    let first = tokio::spawn(async move {
        calling
            .call_tool("first", json!({}), Some(first_bound))
            .await
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while client.tools_list_changes() == 0 {
        assert!(
            Instant::now() < deadline,
            "the server never read the first call"
        );
        tokio::task::yield_now().await;
    }
    let second = client
        .call_tool("second", json!({}), Some(Duration::from_secs(10)))
        .await;
    let first = first.await.unwrap();
    client.close().await.unwrap();
    (
        first.map(|r| text(&r)).map_err(|e| e.kind()),
        second.map(|r| text(&r)).map_err(|e| e.kind()),
    )
}

#[tokio::test]
async fn strict_sends_the_second_call_while_the_first_waits() {
    // Answered after the second (two shell pipelines): a bound no load reaches.
    let (first, second) =
        second_call_waits_for_the_first(Profile::Strict, Duration::from_secs(5)).await;
    assert_eq!(first, Ok("first".to_string()));
    assert_eq!(second, Ok("second".to_string()));
}

#[tokio::test]
async fn yoagent_and_kova_keep_one_call_on_the_wire() {
    for profile in [Profile::Yoagent, Profile::Kova] {
        // Never answered before the second is read: it must run into this bound.
        let (first, second) =
            second_call_waits_for_the_first(profile, Duration::from_millis(300)).await;
        assert_eq!(first, Err(ErrorKind::Timeout), "{profile:?}");
        assert_eq!(second, Ok("second".to_string()), "{profile:?}");
    }
}
