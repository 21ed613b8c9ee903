//! `cargo bench --bench client`: the reference client (strict) beside rmcp's client, against
//! the same stdio server, in one run, interleaved; plus a raw pipe floor.
//!
//! One binary, four roles, chosen by its first argument:
//! - none (or cargo's `--bench`): the conductor. It runs each (client, load) pair in a child
//!   process of its own, round after round, interleaved, and prints the medians;
//! - `serve`: the server, a small stdio MCP server with two tools: `echo` answers at once,
//!   `wait` after 5 ms (its calls run concurrently, as a real server's I/O-bound tools do);
//! - `run CLIENT LOAD`: one measurement: spawns the server, connects, warms up, times the
//!   calls and prints one result line (calls/s, p50 and p99 in µs, peak RSS in KiB from
//!   `VmHWM`). Each client in a process of its own, so its peak RSS is its own;
//! - loads: `seq` (one `echo` call after another), `par8` (8 `wait` calls in flight: the
//!   server's wait bounds both clients) and `par8echo` (8 `echo` calls in flight: the client
//!   bounds itself).
//!
//! Only local pipes: every server is a child process of the measuring one.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Rounds of every (client, load) pair; the medians over rounds are printed.
const ROUNDS: usize = 7;
/// Calls timed per sequential run, after the warm-up.
const SEQ_CALLS: usize = 20_000;
/// Calls timed per run with 8 in flight (each waits 5 ms on the server).
const PAR_CALLS: usize = 1600;
/// Calls in flight in the `par8` load.
const IN_FLIGHT: usize = 8;
/// Calls made before timing starts.
const WARM_UP: usize = 200;
/// How long the `wait` tool waits.
const TOOL_WAIT: Duration = Duration::from_millis(5);

const CLIENTS: [&str; 3] = ["pipe", "reference", "rmcp"];
const LOADS: [&str; 3] = ["seq", "par8", "par8echo"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["serve"] => serve(),
        ["run", client, load] => {
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
            let figures = runtime.block_on(run(client, load));
            println!("{} {} {} {}", figures.calls_per_s, figures.p50_us, figures.p99_us, peak_rss_kib());
        }
        [] => conduct(),
        other => {
            eprintln!("usage: client [serve | run pipe|reference|rmcp seq|par8|par8echo], not {other:?}");
            std::process::exit(2);
        }
    }
}

/// What one run measured.
#[derive(Clone, Copy, Default)]
struct Figures {
    calls_per_s: f64,
    p50_us: f64,
    p99_us: f64,
    rss_kib: f64,
}

