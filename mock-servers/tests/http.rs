//! The HTTP mock, driven in-process over real sockets by a tiny HTTP/1.1 client written
//! here. Every read is bounded; the only timed waits are the short windows that show
//! nothing more arrives (a stall).

use std::sync::Arc;
use std::time::Duration;

use mcp_mock_servers::load::parse_toml;
use mcp_mock_servers::read_wire_log;
use mcp_mock_servers::wire_log::Record;
use mcp_mock_servers::HttpMock;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

const BOUND: Duration = Duration::from_secs(20);
/// How long "nothing more arrives" is watched for.
const QUIET: Duration = Duration::from_millis(300);

struct Mock {
    mock: HttpMock,
    dir: tempfile::TempDir,
}

impl Mock {
    fn start(script: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let script = parse_toml(script, "test.toml".as_ref()).unwrap();
        let log = dir.path().join("wire.jsonl");
        let mock = HttpMock::start(script, Some(log), dir.path().to_owned()).unwrap();
        Self { mock, dir }
    }

    /// The port of a URL.
    fn port(url: &str) -> u16 {
        let rest = url.rsplit_once(':').unwrap().1;
        rest.split('/').next().unwrap().parse().unwrap()
    }

    async fn connect(&self) -> Client<TcpStream> {
        Client::tcp(Self::port(&self.mock.url()), "127.0.0.1").await
    }

    /// Stops the mock and reads its wire log.
    fn finish(self) -> Vec<Record> {
        let log = self.dir.path().join("wire.jsonl");
        self.mock.shutdown();
        read_wire_log(log).unwrap()
    }
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 connection.
struct Client<S> {
    io: S,
    host: String,
    buf: Vec<u8>,
}

impl Client<TcpStream> {
    async fn tcp(port: u16, host: &str) -> Self {
        let io = timeout(BOUND, TcpStream::connect(("127.0.0.1", port)))
            .await
            .unwrap()
            .unwrap();
        Client {
            io,
            host: format!("{host}:{port}"),
            buf: Vec::new(),
        }
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Client<S> {
    async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let mut request = format!("{method} {path} HTTP/1.1\r\nhost: {}\r\n", self.host);
        request.push_str("accept: application/json, text/event-stream\r\n");
        if !body.is_empty() {
            request.push_str("content-type: application/json\r\n");
        }
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
        timeout(BOUND, self.io.write_all(request.as_bytes()))
            .await
            .unwrap()
            .unwrap();
    }

    /// Reads more bytes; false at end of stream.
    async fn more(&mut self) -> bool {
        let mut chunk = [0u8; 8192];
        let n = timeout(BOUND, self.io.read(&mut chunk))
            .await
            .unwrap()
            .unwrap_or(0);
        self.buf.extend_from_slice(&chunk[..n]);
        n > 0
    }

    async fn head(&mut self) -> Response {
        loop {
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                let text = String::from_utf8(self.buf[..end].to_vec()).unwrap();
                self.buf.drain(..end + 4);
                let mut lines = text.split("\r\n");
                let status = lines
                    .next()
                    .unwrap()
                    .split(' ')
                    .nth(1)
                    .unwrap()
                    .parse()
                    .unwrap();
                let headers = lines
                    .map(|l| {
                        let (n, v) = l.split_once(':').unwrap();
                        (n.trim().to_ascii_lowercase(), v.trim().to_owned())
                    })
                    .collect();
                return Response { status, headers };
            }
            assert!(
                self.more().await,
                "the connection closed before a response head"
            );
        }
    }

    /// A body with a content-length.
    async fn body(&mut self, response: &Response) -> Vec<u8> {
        let length: usize = response.header("content-length").unwrap().parse().unwrap();
        while self.buf.len() < length {
            assert!(self.more().await, "the body ended early");
        }
        self.buf.drain(..length).collect()
    }

