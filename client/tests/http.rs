//! The HTTP transports against small raw HTTP/1.1 servers on 127.0.0.1, each answering from
//! a handler and recording every request it got (the cases a canned reply serves are in
//! `tests/wiremock.rs`). Waits are on what the client sent; the only
//! timed pieces are the stalls and trickles that idle-timeout tests are about.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_refclient::{
    BoxFuture, ClientConfig, ErrorKind, HeaderList, HttpServer, McpClient, McpError, Profile,
    Redirects, Timeouts, TokenProvider,
};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

// ---------------------------------------------------------------------------------------
// The test server

/// One request as the server read it.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    fn rpc_method(&self) -> String {
        self.json()["method"].as_str().unwrap_or("").to_string()
    }

    fn id(&self) -> Value {
        self.json()["id"].clone()
    }
}

/// A piece of a reply body.
#[derive(Clone)]
enum Part {
    Bytes(Vec<u8>),
    Pause(Duration),
}

/// What the server answers.
#[derive(Clone)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    parts: Vec<Part>,
    /// Keep the connection open after the body (never close it).
    hold: bool,
    /// With `hold`: told once the client has closed the held connection.
    closed: Option<Arc<tokio::sync::Notify>>,
    /// Send nothing at all, not even the head.
    stall: bool,
}

impl Reply {
    fn new(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            parts: Vec::new(),
            hold: false,
            closed: None,
            stall: false,
        }
    }

    fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    fn body(mut self, bytes: impl Into<Vec<u8>>) -> Reply {
        self.parts.push(Part::Bytes(bytes.into()));
        self
    }

    fn pause(mut self, d: Duration) -> Reply {
        self.parts.push(Part::Pause(d));
        self
    }

    fn hold(mut self) -> Reply {
        self.hold = true;
        self
    }
}

fn json_reply(value: Value) -> Reply {
    Reply::new(200)
        .header("Content-Type", "application/json")
        .body(value.to_string())
}

fn sse_reply(text: &str) -> Reply {
    Reply::new(200)
        .header("Content-Type", "text/event-stream")
        .body(text)
}

fn result(req: &Seen, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": req.id(), "result": result})
}

type Handler = Arc<dyn Fn(&Seen, usize) -> Reply + Send + Sync>;

/// A server on 127.0.0.1 and what it received.
struct TestServer {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

type Wrap = Arc<
    dyn Fn(tokio::net::TcpStream) -> Pin<Box<dyn Future<Output = Option<Box<dyn Io>>> + Send>>
        + Send
        + Sync,
>;

impl TestServer {
    async fn start(handler: impl Fn(&Seen, usize) -> Reply + Send + Sync + 'static) -> TestServer {
        TestServer::start_wrapped(Arc::new(handler), None).await
    }

    async fn start_wrapped(handler: Handler, wrap: Option<Wrap>) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let count = Arc::new(AtomicUsize::new(0));
        let log = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let (handler, log, count, wrap) =
                    (handler.clone(), log.clone(), count.clone(), wrap.clone());
                tokio::spawn(async move {
                    let io: Box<dyn Io> = match wrap {
                        Some(wrap) => match wrap(tcp).await {
                            Some(io) => io,
                            None => return,
                        },
                        None => Box::new(tcp),
                    };
                    serve(io, handler, log, count).await;
                });
            }
        });
        TestServer { port, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn rpc_methods(&self) -> Vec<String> {
        self.seen()
            .iter()
            .map(|s| {
                if s.method == "POST" {
                    s.rpc_method()
                } else {
                    s.method.clone()
                }
            })
            .collect()
    }
}

