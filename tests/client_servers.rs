//! The reference client (strict profile, its default revision) against real third-party
//! servers: at 2026-07-28 with the servers written with the TypeScript SDK 2.x and the Python
//! SDK 2.x, and falling back to 2025-11-25 on server-everything, which knows only the
//! handshake revisions; over stdio and Streamable HTTP. The servers are the validator's
//! (`tests/validate/servers.rs`), installed on first use.

use mcp_refclient::{ClientConfig, HttpServer, McpClient, Profile, StdioServer};
use serde_json::json;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "validate/servers.rs"]
mod servers;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn installed() -> PathBuf {
    servers::installed(root())
}

/// server-everything's stdio command (`node …/dist/index.js stdio`).
fn everything() -> Vec<String> {
    let entry =
        installed().join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.is_file(),
        "server-everything is missing at {}",
        entry.display()
    );
    vec!["node".into(), entry.display().to_string(), "stdio".into()]
}

/// A server listening on 127.0.0.1, its process group killed when dropped.
struct Listening {
    child: Child,
    url: String,
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            // SAFETY: killpg only sends a signal, to the group this test created for the child.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
        let _ = self.child.wait();
    }
}

/// Starts `command` (with `env`) in a process group of its own on a free port and waits, at
/// most 20 s, for 127.0.0.1:PORT to accept connections. `port_arg` appends the port to the
/// arguments; otherwise it goes in `PORT`.
fn listen(command: &[String], port_arg: bool) -> Listening {
    let port = servers::server_port();
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    match port_arg {
        true => cmd.arg(port.to_string()),
        false => cmd.env("PORT", port.to_string()),
    };
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let mut listening = Listening {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = listening.child.try_wait() {
            panic!("{command:?} exited before listening on port {port}: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "{command:?} is not listening on port {port} after 20 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    listening
}

fn stdio(command: &[String]) -> StdioServer {
    StdioServer {
        command: command[0].clone(),
        args: command[1..].to_vec(),
        ..Default::default()
    }
}

/// The strict client with its defaults: 2026-07-28 first, the fallback to 2025-11-25.
fn strict() -> ClientConfig {
    ClientConfig::new(Profile::Strict)
}

/// Lists the tools, calls `echo` (its text in `argument`), and closes: what every connection
/// here must manage.
async fn lists_and_calls_echo(client: &McpClient, argument: &str) {
    let tools = client.list_tools().await.expect("tools/list");
    assert!(
        tools.iter().any(|t| t.name == "echo"),
        "no echo among {:?}",
        tools.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    let result = client
        .call_tool(
            "echo",
            json!({ argument: "stateless hello" }),
            Some(Duration::from_secs(20)),
        )
        .await
        .expect("tools/call echo");
    let text = serde_json::to_value(&result).unwrap().to_string();
    assert!(
        text.contains("stateless hello") && !text.contains("\"isError\":true"),
        "echo answered {text}"
    );
    client.close().await.unwrap();
}

/// The server answered `server/discover` with its identity: the 2026-07-28 connection keeps
/// the discover result, which names the SDK server.
fn assert_discovered(client: &McpClient, name: &str) {
    assert_eq!(client.protocol_version(), "2026-07-28");
    let info = client.server_info();
    assert!(
        info["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28"))),
        "{info}"
    );
    assert!(info.to_string().contains(name), "{info}");
    assert_eq!(client.session_id(), None, "no session at 2026-07-28");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_2_server_is_spoken_to_at_2026_07_28_over_stdio() {
    let client = McpClient::connect_stdio(stdio(&servers::ts_server(root(), None)), strict())
        .await
        .expect("connect");
    assert_discovered(&client, "validate-ts-server");
    lists_and_calls_echo(&client, "text").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_2_server_is_spoken_to_at_2026_07_28_over_http() {
    let mut command = servers::ts_server(root(), Some(0));
    command.pop();
    let server = listen(&command, true);
    let client = McpClient::connect_http(HttpServer::new(server.url.clone()), strict())
        .await
        .expect("connect");
    assert_discovered(&client, "validate-ts-server");
    lists_and_calls_echo(&client, "text").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_2_server_is_spoken_to_at_2026_07_28_over_stdio() {
    let client = McpClient::connect_stdio(stdio(&servers::python_server(root(), None)), strict())
        .await
        .expect("connect");
    assert_discovered(&client, "validate-python-server");
    lists_and_calls_echo(&client, "text").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_2_server_is_spoken_to_at_2026_07_28_over_http() {
    let mut command = servers::python_server(root(), Some(0));
    command.pop();
    let server = listen(&command, true);
    let client = McpClient::connect_http(HttpServer::new(server.url.clone()), strict())
        .await
        .expect("connect");
    assert_discovered(&client, "validate-python-server");
    lists_and_calls_echo(&client, "text").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_is_fallen_back_to_at_2025_11_25_over_stdio() {
    let client = McpClient::connect_stdio(stdio(&everything()), strict())
        .await
        .expect("connect");
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert_eq!(
        client.server_info()["protocolVersion"],
        "2025-11-25",
        "the initialize result is kept"
    );
    lists_and_calls_echo(&client, "message").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_is_fallen_back_to_at_2025_11_25_over_http() {
    let entry = everything()[1].clone();
    let loopback = root()
        .join("tests/validate/loopback.js")
        .display()
        .to_string();
    let server = listen(
        &[
            "node".into(),
            "--require".into(),
            loopback,
            entry,
            "streamableHttp".into(),
        ],
        false,
    );
    let client = McpClient::connect_http(HttpServer::new(server.url.clone()), strict())
        .await
        .expect("connect");
    assert_eq!(client.protocol_version(), "2025-11-25");
    assert!(
        client.session_id().is_some(),
        "the 2025-11-25 session is held after the fallback"
    );
    lists_and_calls_echo(&client, "message").await;
}
