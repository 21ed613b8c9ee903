//! The Streamable HTTP transport against a `wiremock::MockServer` speaking MCP through
//! `mcp_mock_servers::wiremock`: the cases where a canned reply is enough (headers, sessions,
//! statuses, JSON-RPC errors, a delay). Streaming faults (stalls mid-body, held-open streams,
//! trickles) stay with the raw server of `tests/http.rs` and the scripted HTTP mock.

use mcp_mock_servers::wiremock::{mcp_method, mcp_tool, McpReply, McpResponder};
use mcp_refclient::{ClientConfig, ErrorKind, HeaderList, HttpServer, McpClient, Profile};
use serde_json::{json, Value};
use std::time::Duration;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

fn text_result(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

async fn mcp_server(responder: McpResponder) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(responder)
        .mount(&server)
        .await;
    server
}

fn endpoint(server: &MockServer, path: &str) -> HttpServer {
    HttpServer::new(format!("{}{path}", server.uri()))
}

async fn received(server: &MockServer) -> Vec<Request> {
    server
        .received_requests()
        .await
        .expect("wiremock records requests")
}

/// The JSON-RPC method of each request, or the HTTP method where it has no JSON body.
fn methods(requests: &[Request]) -> Vec<String> {
    requests
        .iter()
        .map(|r| match serde_json::from_slice::<Value>(&r.body) {
            Ok(body) => body["method"].as_str().unwrap_or("(response)").to_string(),
            Err(_) => r.method.to_string(),
        })
        .collect()
}

fn header<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn json_replies_carry_both_accepts_and_the_callers_headers_on_every_request() {
    let server = mcp_server(
        McpResponder::new()
            .tool("echo", text_result("hi"))
            .session_id("sess-1"),
    )
    .await;
    let headers = HeaderList::new()
        .with_header("X-Api-Key", "k1")
        .unwrap()
        .with_header("x-api-key", "k2")
        .unwrap();
    let http = HttpServer {
        headers,
        ..endpoint(&server, "/mcp")
    };
    let client = McpClient::connect_http(http, ClientConfig::new(Profile::Yoagent))
        .await
        .unwrap();
    assert_eq!(client.session_id().as_deref(), Some("sess-1"));
    assert_eq!(client.list_tools().await.unwrap()[0].name, "echo");
    assert_eq!(client.exited(), None);
    client.close().await.unwrap();
    client.close().await.unwrap();
    let seen = received(&server).await;
    assert_eq!(
        methods(&seen),
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "DELETE"
        ]
    );
    let offered: Value = serde_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(offered["params"]["protocolVersion"], "2024-11-05");
    for (i, request) in seen.iter().enumerate() {
        assert_eq!(header(request, "x-api-key"), Some("k2"), "request {i}");
        if request.method.as_str() == "POST" {
            assert_eq!(
                header(request, "accept"),
                Some("application/json, text/event-stream")
            );
            assert_eq!(header(request, "content-type"), Some("application/json"));
        }
        assert_eq!(
            header(request, "mcp-session-id"),
            (i > 0).then_some("sess-1"),
            "request {i}"
        );
        assert!(header(request, "mcp-protocol-version").is_none());
        assert!(header(request, "last-event-id").is_none());
    }
    assert_eq!(seen[3].url.path(), "/mcp");
    let err = client.list_tools().await.unwrap_err();
    assert!(err.to_string().contains("the client was closed"), "{err}");
}

#[tokio::test]
async fn a_404_on_a_session_expires_it_and_strict_initializes_again() {
    for profile in [Profile::Strict, Profile::Yoagent] {
        // The `initialized` notification is the one request the first session carries.
        let server = mcp_server(McpResponder::new().session_id("s").expire_session_after(1)).await;
        let config = ClientConfig {
            revision: Some(mcp_refclient::LATEST_PROTOCOL_VERSION.into()),
            ..ClientConfig::new(profile)
        };
        let client = McpClient::connect_http(endpoint(&server, "/mcp"), config)
            .await
            .unwrap();
        let err = client.list_tools().await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Http);
        assert_eq!(err.http_status(), Some(404));
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "HTTP error reaching {}: 404 Not Found: the MCP session expired",
                server.uri()
            )),
            "{text}"
        );
        assert_eq!(client.session_id(), None);
        let second = client.list_tools().await;
        client.close().await.unwrap();
        let seen = received(&server).await;
        if profile == Profile::Strict {
            second.unwrap();
            assert_eq!(
                methods(&seen),
                [
                    "initialize",
                    "notifications/initialized",
                    "tools/list",
                    "initialize",
                    "notifications/initialized",
                    "tools/list",
                    "DELETE"
                ]
            );
            assert!(header(&seen[3], "mcp-session-id").is_none());
            assert_eq!(header(&seen[5], "mcp-session-id"), Some("s-2"));
            assert_eq!(header(&seen[6], "mcp-session-id"), Some("s-2"));
        } else {
            // yoagent does not initialize again: the next request goes without a session.
            assert_eq!(second.unwrap_err().http_status(), Some(400));
            assert_eq!(
                methods(&seen),
                [
                    "initialize",
                    "notifications/initialized",
                    "tools/list",
                    "tools/list"
                ],
                "no DELETE without a session"
            );
            assert!(header(&seen[3], "mcp-session-id").is_none());
        }
    }
}