async fn serve(
    io: Box<dyn Io>,
    handler: Handler,
    log: Arc<Mutex<Vec<Seen>>>,
    count: Arc<AtomicUsize>,
) {
    let mut reader = BufReader::new(io);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let mut lines = head.lines();
    let first: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).await.unwrap();
    let seen = Seen {
        method: first.first().unwrap_or(&"").to_string(),
        path: first.get(1).unwrap_or(&"").to_string(),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let index = count.fetch_add(1, Ordering::SeqCst);
    log.lock().unwrap().push(seen.clone());
    let reply = handler(&seen, index);
    let mut io = reader.into_inner();
    if reply.stall {
        if let Some(closed) = &reply.closed {
            let mut sink = [0u8; 256];
            while let Ok(n) = io.read(&mut sink).await {
                if n == 0 {
                    break;
                }
            }
            closed.notify_one();
        }
        std::future::pending::<()>().await;
    }
    let reason = match reply.status {
        200 => "OK",
        202 => "Accepted",
        204 => "No Content",
        _ => "Status",
    };
    let mut out = format!("HTTP/1.1 {} {reason}\r\n", reply.status);
    for (n, v) in &reply.headers {
        out.push_str(&format!("{n}: {v}\r\n"));
    }
    let simple = !reply.hold && reply.parts.iter().all(|p| matches!(p, Part::Bytes(_)));
    if simple {
        let total: usize = reply
            .parts
            .iter()
            .map(|p| if let Part::Bytes(b) = p { b.len() } else { 0 })
            .sum();
        out.push_str(&format!("Content-Length: {total}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    if io.write_all(out.as_bytes()).await.is_err() {
        return;
    }
    for part in reply.parts {
        match part {
            Part::Bytes(b) => {
                if io.write_all(&b).await.is_err() {
                    return;
                }
                let _ = io.flush().await;
            }
            Part::Pause(d) => tokio::time::sleep(d).await,
        }
    }
    if reply.hold {
        // The server never ends the body: only the client can end the connection.
        let mut sink = [0u8; 256];
        while let Ok(n) = io.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
        match reply.closed {
            Some(closed) => closed.notify_one(),
            None => std::future::pending::<()>().await,
        }
    }
    let _ = io.shutdown().await;
}

/// An MCP server: the handshake and `tools/list` answered in JSON, notifications with 202,
/// DELETE with 200; `other` answers anything else (or overrides, returning `Some`).
fn mcp(
    other: impl Fn(&Seen, usize) -> Option<Reply> + Send + Sync + 'static,
) -> impl Fn(&Seen, usize) -> Reply + Send + Sync {
    move |req, i| {
        if let Some(reply) = other(req, i) {
            return reply;
        }
        if req.method == "DELETE" {
            return Reply::new(200);
        }
        let m = req.rpc_method();
        match m.as_str() {
            "initialize" => {
                let version = req.json()["params"]["protocolVersion"].clone();
                json_reply(result(
                    req,
                    json!({"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}),
                ))
            }
            m if m.starts_with("notifications/") => Reply::new(202),
            "tools/list" => json_reply(result(
                req,
                json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
            )),
            "" => Reply::new(202),
            _ => json_reply(result(
                req,
                json!({"content": [{"type": "text", "text": "ok"}]}),
            )),
        }
    }
}

fn server(url: String) -> HttpServer {
    HttpServer::new(url)
}

/// A client pinned to the newest handshake revision: these tests are about the handshake
/// revisions (2026-07-28 has scenarios of its own under `scenarios/stateless`).
fn config(profile: Profile, idle: Duration) -> ClientConfig {
    let mut config = ClientConfig::new(profile);
    config.revision = Some(mcp_refclient::LATEST_PROTOCOL_VERSION.into());
    config.timeouts = Some(Timeouts {
        idle_read: idle,
        ..profile.timeouts()
    });
    config
}

async fn connect(srv: &TestServer, profile: Profile) -> McpClient {
    McpClient::connect_http(
        server(srv.url("/mcp")),
        config(profile, Duration::from_secs(10)),
    )
    .await
    .expect("handshake")
}

fn text_of(result: &mcp_refclient::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

// ---------------------------------------------------------------------------------------
// Plain JSON, headers, sessions

#[tokio::test]
async fn strict_offers_the_latest_version_and_then_sends_the_version_header() {
    let srv = TestServer::start(mcp(|_, _| None)).await;
    let client = connect(&srv, Profile::Strict).await;
    client.list_tools().await.unwrap();
    let seen = srv.seen();
    assert_eq!(seen[0].json()["params"]["protocolVersion"], "2025-11-25");
    assert!(seen[0].header("mcp-protocol-version").is_none());
    assert_eq!(seen[1].header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(seen[2].header("mcp-protocol-version"), Some("2025-11-25"));
    let kova = TestServer::start(mcp(|_, _| None)).await;
    connect(&kova, Profile::Kova).await;
    assert_eq!(
        kova.seen()[0].json()["params"]["protocolVersion"],
        "2025-06-18"
    );
}

// ---------------------------------------------------------------------------------------
// SSE

#[tokio::test]
async fn sse_replies_are_parsed_with_any_line_end() {
    for eol in ["\n", "\r\n", "\r"] {
        let srv = TestServer::start(mcp(move |req, _| {
            (req.rpc_method() == "tools/call").then(|| {
                let id = req.id();
                let frames = [
                    ": a comment".to_string(),
                    String::new(),
                    r#"data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#.to_string(),
                    String::new(),
                    r#"data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_string(),
                    String::new(),
                    r#"data: {"jsonrpc":"2.0","id":999,"result":{}}"#.to_string(),
                    String::new(),
                    r#"data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#.to_string(),
                    String::new(),
                    "event: message".to_string(),
                    format!(r#"data: {{"jsonrpc":"2.0","id":{id},"#),
                    r#"data: "result":{"content":[{"type":"text","text":"multi"}]}}"#.to_string(),
                    String::new(),
                    String::new(),
                ];
                sse_reply(&frames.join(eol))
            })
        }))
        .await;
        let client = connect(&srv, Profile::Yoagent).await;
        let result = client.call_tool("echo", json!({}), None).await.unwrap();
        assert_eq!(text_of(&result), "multi", "{eol:?}");
        assert_eq!(client.tools_list_changes(), 1);
    }
}

#[tokio::test]
async fn a_held_open_stream_returns_at_the_frame_and_trailing_frames_are_not_read() {
    let srv = TestServer::start(mcp(|req, _| {
        (req.rpc_method() == "tools/call").then(|| {
            let answer = format!(
                "data: {}\n\n",
                result(req, json!({"content": [{"type": "text", "text": "early"}]}))
            );
            let trailing =
                "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";
            sse_reply(&answer).body(trailing).hold()
        })
    }))
    .await;
    let client = connect(&srv, Profile::Yoagent).await;
    let call = client.call_tool("echo", json!({}), None);
    let result = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("returned at the frame")
        .unwrap();
    assert_eq!(text_of(&result), "early");
    assert_eq!(client.tools_list_changes(), 0);
}

#[tokio::test]
async fn a_held_open_stream_is_let_go_once_its_frame_is_read() {
    let closed = Arc::new(tokio::sync::Notify::new());
    let seen_closed = closed.clone();
    let srv = TestServer::start(mcp(move |req, _| {
        (req.rpc_method() == "tools/call").then(|| {
            let answer = format!(
                "data: {}\n\n",
                result(req, json!({"content": [{"type": "text", "text": "early"}]}))
            );
            let mut reply = sse_reply(&answer).hold();
            reply.closed = Some(closed.clone());
            reply
        })
    }))
    .await;
    let client = connect(&srv, Profile::Strict).await;
    let result = tokio::time::timeout(
        Duration::from_secs(5),
        client.call_tool("echo", json!({}), None),
    )
    .await
    .expect("returned at the frame")
    .unwrap();
    assert_eq!(text_of(&result), "early");
    // The client, not the server, must end the connection the server holds open.
    tokio::time::timeout(Duration::from_secs(5), seen_closed.notified())
        .await
        .expect("the client closed the held-open stream");
}

/// 2026-07-28: the `subscriptions/listen` stream lives in a task of its own; a client dropped
/// without `close()` ends it too (the server holds the stream open: only the client can).
#[tokio::test]
async fn a_dropped_client_lets_its_listen_stream_go() {
    let closed = Arc::new(tokio::sync::Notify::new());
    let seen_closed = closed.clone();
    let srv = TestServer::start(mcp(move |req, _| match req.rpc_method().as_str() {
        "server/discover" => Some(json_reply(result(
            req,
            json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": true}}, "serverInfo": {"name": "t", "version": "1"}}),
        ))),
        "subscriptions/listen" => {
            let params = json!({"notifications": {"toolsListChanged": true}, "_meta": {"io.modelcontextprotocol/subscriptionId": req.id()}});
            let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": params});
            let mut reply = sse_reply(&format!("data: {ack}\n\n")).hold();
            reply.closed = Some(closed.clone());
            Some(reply)
        }
        _ => None,
    }))
    .await;
    let mut config = config(Profile::Strict, Duration::from_secs(10));
    config.revision = Some("2026-07-28".into());
    let client = McpClient::connect_http(server(srv.url("/mcp")), config)
        .await
        .expect("discover");
    tokio::time::timeout(Duration::from_secs(5), async {
        while !srv
            .rpc_methods()
            .iter()
            .any(|m| m == "subscriptions/listen")
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the client opened its listen stream");
    drop(client);
    tokio::time::timeout(Duration::from_secs(5), seen_closed.notified())
        .await
        .expect("dropping the client ended its listen stream");
}

#[tokio::test]
async fn a_timed_out_call_lets_its_connection_go() {
    let closed = Arc::new(tokio::sync::Notify::new());
    let seen_closed = closed.clone();
    let srv = TestServer::start(mcp(move |req, _| {
        (req.rpc_method() == "tools/call").then(|| {
            let mut reply = Reply::new(200);
            reply.stall = true;
            reply.closed = Some(closed.clone());
            reply
        })
    }))
    .await;
    let client = connect(&srv, Profile::Strict).await;
    let err = client
        .call_tool("echo", json!({}), Some(Duration::from_millis(100)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    tokio::time::timeout(Duration::from_secs(5), seen_closed.notified())
        .await
        .expect("the client closed the abandoned connection");
}

#[tokio::test]
async fn the_idle_timeout_fires_on_a_silent_server_and_resets_on_every_read() {
    // A pause eight times shorter than the idle bound: a loaded machine stretches a pause,
    // not by that much.
    let idle = Duration::from_millis(400);
    let srv = TestServer::start(mcp(|req, _| match req.json()["params"]["name"].as_str() {
        Some("silent-head") => Some(Reply {
            stall: true,
            ..Reply::new(200)
        }),
        Some("silent-body") => Some(
            Reply::new(200)
                .header("Content-Type", "text/event-stream")
                .hold(),
        ),
        Some("trickle") => {
            let mut reply = Reply::new(200).header("Content-Type", "text/event-stream");
            for _ in 0..12 {
                reply = reply
                    .body(": still working\n\n")
                    .pause(Duration::from_millis(50));
            }
            Some(reply.body(format!("data: {}\n\n", result(req, json!({"content": []})))))
        }
        _ => None,
    }))
    .await;
    let client = McpClient::connect_http(server(srv.url("/mcp")), config(Profile::Yoagent, idle))
        .await
        .unwrap();
    for name in ["silent-head", "silent-body"] {
        let started = Instant::now();
        let err = client.call_tool(name, json!({}), None).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout, "{err}");
        assert!(
            err.to_string().contains("(idle read timeout)") && err.to_string().contains("400ms"),
            "{err}"
        );
        assert!(started.elapsed() < Duration::from_secs(3));
    }
    let started = Instant::now();
    client
        .call_tool("trickle", json!({}), None)
        .await
        .expect("a trickling call is never cut off");
    // Longer than one idle bound: each read reset it.
    assert!(started.elapsed() >= Duration::from_millis(550));
}

#[test]
fn the_idle_read_default_is_120_seconds() {
    assert_eq!(
        ClientConfig::new(Profile::Yoagent).timeouts().idle_read,
        Duration::from_secs(120)
    );
    assert_eq!(
        ClientConfig::new(Profile::Strict).timeouts().idle_read,
        Duration::from_secs(120)
    );
    assert_eq!(HttpServer::default().max_body_bytes, 16 * 1024 * 1024);
    assert_eq!(HttpServer::default().redirects, Redirects::SameOrigin);
}

#[tokio::test]
async fn bounds_over_http_follow_the_profile() {
    let srv = TestServer::start(mcp(|req, _| {
        (req.rpc_method() == "tools/call").then(|| {
            Reply::new(200)
                .header("Content-Type", "text/event-stream")
                .hold()
        })
    }))
    .await;
    // strict: the per-call override works over HTTP.
    let strict = McpClient::connect_http(
        server(srv.url("/mcp")),
        config(Profile::Strict, Duration::from_secs(30)),
    )
    .await
    .unwrap();
    let err = strict
        .call_tool("slow", json!({}), Some(Duration::from_millis(100)))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Timeout);
    assert_eq!(
        err.to_string(),
        "MCP call 'tools/call' timed out after 100ms; the server may still carry it out"
    );
    assert!(srv
        .rpc_methods()
        .contains(&"notifications/cancelled".to_string()));
    // kova: timeouts().call bounds the whole request.
    let mut kova_config = config(Profile::Kova, Duration::from_secs(30));
    kova_config.timeouts = Some(Timeouts {
        call: Some(Duration::from_millis(150)),
        ..kova_config.timeouts()
    });
    let kova = McpClient::connect_http(server(srv.url("/mcp")), kova_config)
        .await
        .unwrap();
    let err = kova.call_tool("slow", json!({}), None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP call 'tools/call' timed out after 150ms; the server may still carry it out"
    );
}

#[tokio::test]
async fn server_requests_on_the_post_stream_are_answered_by_strict_and_not_by_yoagent() {
    for profile in [Profile::Strict, Profile::Yoagent] {
        let srv = TestServer::start(mcp(|req, _| {
            if req.rpc_method() == "tools/call" {
                let ping = "data: {\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}\n\n";
                let sampling = "data: {\"jsonrpc\":\"2.0\",\"id\":\"p2\",\"method\":\"sampling/createMessage\"}\n\n";
                return Some(sse_reply(ping).body(sampling).hold());
            }
            (req.method == "POST" && req.json().get("result").or(req.json().get("error")).is_some()).then(|| Reply::new(202))
        }))
        .await;
        let client = McpClient::connect_http(
            server(srv.url("/mcp")),
            config(profile, Duration::from_millis(300)),
        )
        .await
        .unwrap();
        let err = client.call_tool("x", json!({}), None).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Timeout);
        let answers: Vec<Value> = srv
            .seen()
            .iter()
            .map(Seen::json)
            .filter(|m| m.get("method").is_none() && m.get("id").is_some())
            .collect();
        if profile == Profile::Strict {
            assert_eq!(answers.len(), 2, "{answers:?}");
            assert_eq!(
                answers[0],
                json!({"jsonrpc": "2.0", "id": "p1", "result": {}})
            );
            assert_eq!(answers[1]["error"]["code"], -32601);
        } else {
            assert!(answers.is_empty(), "{answers:?}");
        }
    }
}

#[tokio::test]
async fn malformed_sse_is_a_clear_protocol_error() {
    let cases: [(&str, Reply, &str); 4] = [
        (
            "no-blank-line",
            sse_reply("data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}"),
            "unterminated event",
        ),
        (
            "not-json",
            sse_reply("data: <html>oops</html>\n\n"),
            "is not JSON: <html>oops</html>",
        ),
        (
            "truncated",
            sse_reply("data: {\"jsonrpc\":\"2.0\",\"id\":3,\"res"),
            "ended before the response",
        ),
        (
            "endless",
            {
                let mut r = sse_reply("data: ");
                for _ in 0..64 {
                    r = r.body(vec![b'x'; 1024]);
                }
                r
            },
            "larger than 16384 bytes",
        ),
    ];
    for (name, reply, expected) in cases {
        let srv = TestServer::start(mcp(move |req, _| {
            (req.rpc_method() == "tools/call").then(|| reply.clone())
        }))
        .await;
        let http = HttpServer {
            max_body_bytes: 16 * 1024,
            ..server(srv.url("/mcp"))
        };
        let client =
            McpClient::connect_http(http, config(Profile::Yoagent, Duration::from_secs(5)))
                .await
                .unwrap();
        let err = client.call_tool("x", json!({}), None).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Protocol, "{name}: {err}");
        assert!(err.to_string().contains(expected), "{name}: {err}");
    }
}

#[tokio::test]
async fn a_json_body_over_the_cap_is_refused() {
    let srv = TestServer::start(mcp(|req, _| {
        (req.rpc_method() == "tools/call").then(|| {
            json_reply(result(
                req,
                json!({"content": [{"type": "text", "text": "x".repeat(5000)}]}),
            ))
        })
    }))
    .await;
    let http = HttpServer {
        max_body_bytes: 4096,
        ..server(srv.url("/mcp"))
    };
    let client = McpClient::connect_http(http, ClientConfig::new(Profile::Yoagent))
        .await
        .unwrap();
    let err = client.call_tool("x", json!({}), None).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    assert!(
        err.to_string()
            .contains("is larger than 4096 bytes (max_body_bytes)"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------
// Acknowledgements and statuses

#[tokio::test]
async fn empty_202_and_204_acknowledge_notifications_and_other_empty_2xx_are_refused() {
    let srv = TestServer::start(mcp(|req, _| match req.rpc_method().as_str() {
        "notifications/a" => Some(Reply::new(202)),
        "notifications/b" => Some(Reply::new(204)),
        "notifications/c" => Some(Reply::new(200)),
        "tools/list" => Some(Reply::new(202)),
        "tools/call" => Some(Reply::new(200).header("Content-Type", "application/json")),
        _ => None,
    }))
    .await;
    let client = connect(&srv, Profile::Yoagent).await;
    client.notify("notifications/a", None).await.unwrap();
    client.notify("notifications/b", None).await.unwrap();
    let origin = format!("http://127.0.0.1:{}", srv.port);
    let err = client.notify("notifications/c", None).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    assert_eq!(
        err.to_string(),
        format!("protocol error: HTTP error on 'notifications/c' reaching {origin}: the server answered 'notifications/c' with an empty 200 response; a proxy may have answered instead of the MCP server")
    );
    for err in [
        client.list_tools().await.unwrap_err(),
        client.call_tool("x", json!({}), None).await.unwrap_err(),
    ] {
        assert_eq!(err.kind(), ErrorKind::Protocol);
        assert!(
            err.to_string()
                .contains("a proxy may have answered instead of the MCP server"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_refused_connection_is_a_transport_error_naming_the_origin() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("http://127.0.0.1:{port}/mcp/sk-live-4f9a8b7c");
    let err = McpClient::connect_http(server(url), ClientConfig::new(Profile::Yoagent))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Transport);
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("HTTP error reaching http://127.0.0.1:{port}: ")),
        "{text}"
    );
    assert!(!text.contains("sk-live"), "{text}");
}

#[test]
fn header_validation_fails_before_anything_is_sent() {
    let err = HeaderList::new()
        .with_header("Mcp-Session-Id", "x")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "HTTP header 'Mcp-Session-Id' is set by the transport itself and cannot be given"
    );
    let err = HeaderList::new()
        .with_header("x-key", "top\nsecret")
        .unwrap_err();
    assert!(!err.to_string().contains("secret"), "{err}");
    assert_eq!(
        err.to_string(),
        "invalid value for HTTP header 'x-key': only visible ASCII is allowed, with spaces and tabs inside (the value is not shown)"
    );
    let err = HeaderList::new().with_header("bad name", "v").unwrap_err();
    assert_eq!(err.to_string(), "invalid HTTP header name 'bad name'");
    let list = HeaderList::new()
        .with_header("authorization", "Bearer hidden-token")
        .unwrap();
    let debug = format!(
        "{:?}",
        HttpServer {
            headers: list,
            ..HttpServer::new("http://127.0.0.1:1/mcp/sk-live-4f9a8b7c")
        }
    );
    assert!(
        !debug.contains("hidden-token") && !debug.contains("sk-live"),
        "{debug}"
    );
}

// ---------------------------------------------------------------------------------------
// Redirects

fn redirect(status: u16, to: String) -> Reply {
    Reply::new(status).header("Location", &to)
}

#[tokio::test]
async fn same_origin_307_and_308_keep_the_post_and_its_body() {
    let srv = TestServer::start(mcp(|req, _| match req.path.as_str() {
        "/a" => Some(redirect(307, "/b".into())),
        "/b" => Some(redirect(308, "/mcp".into())),
        _ => None,
    }))
    .await;
    let client =
        McpClient::connect_http(server(srv.url("/a")), ClientConfig::new(Profile::Yoagent))
            .await
            .unwrap();
    client.list_tools().await.unwrap();
    let seen = srv.seen();
    let list: Vec<&Seen> = seen
        .iter()
        .filter(|s| s.rpc_method() == "tools/list")
        .collect();
    assert_eq!(
        list.iter().map(|s| s.path.as_str()).collect::<Vec<_>>(),
        ["/a", "/b", "/mcp"]
    );
    assert!(list.iter().all(|s| s.method == "POST"));
}

#[tokio::test]
async fn a_303_would_turn_the_post_into_a_get_and_fails_clearly() {
    for status in [301, 302, 303] {
        let srv = TestServer::start(mcp(move |req, _| {
            (req.path == "/a").then(|| redirect(status, "/mcp".into()))
        }))
        .await;
        let err =
            McpClient::connect_http(server(srv.url("/a")), ClientConfig::new(Profile::Yoagent))
                .await
                .unwrap_err();
        let origin = format!("http://127.0.0.1:{}", srv.port);
        assert_eq!(
            err.to_string(),
            format!("HTTP error reaching {origin}: redirect from {origin} to {origin} refused: a {status} turns the POST into a GET, which an MCP endpoint cannot answer (a server should redirect with 307 or 308)")
        );
        assert_eq!(srv.seen().len(), 1);
    }
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_the_other_origin_gets_nothing() {
    let other = TestServer::start(mcp(|_, _| None)).await;
    let to_localhost = format!("http://localhost:{}/mcp", other.port);
    let to_port = other.url("/mcp");
    for target in [to_localhost, to_port] {
        let t = target.clone();
        let srv = TestServer::start(mcp(move |_, _| Some(redirect(307, t.clone())))).await;
        let err = McpClient::connect_http(
            server(srv.url("/mcp/sk-live-4f9a8b7c")),
            ClientConfig::new(Profile::Yoagent),
        )
        .await
        .unwrap_err();
        let from = format!("http://127.0.0.1:{}", srv.port);
        let to = url::Url::parse(&target).unwrap();
        let to = format!("http://{}:{}", to.host_str().unwrap(), other.port);
        assert_eq!(err.kind(), ErrorKind::Transport);
        assert_eq!(
            err.to_string(),
            format!(
                "HTTP error reaching {from}: redirect from {from} to {to} refused: another origin"
            )
        );
    }
    assert!(other.seen().is_empty());
}

#[tokio::test]
async fn redirects_none_refuses_every_redirect() {
    let srv = TestServer::start(mcp(|req, _| {
        (req.path == "/a").then(|| redirect(307, "/mcp".into()))
    }))
    .await;
    let http = HttpServer {
        redirects: Redirects::None,
        ..server(srv.url("/a"))
    };
    let err = McpClient::connect_http(http, ClientConfig::new(Profile::Yoagent))
        .await
        .unwrap_err();
    assert!(
        err.to_string().ends_with("refused: redirects are disabled"),
        "{err}"
    );
    assert_eq!(srv.seen().len(), 1);
}

#[tokio::test]
async fn redirects_any_follows_elsewhere_dropping_authorization_and_cookie() {
    let other = TestServer::start(mcp(|_, _| None)).await;
    let target = format!("http://localhost:{}/mcp", other.port);
    let srv = TestServer::start(mcp(move |_, _| Some(redirect(307, target.clone())))).await;
    let headers = HeaderList::new()
        .with_header("Authorization", "Bearer one")
        .unwrap()
        .with_header("Cookie", "c=1")
        .unwrap()
        .with_header("X-Custom", "yes")
        .unwrap();
    let http = HttpServer {
        redirects: Redirects::Any,
        headers,
        ..server(srv.url("/mcp"))
    };
    let client = McpClient::connect_http(http, ClientConfig::new(Profile::Yoagent))
        .await
        .unwrap();
    client.list_tools().await.unwrap();
    assert!(srv
        .seen()
        .iter()
        .all(|s| s.header("authorization") == Some("Bearer one")));
    let seen = other.seen();
    assert_eq!(seen.len(), 3);
    for s in seen {
        assert_eq!(s.header("x-custom"), Some("yes"));
        assert!(s.header("authorization").is_none() && s.header("cookie").is_none());
    }
}

#[tokio::test]
async fn ten_redirects_are_followed_and_the_eleventh_is_an_error() {
    for (hops, ok) in [(10, true), (11, false)] {
        let srv = TestServer::start(mcp(move |req, _| {
            let n: usize = req.path.trim_start_matches("/r").parse().ok()?;
            (n < hops).then(|| {
                redirect(
                    307,
                    if n + 1 == hops {
                        "/mcp".into()
                    } else {
                        format!("/r{}", n + 1)
                    },
                )
            })
        }))
        .await;
        let outcome =
            McpClient::connect_http(server(srv.url("/r0")), ClientConfig::new(Profile::Yoagent))
                .await;
        match outcome {
            Ok(_) => assert!(ok),
            Err(err) => {
                assert!(!ok, "{err}");
                assert!(
                    err.to_string()
                        .contains("too many redirects: more than 10 (the limit is 10)"),
                    "{err}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Auth

struct Tokens {
    asked: AtomicUsize,
    refreshed: AtomicUsize,
}

impl TokenProvider for Tokens {
    fn token(&self) -> BoxFuture<'_, Result<String, McpError>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok("old-secret-token".to_string()) })
    }

    fn refresh(&self) -> BoxFuture<'_, Result<String, McpError>> {
        self.refreshed.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok("new-secret-token".to_string()) })
    }
}

#[tokio::test]
async fn a_401_refreshes_once_a_second_401_fails_and_a_403_is_not_retried() {
    let srv = TestServer::start(mcp(|req, _| {
        let auth = req.header("authorization").unwrap_or("");
        match req.json()["params"]["name"].as_str() {
            Some("always-401") => Some(Reply::new(401).body("no")),
            Some("forbidden") => Some(Reply::new(403).body("no")),
            _ => (auth != "Bearer new-secret-token").then(|| Reply::new(401)),
        }
    }))
    .await;
    let tokens = Arc::new(Tokens {
        asked: AtomicUsize::new(0),
        refreshed: AtomicUsize::new(0),
    });
    let http = HttpServer {
        token_provider: Some(tokens.clone()),
        ..server(srv.url("/mcp"))
    };
    let client = McpClient::connect_http(http, config(Profile::Strict, Duration::from_secs(120)))
        .await
        .unwrap();
    assert_eq!(
        tokens.refreshed.load(Ordering::SeqCst),
        2,
        "initialize and initialized each refreshed once"
    );
    let seen = srv.seen();
    assert_eq!(
        seen[0].header("authorization"),
        Some("Bearer old-secret-token")
    );
    assert_eq!(
        seen[1].header("authorization"),
        Some("Bearer new-secret-token")
    );
    let before = srv.seen().len();
    let err = client
        .call_tool("always-401", json!({}), None)
        .await
        .unwrap_err();
    assert_eq!(err.http_status(), Some(401));
    assert_eq!(srv.seen().len(), before + 2);
    let err403 = client
        .call_tool("forbidden", json!({}), None)
        .await
        .unwrap_err();
    assert_eq!(err403.http_status(), Some(403));
    assert_eq!(srv.seen().len(), before + 3);
    for e in [&err, &err403] {
        let text = format!("{} {e:?}", e.full_text());
        assert!(!text.contains("secret-token"), "{text}");
    }
    assert_eq!(tokens.asked.load(Ordering::SeqCst), 4);
}

// ---------------------------------------------------------------------------------------
// HTTPS

#[tokio::test]
async fn https_trusts_the_configured_root_certificate() {
    use tokio_rustls::rustls;
    let cert =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .unwrap();
    let der = cert.cert.der().clone();
    let key = rustls_pki_types::PrivateKeyDer::Pkcs8(cert.key_pair.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der], key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let wrap: Wrap = Arc::new(move |tcp| {
        let acceptor = acceptor.clone();
        Box::pin(async move {
            acceptor
                .accept(tcp)
                .await
                .ok()
                .map(|s| Box::new(s) as Box<dyn Io>)
        })
    });
    let srv = TestServer::start_wrapped(Arc::new(mcp(|_, _| None)), Some(wrap)).await;
    for host in ["127.0.0.1", "localhost"] {
        let url = format!("https://{host}:{}/mcp", srv.port);
        let http = HttpServer {
            root_certificates: vec![cert.cert.pem().into_bytes()],
            ..server(url.clone())
        };
        let client = McpClient::connect_http(http, ClientConfig::new(Profile::Yoagent))
            .await
            .unwrap();
        assert_eq!(client.list_tools().await.unwrap().len(), 1);
        let err = McpClient::connect_http(server(url), ClientConfig::new(Profile::Yoagent))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Transport);
        assert!(err.to_string().contains("TLS handshake failed"), "{err}");
    }
}

// ---------------------------------------------------------------------------------------
// Legacy HTTP+SSE

/// A legacy server: GET /sse answers the endpoint event, then each POSTed request's
/// response on that stream.
async fn legacy_server(
    endpoint: &'static str,
) -> (
    TestServer,
    Arc<Mutex<Option<tokio::sync::mpsc::UnboundedSender<String>>>>,
) {
    let stream: Arc<Mutex<Option<tokio::sync::mpsc::UnboundedSender<String>>>> =
        Arc::new(Mutex::new(None));
    let tx_slot = stream.clone();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let (log, tx_slot) = (log.clone(), tx_slot.clone());
            tokio::spawn(async move {
                // Read one request by hand to route it.
                let mut reader = BufReader::new(tcp);
                let mut head = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).await.unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line);
                }
                let first: Vec<&str> = head.lines().next().unwrap_or("").split(' ').collect();
                let len: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap_or(0))
                    })
                    .unwrap_or(0);
                let mut body = vec![0; len];
                reader.read_exact(&mut body).await.unwrap();
                let body = String::from_utf8_lossy(&body).into_owned();
                let headers = head
                    .lines()
                    .skip(1)
                    .filter_map(|l| l.split_once(':'))
                    .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
                    .collect();
                let seen = Seen {
                    method: first[0].into(),
                    path: first[1].into(),
                    headers,
                    body,
                };
                log.lock().unwrap().push(seen.clone());
                let mut io = reader.into_inner();
                if seen.method == "GET" {
                    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
                    *tx_slot.lock().unwrap() = Some(tx);
                    let headers = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
                    io.write_all(headers.as_bytes()).await.unwrap();
                    io.write_all(format!("event: endpoint\ndata: {endpoint}\n\n").as_bytes())
                        .await
                        .unwrap();
                    while let Some(message) = rx.recv().await {
                        if io
                            .write_all(format!("event: message\ndata: {message}\n\n").as_bytes())
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                    return;
                }
                let request = seen.json();
                if let Some(id) = request
                    .get("id")
                    .filter(|_| request.get("method").is_some())
                {
                    let result = match request["method"].as_str() {
                        Some("initialize") => {
                            json!({"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": {"name": "legacy", "version": "1"}})
                        }
                        _ => {
                            json!({"tools": [{"name": "legacy-tool", "inputSchema": {"type": "object"}}]})
                        }
                    };
                    let message = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                    if let Some(tx) = tx_slot.lock().unwrap().as_ref() {
                        let _ = tx.send(message);
                    }
                }
                let _ = io
                    .write_all(
                        b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    )
                    .await;
            });
        }
    });
    (TestServer { port, seen }, stream)
}

#[tokio::test]
async fn legacy_sse_posts_to_the_endpoint_and_reads_answers_from_the_stream() {
    for profile in [Profile::Strict, Profile::Kova] {
        let (srv, _stream) = legacy_server("/messages?session=1").await;
        let headers = HeaderList::new().with_header("X-Static", "s").unwrap();
        let http = HttpServer {
            headers,
            ..server(srv.url("/sse"))
        };
        let client = McpClient::connect_legacy_sse(http, config(profile, Duration::from_secs(5)))
            .await
            .unwrap();
        assert_eq!(client.list_tools().await.unwrap()[0].name, "legacy-tool");
        client.close().await.unwrap();
        let seen = srv.seen();
        assert_eq!(seen[0].method, "GET");
        assert_eq!(seen[0].header("accept"), Some("text/event-stream"));
        assert!(seen.iter().all(|s| s.header("x-static") == Some("s")));
        assert!(seen[1..]
            .iter()
            .all(|s| s.method == "POST" && s.path == "/messages?session=1"));
        let methods: Vec<String> = seen[1..].iter().map(Seen::rpc_method).collect();
        if profile == Profile::Strict {
            assert_eq!(
                methods,
                ["initialize", "notifications/initialized", "tools/list"]
            );
        } else {
            assert_eq!(methods, ["tools/list"]);
        }
    }
}

#[tokio::test]
async fn a_legacy_endpoint_on_another_origin_is_refused() {
    let (srv, _stream) = legacy_server("http://localhost:1/messages").await;
    let err =
        McpClient::connect_legacy_sse(server(srv.url("/sse")), ClientConfig::new(Profile::Kova))
            .await
            .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    assert!(
        err.to_string()
            .contains("the endpoint event names another origin (http://localhost:1); refused"),
        "{err}"
    );
}