/// Runs every pair `ROUNDS` times, interleaved, and prints the medians and the ratios.
fn conduct() {
    let mut results: Vec<((&str, &str), Vec<Figures>)> = Vec::new();
    for round in 0..ROUNDS {
        for load in LOADS {
            for client in CLIENTS {
                if client == "pipe" && load != "seq" {
                    continue;
                }
                let figures = measure(client, load);
                eprintln!("round {}: {client:>9} {load:<4} {:>9.0} calls/s", round + 1, figures.calls_per_s);
                match results.iter_mut().find(|(key, _)| *key == (client, load)) {
                    Some((_, all)) => all.push(figures),
                    None => results.push(((client, load), vec![figures])),
                }
            }
        }
    }
    let median = |client: &str, load: &str| -> Option<Figures> {
        let (_, all) = results.iter().find(|(key, _)| *key == (client, load))?;
        let pick = |f: fn(&Figures) -> f64| {
            let mut values: Vec<f64> = all.iter().map(f).collect();
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        };
        Some(Figures {
            calls_per_s: pick(|f| f.calls_per_s),
            p50_us: pick(|f| f.p50_us),
            p99_us: pick(|f| f.p99_us),
            rss_kib: all.iter().map(|f| f.rss_kib).fold(0.0, f64::max),
        })
    };
    println!(
        "stdio round trips, {ROUNDS} interleaved rounds (medians; peak RSS the highest); seq: {SEQ_CALLS} `echo` calls one after another; par8: {PAR_CALLS} calls of a tool waiting {} ms, {IN_FLIGHT} in flight; par8echo: {SEQ_CALLS} `echo` calls, {IN_FLIGHT} in flight",
        TOOL_WAIT.as_millis()
    );
    println!("{:<24} {:>10} {:>10} {:>10} {:>14}", "", "calls/s", "p50 µs", "p99 µs", "peak RSS KiB");
    for load in LOADS {
        for client in CLIENTS {
            if let Some(f) = median(client, load) {
                let name = format!("{client} {load}");
                println!("{name:<24} {:>10.0} {:>10.0} {:>10.0} {:>14.0}", f.calls_per_s, f.p50_us, f.p99_us, f.rss_kib);
            }
        }
    }
    let ratio = |a: Option<Figures>, b: Option<Figures>, f: fn(&Figures) -> f64| match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}", f(&a) / f(&b)),
        _ => "n/a".into(),
    };
    let calls = |f: &Figures| f.calls_per_s;
    let rss = |f: &Figures| f.rss_kib;
    println!("reference / rmcp calls/s, seq:  {}", ratio(median("reference", "seq"), median("rmcp", "seq"), calls));
    println!("reference / rmcp calls/s, par8: {}", ratio(median("reference", "par8"), median("rmcp", "par8"), calls));
    println!("reference / rmcp calls/s, par8echo: {}", ratio(median("reference", "par8echo"), median("rmcp", "par8echo"), calls));
    println!("reference / pipe floor calls/s, seq: {}", ratio(median("reference", "seq"), median("pipe", "seq"), calls));
    println!("reference / rmcp peak RSS, seq:  {}", ratio(median("reference", "seq"), median("rmcp", "seq"), rss));
    println!("reference / rmcp peak RSS, par8: {}", ratio(median("reference", "par8"), median("rmcp", "par8"), rss));
    let ceiling = IN_FLIGHT as f64 / TOOL_WAIT.as_secs_f64();
    println!("par8 ceiling (no client can pass it): {IN_FLIGHT} / {} ms = {ceiling:.0} calls/s", TOOL_WAIT.as_millis());
    let _ = std::io::stdout().flush();
}

/// One run in a child process of its own.
fn measure(client: &str, load: &str) -> Figures {
    let exe = std::env::current_exe().expect("the bench's own path");
    let output = Command::new(exe)
        .args(["run", client, load])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("the measuring child starts");
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        panic!("`run {client} {load}` failed ({}): {text}", output.status);
    }
    let numbers: Vec<f64> = text.split_whitespace().filter_map(|n| n.parse().ok()).collect();
    let [calls_per_s, p50_us, p99_us, rss_kib] = numbers[..] else {
        panic!("`run {client} {load}` printed {text:?}");
    };
    Figures { calls_per_s, p50_us, p99_us, rss_kib }
}

/// This process's peak resident set (`VmHWM`), in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The server command: this binary in its `serve` role.
fn server_command() -> (String, Vec<String>) {
    let exe = std::env::current_exe().expect("the bench's own path");
    (exe.display().to_string(), vec!["serve".into()])
}