#[tokio::test]
async fn a_refused_delete_is_tolerated() {
    let server = MockServer::start().await;
    Mock::given(method("DELETE"))
        .respond_with(ResponseTemplate::new(405))
        .mount(&server)
        .await;
    Mock::given(wiremock::matchers::any())
        .respond_with(McpResponder::new().session_id("abc"))
        .mount(&server)
        .await;
    let client = McpClient::connect_http(
        endpoint(&server, "/mcp"),
        ClientConfig::new(Profile::Yoagent),
    )
    .await
    .unwrap();
    client.close().await.unwrap();
    let seen = received(&server).await;
    assert_eq!(seen.last().unwrap().method.as_str(), "DELETE");
    assert_eq!(header(seen.last().unwrap(), "mcp-session-id"), Some("abc"));
}

#[tokio::test]
async fn statuses_are_http_errors_naming_the_origin_only_and_redacting_bodies() {
    let server = MockServer::start().await;
    let body = "no upstream for /mcp/sk-live-4f9a8b7c?token=abcdefgh12&x=1 (key=sk-live-4f9a8b7c)";
    Mock::given(mcp_tool("x"))
        .respond_with(ResponseTemplate::new(500).set_body_string(body))
        .mount(&server)
        .await;
    Mock::given(wiremock::matchers::any())
        .respond_with(McpResponder::new())
        .mount(&server)
        .await;
    let port = server.address().port();
    let url = format!(
        "http://u-longuser:p-longpass@127.0.0.1:{port}/mcp/sk-live-4f9a8b7c?token=abcdefgh12&x=1"
    );
    let client = McpClient::connect_http(HttpServer::new(url), ClientConfig::new(Profile::Yoagent))
        .await
        .unwrap();
    let err = client.call_tool("x", json!({}), None).await.unwrap_err();
    assert_eq!(err.http_status(), Some(500));
    assert_eq!(
        err.full_text(),
        format!("HTTP error reaching http://127.0.0.1:{port}: 500 Internal Server Error: no upstream for /mcp/[redacted]?[redacted]&x=1 (key=[redacted])")
    );
    for secret in ["sk-live-4f9a8b7c", "abcdefgh12", "u-longuser", "p-longpass"] {
        assert!(!format!("{err:?}").contains(secret), "{secret} in {err:?}");
    }
}

#[tokio::test]
async fn json_rpc_errors_keep_code_and_message_redacted() {
    let server = MockServer::start().await;
    Mock::given(mcp_tool("x"))
        .respond_with(McpReply::error(-32602, "bad path /mcp/sk-live-4f9a8b7c"))
        .mount(&server)
        .await;
    Mock::given(wiremock::matchers::any())
        .respond_with(McpResponder::new())
        .mount(&server)
        .await;
    let client = McpClient::connect_http(
        endpoint(&server, "/mcp/sk-live-4f9a8b7c"),
        ClientConfig::new(Profile::Yoagent),
    )
    .await
    .unwrap();
    let err = client.call_tool("x", json!({}), None).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::JsonRpc);
    assert_eq!(
        err.full_text(),
        "server error -32602: bad path /mcp/[redacted]"
    );
}

#[tokio::test]
async fn a_progress_frame_ahead_of_the_sse_answer_is_skipped() {
    let server = MockServer::start().await;
    let progress = json!({ "method": "notifications/progress", "params": { "progressToken": 1, "progress": 0.5 } });
    Mock::given(mcp_tool("slowish"))
        .respond_with(McpReply::result(text_result("done")).notify_first(progress))
        .mount(&server)
        .await;
    Mock::given(wiremock::matchers::any())
        .respond_with(McpResponder::new().sse())
        .mount(&server)
        .await;
    let client = McpClient::connect_http(
        endpoint(&server, "/mcp"),
        ClientConfig {
            revision: Some(mcp_refclient::LATEST_PROTOCOL_VERSION.into()),
            ..ClientConfig::new(Profile::Strict)
        },
    )
    .await
    .unwrap();
    let result = client.call_tool("slowish", json!({}), None).await.unwrap();
    assert_eq!(
        serde_json::to_value(&result).unwrap()["content"][0]["text"],
        "done"
    );
}

#[tokio::test]
async fn a_per_call_timeout_bounds_a_delayed_answer_and_says_it_may_have_run() {
    let server = MockServer::start().await;
    let slow = McpResponder::new()
        .tool("slow", text_result("late"))
        .delay(Duration::from_millis(600));
    Mock::given(mcp_method("tools/call"))
        .respond_with(slow)
        .mount(&server)
        .await;
    Mock::given(wiremock::matchers::any())
        .respond_with(McpResponder::new())
        .mount(&server)
        .await;
    let client = McpClient::connect_http(
        endpoint(&server, "/mcp"),
        ClientConfig {
            revision: Some(mcp_refclient::LATEST_PROTOCOL_VERSION.into()),
            ..ClientConfig::new(Profile::Strict)
        },
    )
    .await
    .unwrap();
    let err = client
        .call_tool("slow", json!({}), Some(Duration::from_millis(100)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
    assert!(err.to_string().contains("may"), "{err}");
}