    /// Decodes chunks until `done` holds on what was decoded or the body ends; returns the
    /// decoded bytes and whether the body ended.
    async fn chunks_until(&mut self, done: impl Fn(&[u8]) -> bool) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        loop {
            if done(&out) {
                return (out, false);
            }
            let Some(line_end) = find(&self.buf, b"\r\n") else {
                assert!(self.more().await, "the connection closed mid-body");
                continue;
            };
            let size_text = String::from_utf8(self.buf[..line_end].to_vec()).unwrap();
            let size = usize::from_str_radix(size_text.trim(), 16).unwrap();
            if self.buf.len() < line_end + 2 + size + 2 {
                assert!(self.more().await, "the connection closed mid-chunk");
                continue;
            }
            out.extend_from_slice(&self.buf[line_end + 2..line_end + 2 + size]);
            self.buf.drain(..line_end + 2 + size + 2);
            if size == 0 {
                return (out, true);
            }
        }
    }

    /// Whether nothing arrives for a short while (the connection neither sends nor closes).
    async fn stays_quiet(&mut self) -> bool {
        let mut chunk = [0u8; 64];
        timeout(QUIET, self.io.read(&mut chunk)).await.is_err()
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The JSON of each `data:` line of an SSE text, one frame per blank-line-ended event.
fn frames(text: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(text)
        .split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            (!data.is_empty())
                .then(|| serde_json::from_str(&data.join("\n")).unwrap_or(json!(data.join("\n"))))
        })
        .collect()
}

fn count_frames(text: &[u8]) -> usize {
    String::from_utf8_lossy(text).matches("\n\n").count()
}

fn call(id: u64, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}})
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
}

#[tokio::test]
async fn a_json_reply_answers_the_post_and_is_logged() {
    let mock = Mock::start(
        r#"
        transport = "http"
        steps = [{ expect = { method = "tools/list", http = { method = "POST", path = "/mcp" } } }, { reply = {} }]
        "#,
    );
    let mut client = mock.connect().await;
    client
        .send("POST", "/mcp", &[], Some(&call(1, "tools/list")))
        .await;
    let response = client.head().await;
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&client.body(&response).await).unwrap();
    assert_eq!(body["id"], 1);
    assert_eq!(body["result"]["tools"][0]["name"], "echo");
    let log = mock.finish();
    assert!(matches!(&log[0], Record::Listening { primary, .. } if primary.ends_with("/mcp")));
    let request = log.iter().find_map(|r| match r {
        Record::HttpRequest {
            origin,
            method,
            path,
            headers,
            ..
        } => Some((origin, method, path, headers)),
        _ => None,
    });
    let (origin, method, path, headers) = request.unwrap();
    assert_eq!(
        (origin.as_str(), method.as_str(), path.as_str()),
        ("primary", "POST", "/mcp")
    );
    assert!(headers
        .iter()
        .any(|(n, v)| n == "accept" && v.contains("text/event-stream")));
    assert!(log
        .iter()
        .any(|r| matches!(r, Record::HttpResponse { status: 200, .. })));
    assert!(log
        .iter()
        .any(|r| matches!(r, Record::Sent { message } if message["id"] == 1)));
    assert!(log.iter().any(|r| matches!(r, Record::Completed {})));
}

#[tokio::test]
async fn an_sse_reply_comes_after_its_notification_and_the_stream_stays_open() {
    let mock = Mock::start(
        r#"
        transport = "http"
        steps = [
          { expect = { method = "tools/call" } },
          { notify = { method = "notifications/progress", params = { progressToken = 1, progress = 0.5 } } },
          { reply = { hold_open = true, sse_line_end = "lf" } },
        ]
        "#,
    );
    let mut client = mock.connect().await;
    client
        .send("POST", "/mcp", &[], Some(&call(7, "tools/call")))
        .await;
    let response = client.head().await;
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    let (text, ended) = client.chunks_until(|t| count_frames(t) >= 2).await;
    assert!(!ended);
    let frames = frames(&text);
    assert_eq!(frames[0]["method"], "notifications/progress");
    assert_eq!(frames[1]["id"], 7);
    assert!(
        client.stays_quiet().await,
        "the held stream sent more or ended"
    );
    mock.finish();
}