/// Times `calls` calls made by `call`, `in_flight` at a time; the figures (RSS left out).
async fn timed<F, Fut>(calls: usize, in_flight: usize, call: F) -> Figures
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let started = Instant::now();
    let per_worker = calls / in_flight;
    let workers: Vec<_> = (0..in_flight)
        .map(|_| {
            let call = call.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(per_worker);
                for _ in 0..per_worker {
                    let sent = Instant::now();
                    call().await;
                    latencies.push(sent.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(calls);
    for worker in workers {
        latencies.extend(worker.await.expect("a worker"));
    }
    let elapsed = started.elapsed();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)].as_secs_f64() * 1e6;
    Figures { calls_per_s: latencies.len() as f64 / elapsed.as_secs_f64(), p50_us: at(0.50), p99_us: at(0.99), rss_kib: 0.0 }
}

async fn run(client: &str, load: &str) -> Figures {
    let (tool, calls, in_flight) = match load {
        "seq" => ("echo", SEQ_CALLS, 1),
        "par8echo" => ("echo", SEQ_CALLS, IN_FLIGHT),
        _ => ("wait", PAR_CALLS, IN_FLIGHT),
    };
    match client {
        "pipe" => pipe_floor(calls).await,
        "reference" => reference(tool, calls, in_flight).await,
        _ => rmcp_client(tool, calls, in_flight).await,
    }
}

/// The reference client, strict profile.
async fn reference(tool: &'static str, calls: usize, in_flight: usize) -> Figures {
    use mcp_refclient::{ClientConfig, McpClient, Profile, StdioServer};
    let (command, args) = server_command();
    let server = StdioServer { command, args, ..Default::default() };
    let client = Arc::new(McpClient::connect_stdio(server, ClientConfig::new(Profile::Strict)).await.expect("connect"));
    let call = {
        let client = client.clone();
        move || {
            let client = client.clone();
            async move {
                let result = client.call_tool(tool, json!({}), None).await.expect("a call");
                assert!(!result.is_error);
            }
        }
    };
    timed(WARM_UP, in_flight, call.clone()).await;
    let figures = timed(calls, in_flight, call).await;
    client.close().await.expect("close");
    figures
}

/// rmcp's client over `TokioChildProcess`.
async fn rmcp_client(tool: &'static str, calls: usize, in_flight: usize) -> Figures {
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;
    let (command, args) = server_command();
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args);
    let transport = TokioChildProcess::new(cmd).expect("spawn");
    let service = ().serve(transport).await.expect("connect");
    let peer = service.peer().clone();
    let call = move || {
        let peer = peer.clone();
        async move {
            let result = peer.call_tool(CallToolRequestParams::new(tool)).await.expect("a call");
            assert!(!result.is_error.unwrap_or(false));
        }
    };
    timed(WARM_UP, in_flight, call.clone()).await;
    let figures = timed(calls, in_flight, call).await;
    service.cancel().await.expect("close");
    figures
}

/// The floor: the same server, spoken to directly, one line out and one line back.
async fn pipe_floor(calls: usize) -> Figures {
    let (command, args) = server_command();
    let mut child = tokio::process::Command::new(command)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let pipe = Arc::new(tokio::sync::Mutex::new((stdin, stdout, String::new(), 0u64)));
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}"#;
    {
        let mut guard = pipe.lock().await;
        let (stdin, stdout, line, _) = &mut *guard;
        stdin.write_all(format!("{init}\n").as_bytes()).await.expect("write");
        stdout.read_line(line).await.expect("read");
        stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.expect("write");
    }
    let call = {
        let pipe = pipe.clone();
        move || {
            let pipe = pipe.clone();
            async move {
                let mut guard = pipe.lock().await;
                let (stdin, stdout, line, id) = &mut *guard;
                *id += 1;
                let request = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{}}}}}}\n"
                );
                stdin.write_all(request.as_bytes()).await.expect("write");
                line.clear();
                stdout.read_line(line).await.expect("read");
                assert!(line.contains("\"result\""), "{line}");
            }
        }
    };
    timed(WARM_UP, 1, call.clone()).await;
    let figures = timed(calls, 1, call).await;
    drop(pipe);
    let _ = child.wait().await;
    figures
}

/// The server: newline-delimited JSON-RPC on stdin/stdout, one writer task, `wait` calls
/// answered by tasks of their own.
fn serve() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(async move {
            let mut stdout = tokio::io::stdout();
            while let Some(line) = rx.recv().await {
                if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                    return;
                }
            }
        });
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str)) else {
                continue;
            };
            let result = match method {
                "initialize" => json!({
                    "protocolVersion": message.pointer("/params/protocolVersion").cloned().unwrap_or(json!("2025-11-25")),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "bench-server", "version": "1"},
                }),
                "tools/list" => json!({"tools": [
                    {"name": "echo", "inputSchema": {"type": "object"}},
                    {"name": "wait", "inputSchema": {"type": "object"}},
                ]}),
                "tools/call" => json!({"content": [{"type": "text", "text": "ok"}], "isError": false}),
                _ => json!({}),
            };
            let mut reply = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).expect("json");
            reply.push(b'\n');
            if message.pointer("/params/name").and_then(Value::as_str) == Some("wait") {
                let tx = tx.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(TOOL_WAIT).await;
                    let _ = tx.send(reply);
                });
            } else if tx.send(reply).is_err() {
                break;
            }
        }
        drop(tx);
        let _ = writer.await;
    });
}