#[tokio::test]
async fn an_expired_session_gets_404_and_a_new_handshake_follows() {
    let mock = Mock::start(
        r#"
        transport = "http"
        steps = [
          { handshake = { session_id = "s-1" } },
          { expire_session = {} },
          { expect = { method = "initialize", http = { absent_headers = ["Mcp-Session-Id"] } } },
          { reply = { session_id = "s-2" } },
        ]
        "#,
    );
    let mut client = mock.connect().await;
    client.send("POST", "/mcp", &[], Some(&initialize(1))).await;
    let response = client.head().await;
    assert_eq!(response.header("mcp-session-id"), Some("s-1"));
    client.body(&response).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    client
        .send(
            "POST",
            "/mcp",
            &[("mcp-session-id", "s-1")],
            Some(&initialized),
        )
        .await;
    let response = client.head().await;
    assert_eq!(response.status, 202);
    client.body(&response).await;
    client
        .send(
            "POST",
            "/mcp",
            &[("mcp-session-id", "s-1")],
            Some(&call(2, "tools/list")),
        )
        .await;
    let response = client.head().await;
    assert_eq!(response.status, 404);
    client.body(&response).await;
    client.send("POST", "/mcp", &[], Some(&initialize(3))).await;
    let response = client.head().await;
    assert_eq!(response.status, 200);
    assert_eq!(response.header("mcp-session-id"), Some("s-2"));
    let log = mock.finish();
    assert!(log
        .iter()
        .any(|r| matches!(r, Record::HttpResponse { status: 404, .. })));
    assert!(log.iter().any(|r| matches!(r, Record::Completed {})));
}

#[tokio::test]
async fn a_redirect_points_at_the_second_origin_which_logs_its_own_requests() {
    let mock = Mock::start(
        r#"
        transport = "http"
        steps = [
          { expect = { method = "tools/list", http = { origin = "primary" } } },
          { redirect = { status = 307, location = "${second}/mcp" } },
          { expect = { method = "tools/list", http = { origin = "second" } } },
          { reply = {} },
        ]
        "#,
    );
    let mut client = mock.connect().await;
    client
        .send("POST", "/mcp", &[], Some(&call(1, "tools/list")))
        .await;
    let response = client.head().await;
    assert_eq!(response.status, 307);
    let location = response.header("location").unwrap().to_owned();
    assert_eq!(location, mock.mock.second_origin_url());
    assert!(location.starts_with("http://localhost:"));
    let mut second = Client::tcp(Mock::port(&location), "localhost").await;
    second
        .send("POST", "/mcp", &[], Some(&call(1, "tools/list")))
        .await;
    assert_eq!(second.head().await.status, 200);
    let log = mock.finish();
    let origins: Vec<&str> = log
        .iter()
        .filter_map(|r| match r {
            Record::HttpRequest { origin, .. } => Some(origin.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(origins, ["primary", "second"]);
}

#[tokio::test]
async fn a_response_can_stall_after_its_headers_or_before_them() {
    let mock = Mock::start(
        r#"
        transport = "http"
        steps = [
          { expect = { method = "tools/call", name = "first" } },
          { notify = { method = "notifications/progress", params = { progressToken = 1, progress = 0.1 } } },
          { expect = { method = "tools/call" } },
          { hang = {} },
        ]
        "#,
    );
    let mut client = mock.connect().await;
    client
        .send("POST", "/mcp", &[], Some(&call(1, "tools/call")))
        .await;
    let response = client.head().await;
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    let (text, ended) = client.chunks_until(|t| count_frames(t) >= 1).await;
    assert!(!ended);
    assert_eq!(frames(&text)[0]["method"], "notifications/progress");
    assert!(client.stays_quiet().await, "the stalled body went on");
    let mut other = mock.connect().await;
    other
        .send("POST", "/mcp", &[], Some(&call(2, "tools/call")))
        .await;
    assert!(other.stays_quiet().await, "the hung request got an answer");
    mock.finish();
}

#[tokio::test]
async fn a_raw_500_quotes_the_url_and_a_mismatch_is_recorded() {
    let mock = Mock::start(
        r#"
        transport = "http"
        http = { path = "/sk-live-4f9a8b7c/mcp?key=abcdefgh12" }
        # The mismatch is the point: no tools/list is incidental here.
        incidental = []
        steps = [
          { expect = { method = "tools/list" } },
          { respond = { status = 500, body = "upstream failed for ${url}" } },
          { expect = { method = "tools/call" } },
          { reply = {} },
        ]
        "#,
    );
    let url = mock.mock.url();
    let path = url
        .split_once(":")
        .unwrap()
        .1
        .split_once('/')
        .unwrap()
        .1
        .split_once('/')
        .unwrap()
        .1;
    let path = format!("/{}", path.split_once('/').unwrap().1);
    assert_eq!(path, "/sk-live-4f9a8b7c/mcp?key=abcdefgh12");
    let mut client = mock.connect().await;
    client
        .send("POST", &path, &[], Some(&call(1, "tools/list")))
        .await;
    let response = client.head().await;
    assert_eq!(response.status, 500);
    let body = String::from_utf8(client.body(&response).await).unwrap();
    assert_eq!(body, format!("upstream failed for {url}"));
    client
        .send("POST", &path, &[], Some(&call(2, "tools/list")))
        .await;
    let response = client.head().await;
    assert_eq!(response.status, 500);
    let log = mock.finish();
    let mismatch = log.iter().find_map(|r| match r {
        Record::Mismatch {
            index,
            expected,
            received,
        } => Some((*index, expected.clone(), received.clone())),
        _ => None,
    });
    assert_eq!(
        mismatch,
        Some((2, "tools/call".to_owned(), call(2, "tools/list")))
    );
}

#[tokio::test]
async fn steps_left_at_shutdown_are_unfinished() {
    let mock = Mock::start(
        r#"
        transport = "http"
        steps = [{ expect = { http = { method = "DELETE" } } }, { respond = { status = 405 } }]
        "#,
    );
    let log = mock.finish();
    assert!(log
        .iter()
        .any(|r| matches!(r, Record::Unfinished { expected } if expected == "expect any request (HTTP DELETE)")));
}

#[tokio::test]
async fn https_serves_a_certificate_for_both_host_names() {
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
    use tokio_rustls::rustls::{ClientConfig, RootCertStore};

    let mock = Mock::start(
        r#"
        transport = "https"
        steps = [
          { expect = { method = "tools/list", http = { origin = "primary" } } },
          { reply = {} },
          { expect = { method = "tools/list", http = { origin = "second" } } },
          { reply = {} },
        ]
        "#,
    );
    assert!(mock.mock.url().starts_with("https://127.0.0.1:"));
    assert!(mock
        .mock
        .plain_url()
        .unwrap()
        .starts_with("http://127.0.0.1:"));
    let pem = mock.mock.ca_certificate_pem().unwrap();
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(pem.as_bytes()).unwrap())
        .unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let targets = [
        (Mock::port(&mock.mock.url()), "127.0.0.1"),
        (Mock::port(&mock.mock.second_origin_url()), "localhost"),
    ];
    for (port, host) in targets {
        let tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let name = ServerName::try_from(host.to_owned()).unwrap();
        let io = timeout(BOUND, connector.connect(name, tcp))
            .await
            .unwrap()
            .unwrap();
        let mut client = Client {
            io,
            host: format!("{host}:{port}"),
            buf: Vec::new(),
        };
        client
            .send("POST", "/mcp", &[], Some(&call(1, "tools/list")))
            .await;
        let response = client.head().await;
        assert_eq!(response.status, 200, "over {host}");
        client.body(&response).await;
    }
    let log = mock.finish();
    assert!(log.iter().any(|r| matches!(r, Record::Completed {})));
}

#[tokio::test]
async fn the_legacy_transport_names_its_endpoint_and_answers_on_the_stream() {
    let mock = Mock::start(
        r#"
        transport = "legacy-sse"
        steps = [
          { expect = { http = { method = "GET", path = "/sse" } } },
          { endpoint = { path = "/messages?session_id=1" } },
          { expect = { method = "tools/list", http = { path = "/messages?session_id=1" } } },
          { reply = {} },
        ]
        "#,
    );
    assert!(mock.mock.url().ends_with("/sse"));
    let mut stream = mock.connect().await;
    stream.send("GET", "/sse", &[], None).await;
    let response = stream.head().await;
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    let (text, _) = stream.chunks_until(|t| count_frames(t) >= 1).await;
    assert_eq!(
        String::from_utf8(text).unwrap(),
        "event: endpoint\ndata: /messages?session_id=1\n\n"
    );
    let mut post = mock.connect().await;
    post.send(
        "POST",
        "/messages?session_id=1",
        &[],
        Some(&call(4, "tools/list")),
    )
    .await;
    assert_eq!(post.head().await.status, 202);
    let (text, ended) = stream.chunks_until(|t| count_frames(t) >= 1).await;
    assert!(!ended);
    assert!(String::from_utf8_lossy(&text).starts_with("event: message\n"));
    assert_eq!(frames(&text)[0]["id"], 4);
    mock.finish();
}

#[tokio::test]
async fn refuse_holds_the_port_without_listening_then_listens_again() {
    let mock = Mock::start(
        r#"
        transport = "http"
        steps = [
          { expect = { method = "tools/list" } },
          { refuse = { ms = 300 } },
          { reply = {} },
          { expect = { method = "tools/list" } },
          { reply = {} },
        ]
        "#,
    );
    let port = Mock::port(&mock.mock.url());
    let mut client = mock.connect().await;
    client
        .send("POST", "/mcp", &[], Some(&call(1, "tools/list")))
        .await;
    // The answer comes once the port refuses; the open connection lives on.
    let response = client.head().await;
    assert_eq!(response.status, 200);
    let refused = TcpStream::connect(("127.0.0.1", port)).await.unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    let mut client = once_listening(port).await;
    client
        .send("POST", "/mcp", &[], Some(&call(2, "tools/list")))
        .await;
    assert_eq!(client.head().await.status, 200);
    let log = mock.finish();
    assert!(log.iter().any(|r| matches!(r, Record::Completed {})));
}

#[tokio::test]
async fn refuse_as_the_first_step_refuses_from_the_start() {
    let mock = Mock::start(
        r#"
        transport = "http"
        steps = [{ refuse = { ms = 200 } }, { expect = { method = "tools/list" } }, { reply = {} }]
        "#,
    );
    let port = Mock::port(&mock.mock.url());
    let refused = TcpStream::connect(("127.0.0.1", port)).await.unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    let mut client = once_listening(port).await;
    client
        .send("POST", "/mcp", &[], Some(&call(1, "tools/list")))
        .await;
    assert_eq!(client.head().await.status, 200);
    mock.finish();
}

/// A connection to `port` once it listens again (tries every 20 ms, bounded).
async fn once_listening(port: u16) -> Client<TcpStream> {
    let io = timeout(BOUND, async {
        loop {
            match TcpStream::connect(("127.0.0.1", port)).await {
                Ok(tcp) => return tcp,
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    })
    .await
    .unwrap();
    Client {
        io,
        host: format!("127.0.0.1:{port}"),
        buf: Vec::new(),
    }
}

/// Over legacy-sse, the answer to a POST comes on the endpoint stream.
async fn legacy_exchange(
    stream: &mut Client<TcpStream>,
    post: &mut Client<TcpStream>,
    message: &Value,
) -> Value {
    post.send("POST", "/messages?session_id=1", &[], Some(message))
        .await;
    assert_eq!(post.head().await.status, 202);
    let (text, _) = stream.chunks_until(|t| count_frames(t) >= 1).await;
    frames(&text).remove(0)
}

#[tokio::test]
async fn legacy_sse_answers_incidental_traffic_on_the_stream_and_records_it() {
    let mock = Mock::start(
        r#"
        transport = "legacy-sse"
        steps = [
          { expect = { http = { method = "GET", path = "/sse" } } },
          { endpoint = { path = "/messages?session_id=1" } },
          { expect = { method = "tools/call" } },
          { reply = {} },
        ]
        "#,
    );
    let mut stream = mock.connect().await;
    stream.send("GET", "/sse", &[], None).await;
    stream.head().await;
    stream.chunks_until(|t| count_frames(t) >= 1).await;
    let mut discover = call(1, "server/discover");
    discover["id"] = json!("probe");
    let replies = [
        legacy_exchange(&mut stream, &mut mock.connect().await, &discover).await,
        legacy_exchange(
            &mut stream,
            &mut mock.connect().await,
            &call(2, "tools/list"),
        )
        .await,
        legacy_exchange(
            &mut stream,
            &mut mock.connect().await,
            &call(3, "tools/call"),
        )
        .await,
    ];
    assert_eq!(
        (&replies[0]["id"], &replies[0]["error"]["code"]),
        (&json!("probe"), &json!(-32601))
    );
    assert_eq!(
        (&replies[1]["id"], &replies[1]["result"]["tools"][0]["name"]),
        (&json!(2), &json!("echo"))
    );
    assert_eq!(replies[2]["id"], 3);
    let log = mock.finish();
    assert_eq!(incidental_methods(&log), ["server/discover", "tools/list"]);
    assert!(log.iter().any(|r| matches!(r, Record::Completed {})));
}

#[tokio::test]
async fn streamable_http_answers_a_discover_probe_and_a_listen_stream_as_an_older_server() {
    let mock = Mock::start(
        r#"transport = "http"
        steps = [{ expect = { method = "tools/call" } }, { reply = {} }]"#,
    );
    let mut client = mock.connect().await;
    client
        .send("POST", "/mcp", &[], Some(&call(1, "server/discover")))
        .await;
    let response = client.head().await;
    let body: Value = serde_json::from_slice(&client.body(&response).await).unwrap();
    assert_eq!(
        (body["id"].clone(), body["error"]["code"].clone()),
        (json!(1), json!(-32601)),
        "{body}"
    );
    let mut stream = mock.connect().await;
    stream
        .send("GET", "/mcp", &[("accept", "text/event-stream")], None)
        .await;
    assert_eq!(stream.head().await.status, 405);
    let mut call_client = mock.connect().await;
    call_client
        .send("POST", "/mcp", &[], Some(&call(2, "tools/call")))
        .await;
    assert_eq!(call_client.head().await.status, 200);
    let log = mock.finish();
    assert_eq!(incidental_methods(&log), ["server/discover", "GET"]);
    assert!(log.iter().any(|r| matches!(r, Record::Completed {})));
}

/// A redirect loop follows the redirected request only: a listing or a GET for a stream sent
/// between its hops gets its incidental answer and does not use up `repeat`.
#[tokio::test]
async fn a_redirect_loop_takes_only_its_own_request() {
    let mock = Mock::start(
        r#"
        transport = "http"
        steps = [
          { expect = { method = "tools/call" } },
          { redirect = { status = 308, location = "/loop/mcp", repeat = 3 } },
        ]
        "#,
    );
    let status = |method: &'static str, body: Option<Value>| {
        let mock = &mock;
        async move {
            let mut client = mock.connect().await;
            client.send(method, "/mcp", &[], body.as_ref()).await;
            client.head().await.status
        }
    };
    assert_eq!(status("POST", Some(call(1, "tools/call"))).await, 308);
    assert_eq!(status("POST", Some(call(2, "tools/list"))).await, 200);
    assert_eq!(status("GET", None).await, 405);
    assert_eq!(status("POST", Some(call(1, "tools/call"))).await, 308);
    assert_eq!(status("POST", Some(call(1, "tools/call"))).await, 308);
    // The three hops are used up: the script is over, and a request gets its default answer.
    assert_eq!(status("POST", Some(call(1, "tools/call"))).await, 200);
    let log = mock.finish();
    assert_eq!(incidental_methods(&log), ["tools/list", "GET"]);
}

/// A redirect loop of a GET (a client's stream) takes the GETs that follow as its hops, though
/// a GET is incidental traffic while the script waits for something else.
#[tokio::test]
async fn a_redirect_loop_of_a_get_takes_the_following_gets() {
    let mock = Mock::start(
        r#"
        transport = "http"
        steps = [
          { expect = { http = { method = "GET" } } },
          { redirect = { status = 307, location = "/loop/mcp", repeat = 2 } },
        ]
        "#,
    );
    for _ in 0..2 {
        let mut client = mock.connect().await;
        client.send("GET", "/mcp", &[], None).await;
        assert_eq!(client.head().await.status, 307);
    }
    let log = mock.finish();
    assert_eq!(incidental_methods(&log), Vec::<&str>::new(), "{log:?}");
}

/// The methods the mock answered as incidental traffic, in order.
fn incidental_methods(log: &[Record]) -> Vec<&str> {
    log.iter()
        .filter_map(|r| match r {
            Record::Incidental { method } => Some(method.as_str()),
            _ => None,
        })
        .collect()
}

impl<S: AsyncRead + AsyncWrite + Unpin> Client<S> {
    /// A request with a raw body of its own content type.
    async fn send_form(&mut self, path: &str, form: &str) {
        let request = format!(
            "POST {path} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\r\n{form}",
            self.host,
            form.len()
        );
        timeout(BOUND, self.io.write_all(request.as_bytes()))
            .await
            .unwrap()
            .unwrap();
    }
}

fn s256(verifier: &str) -> String {
    use base64::Engine;
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

fn encoded(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[tokio::test]
async fn the_authorization_side_grants_a_token_only_for_the_right_verifier_and_resource() {
    let mock = Mock::start(
        r#"
        transport = "http"
        auth = { challenge_scope = "s1" }
        steps = [
          { expect = { method = "tools/list", http = { headers = { authorization = "Bearer access-token-7c3d2b" } } } },
          { reply = {} },
        ]
        "#,
    );
    let resource = mock.mock.url();
    let mut mcp = mock.connect().await;
    mcp.send("POST", "/mcp", &[], Some(&call(1, "tools/list")))
        .await;
    let refused = mcp.head().await;
    assert_eq!(refused.status, 401);
    let challenge = refused.header("www-authenticate").unwrap().to_owned();
    assert!(
        challenge.starts_with("Bearer ")
            && challenge.contains("/.well-known/oauth-protected-resource/mcp\"")
            && challenge.contains("scope=\"s1\""),
        "{challenge}"
    );
    mcp.body(&refused).await;
    let port = Mock::port(&mock.mock.second_origin_url());
    let verifier = "a-verifier-of-enough-length-0123456789abcdef";
    // Each authorization is good for one token request.
    let authorize = |extra: &str| {
        format!(
            "/authorize?response_type=code&client_id=mcp-conformance-client&redirect_uri={}&code_challenge={}&code_challenge_method=S256&state=st-1{extra}",
            encoded("http://127.0.0.1/cb"),
            s256(verifier),
        )
    };
    let with_resource = format!("&resource={}", encoded(&resource));
    let mut cases = vec![
        // Another verifier than the challenge was made from.
        (
            with_resource.clone(),
            "code_verifier=not-the-verifier-at-all-0123456789abcd",
            true,
            400,
        ),
        // No resource in the token request.
        (with_resource.clone(), "", false, 400),
        // As it should be.
        (with_resource, "", true, 200),
    ];
    let mut token = None;
    for (extra, verifier_field, resource_field, status) in cases.drain(..) {
        let mut browser = Client::tcp(port, "localhost").await;
        browser.send("GET", &authorize(&extra), &[], None).await;
        let redirect = browser.head().await;
        assert_eq!(redirect.status, 302);
        let location = redirect.header("location").unwrap();
        assert!(
            location.starts_with("http://127.0.0.1/cb?code=authz-code-5f1e9a&state=st-1"),
            "{location}"
        );
        let mut form = format!(
            "grant_type=authorization_code&code=authz-code-5f1e9a&redirect_uri={}&client_id=mcp-conformance-client",
            encoded("http://127.0.0.1/cb")
        );
        form.push('&');
        match verifier_field {
            "" => form.push_str(&format!("code_verifier={verifier}")),
            other => form.push_str(other),
        }
        if resource_field {
            form.push_str(&format!("&resource={}", encoded(&resource)));
        }
        let mut back = Client::tcp(port, "localhost").await;
        back.send_form("/token", &form).await;
        let answer = back.head().await;
        assert_eq!(answer.status, status, "{form}");
        let body: Value = serde_json::from_slice(&back.body(&answer).await).unwrap();
        if status == 200 {
            token = body["access_token"].as_str().map(String::from);
        }
    }
    let token = token.expect("a token was issued");
    // In the query string it is refused; in the header it reaches the script.
    let mut mcp = mock.connect().await;
    mcp.send(
        "POST",
        &format!("/mcp?access_token={token}"),
        &[],
        Some(&call(2, "tools/list")),
    )
    .await;
    let in_query = mcp.head().await;
    assert_eq!(in_query.status, 400);
    mcp.body(&in_query).await;
    let bearer = format!("Bearer {token}");
    mcp.send(
        "POST",
        "/mcp",
        &[("authorization", bearer.as_str())],
        Some(&call(3, "tools/list")),
    )
    .await;
    assert_eq!(mcp.head().await.status, 200);
    let log = mock.finish();
    assert!(log.iter().any(|r| matches!(r, Record::Completed {})));
}
