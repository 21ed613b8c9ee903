//! `cargo bench -p mcp-refclient --bench client`: the reference client (strict) beside rmcp's client, against
//! the same stdio server, in one run, interleaved; plus a raw pipe floor.
//!
//! One binary, four roles, chosen by its first argument:
//! - none (or cargo's `--bench`): the conductor. It runs each (client, load) pair in a child
//!   process of its own, round after round, interleaved, and prints the medians;
//! - `serve`: the server, a small stdio MCP server with two tools: `echo` answers at once,
//!   `wait` after 5 ms (its calls run concurrently, as a real server's I/O-bound tools do);
//! - `serve-fast`: a server as fast as this machine allows, so that the client's own cost
//!   shows: blocking reads and writes on the pipes (no runtime, no task, no logging), the
//!   request's id and method read without building a tree, a canned `echo` answer, and the
//!   output flushed only when no further request is already buffered;
//! - `run CLIENT LOAD`: one measurement: spawns the server, connects, warms up, times the
//!   calls and prints one result line (calls/s, p50 and p99 in µs, peak RSS in KiB from
//!   `VmHWM`, and the client's CPU time per call in µs: user + system time of the measuring
//!   process over the timed calls, from `getrusage`; the server is another process, so its
//!   CPU is not counted; and the server's, from its `/proc/PID/stat`; and the heap
//!   allocations per call of the measuring process, every thread, counted by its global
//!   allocator). Each client in a process of its own, so its peak RSS is its own;
//! - loads: `seq` (one `echo` call after another), `par8` (8 `wait` calls in flight: the
//!   server's wait bounds both clients) and `par8echo` (8 `echo` calls in flight), against
//!   `serve`; `fastseq` and `fastpar8echo`, the same against `serve-fast`;
//! - the pipe floor (`pipe`, sequential loads only): the same server spoken to by a plain
//!   thread, blocking write of the request line and blocking read of the answer line, no
//!   runtime: the cheapest round trip through the pipes and the server; and `pipe-async`, the
//!   same exchange from a task on the clients' tokio runtime (no JSON work): what the runtime
//!   itself adds to a round trip.
//!
//! `cargo bench -p mcp-refclient --bench client -- LOAD…` runs only the loads named.
//!
//! Only local pipes: every server is a child process of the measuring one.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The system allocator, counting the allocations (and reallocations) made through it.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc`'s contract, passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc`'s contract, passed on as is.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc`'s contract, passed on as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc`'s contract, passed on as is.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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

const CLIENTS: [&str; 4] = ["pipe", "pipe-async", "reference", "rmcp"];
const LOADS: [&str; 5] = ["seq", "par8", "par8echo", "fastseq", "fastpar8echo"];

/// How a load calls: the server role, the tool, how many calls, how many in flight.
struct Load {
    server: &'static str,
    tool: &'static str,
    calls: usize,
    in_flight: usize,
}

fn load(name: &str) -> Load {
    let (server, rest) = match name.strip_prefix("fast") {
        Some(rest) => ("serve-fast", rest),
        None => ("serve", name),
    };
    let (tool, calls, in_flight) = match rest {
        "seq" => ("echo", SEQ_CALLS, 1),
        "par8echo" => ("echo", SEQ_CALLS, IN_FLIGHT),
        "par8" => ("wait", PAR_CALLS, IN_FLIGHT),
        other => panic!("no load {other:?}"),
    };
    Load {
        server,
        tool,
        calls,
        in_flight,
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["serve"] => serve(),
        ["serve-fast"] => serve_fast(),
        ["run", "pipe", name] => {
            let figures = pipe_floor(&load(name));
            print_figures(&figures);
        }
        ["run", client, name] => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .expect("runtime");
            let figures = runtime.block_on(run(client, &load(name)));
            print_figures(&figures);
        }
        [] => conduct(&LOADS),
        names if names.iter().all(|n| LOADS.contains(n)) => conduct(
            &LOADS
                .iter()
                .copied()
                .filter(|l| names.contains(l))
                .collect::<Vec<_>>(),
        ),
        other => {
            eprintln!(
                "usage: client [LOAD… | serve | serve-fast | run pipe|reference|rmcp LOAD] (LOAD: {}), not {other:?}",
                LOADS.join(", ")
            );
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
    /// The client's user + system CPU time per timed call, in µs.
    cpu_us: f64,
    /// The server's user + system CPU time per timed call, in µs (clock ticks of
    /// `/proc/PID/stat`, so ±10 ms over the run).
    server_cpu_us: f64,
    /// Heap allocations (and reallocations) of the measuring process per timed call.
    allocs: f64,
}

/// Runs every pair `ROUNDS` times, interleaved, and prints the medians and the ratios.
fn conduct(loads: &[&'static str]) {
    let mut results: Vec<((&str, &str), Vec<Figures>)> = Vec::new();
    let pairs = || {
        loads
            .iter()
            .flat_map(|l| CLIENTS.iter().map(move |c| (*c, *l)))
            .filter(|(c, l)| !c.starts_with("pipe") || l.ends_with("seq"))
    };
    for round in 0..ROUNDS {
        for (client, load) in pairs() {
            let figures = measure(client, load);
            eprintln!(
                "round {}: {client:>9} {load:<12} {:>9.0} calls/s {:>6.1} µs CPU/call",
                round + 1,
                figures.calls_per_s,
                figures.cpu_us
            );
            match results.iter_mut().find(|(key, _)| *key == (client, load)) {
                Some((_, all)) => all.push(figures),
                None => results.push(((client, load), vec![figures])),
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
            cpu_us: pick(|f| f.cpu_us),
            server_cpu_us: pick(|f| f.server_cpu_us),
            allocs: pick(|f| f.allocs),
        })
    };
    println!(
        "stdio round trips, {ROUNDS} interleaved rounds (medians; peak RSS the highest); seq: {SEQ_CALLS} `echo` calls one after another; par8: {PAR_CALLS} calls of a tool waiting {} ms, {IN_FLIGHT} in flight; par8echo: {SEQ_CALLS} `echo` calls, {IN_FLIGHT} in flight; fast…: the same against serve-fast; CPU: the client's user+sys per call",
        TOOL_WAIT.as_millis()
    );
    println!(
        "{:<26} {:>10} {:>10} {:>10} {:>14} {:>12} {:>14} {:>12}",
        "",
        "calls/s",
        "p50 µs",
        "p99 µs",
        "peak RSS KiB",
        "CPU µs/call",
        "server µs/call",
        "allocs/call"
    );
    for (client, load) in pairs() {
        if let Some(f) = median(client, load) {
            let name = format!("{client} {load}");
            println!(
                "{name:<26} {:>10.0} {:>10.1} {:>10.0} {:>14.0} {:>12.1} {:>14.1} {:>12.1}",
                f.calls_per_s, f.p50_us, f.p99_us, f.rss_kib, f.cpu_us, f.server_cpu_us, f.allocs
            );
        }
    }
    let ratio = |a: Option<Figures>, b: Option<Figures>, f: fn(&Figures) -> f64| match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}", f(&a) / f(&b)),
        _ => "n/a".into(),
    };
    let calls = |f: &Figures| f.calls_per_s;
    let rss = |f: &Figures| f.rss_kib;
    let cpu = |f: &Figures| f.cpu_us;
    for load in loads {
        let (reference, rmcp) = (median("reference", load), median("rmcp", load));
        println!(
            "{load:<12} reference / rmcp: calls/s {}, p50 {}, peak RSS {}, CPU per call {}, allocations per call {}{}",
            ratio(reference, rmcp, calls),
            ratio(reference, rmcp, |f| f.p50_us),
            ratio(reference, rmcp, rss),
            ratio(reference, rmcp, cpu),
            ratio(reference, rmcp, |f| f.allocs),
            match (median("pipe", load), median("pipe-async", load)) {
                (Some(pipe), Some(pipe_async)) => format!(
                    "; reference / pipe floor calls/s {}, by p50 {} (pipe-async / pipe floor {}, by p50 {})",
                    ratio(reference, Some(pipe), calls),
                    ratio(Some(pipe), reference, |f| f.p50_us),
                    ratio(Some(pipe_async), Some(pipe), calls),
                    ratio(Some(pipe), Some(pipe_async), |f| f.p50_us)
                ),
                _ => String::new(),
            }
        );
    }
    if loads.contains(&"par8") {
        let ceiling = IN_FLIGHT as f64 / TOOL_WAIT.as_secs_f64();
        println!(
            "par8 ceiling (no client can pass it): {IN_FLIGHT} / {} ms = {ceiling:.0} calls/s",
            TOOL_WAIT.as_millis()
        );
    }
    let _ = std::io::stdout().flush();
}

/// The result line of a run.
fn print_figures(f: &Figures) {
    println!(
        "{} {} {} {} {} {} {}",
        f.calls_per_s,
        f.p50_us,
        f.p99_us,
        peak_rss_kib(),
        f.cpu_us,
        f.server_cpu_us,
        f.allocs
    );
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
    let numbers: Vec<f64> = text
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    let [calls_per_s, p50_us, p99_us, rss_kib, cpu_us, server_cpu_us, allocs] = numbers[..] else {
        panic!("`run {client} {load}` printed {text:?}");
    };
    Figures {
        calls_per_s,
        p50_us,
        p99_us,
        rss_kib,
        cpu_us,
        server_cpu_us,
        allocs,
    }
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

/// This process's user + system CPU time so far (every thread), from `getrusage`.
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// A process's user + system CPU time so far, from `/proc/PID/stat` (zero if unreadable).
fn process_cpu_time(pid: Option<u32>) -> Duration {
    let Some(stat) = pid.and_then(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
    else {
        return Duration::ZERO;
    };
    // The fields after the command (which may hold spaces) in parentheses; utime and stime
    // are the 14th and 15th of the whole line.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|i| fields.get(*i)?.parse::<u64>().ok())
        .sum();
    // SAFETY: sysconf reads a constant.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_micros(ticks * 1_000_000 / per_second)
}

/// The server command: this binary in the load's server role.
fn server_command(load: &Load) -> (String, Vec<String>) {
    let exe = std::env::current_exe().expect("the bench's own path");
    (exe.display().to_string(), vec![load.server.into()])
}

/// Times `calls` calls made by `call`, `in_flight` at a time; the figures (RSS left out).
async fn timed<F, Fut>(calls: usize, in_flight: usize, server: Option<u32>, call: F) -> Figures
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let server_before = process_cpu_time(server);
    let cpu_before = cpu_time();
    let allocs_before = ALLOCATIONS.load(Ordering::Relaxed);
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
    let cpu = cpu_time().saturating_sub(cpu_before);
    let allocs = ALLOCATIONS.load(Ordering::Relaxed) - allocs_before;
    summarize(
        latencies,
        elapsed,
        cpu,
        process_cpu_time(server).saturating_sub(server_before),
        allocs,
    )
}

/// The figures of `latencies` over `elapsed`, with `cpu` spent by the client and `server_cpu` by
/// the server, and `allocs` made by the client (the latencies' own vector included: one).
fn summarize(
    mut latencies: Vec<Duration>,
    elapsed: Duration,
    cpu: Duration,
    server_cpu: Duration,
    allocs: u64,
) -> Figures {
    latencies.sort();
    let at = |q: f64| {
        latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)].as_secs_f64()
            * 1e6
    };
    let calls = latencies.len() as f64;
    Figures {
        calls_per_s: calls / elapsed.as_secs_f64(),
        p50_us: at(0.50),
        p99_us: at(0.99),
        rss_kib: 0.0,
        cpu_us: cpu.as_secs_f64() * 1e6 / calls,
        server_cpu_us: server_cpu.as_secs_f64() * 1e6 / calls,
        allocs: allocs as f64 / calls,
    }
}

async fn run(client: &str, load: &Load) -> Figures {
    match client {
        "reference" => reference(load).await,
        "rmcp" => rmcp_client(load).await,
        "pipe-async" => pipe_async(load).await,
        other => panic!("no client {other:?}"),
    }
}

/// The reference client, strict profile.
async fn reference(load: &Load) -> Figures {
    use mcp_refclient::{ClientConfig, McpClient, Profile, StdioServer};
    let (command, args) = server_command(load);
    let server = StdioServer {
        command,
        args,
        ..Default::default()
    };
    let client = Arc::new(
        McpClient::connect_stdio(server, ClientConfig::new(Profile::Strict))
            .await
            .expect("connect"),
    );
    let tool = load.tool;
    let call = {
        let client = client.clone();
        move || {
            let client = client.clone();
            async move {
                let result = client
                    .call_tool(tool, json!({}), None)
                    .await
                    .expect("a call");
                assert!(!result.is_error);
            }
        }
    };
    let pid = client.server_pid();
    timed(WARM_UP, load.in_flight, pid, call.clone()).await;
    let figures = timed(load.calls, load.in_flight, pid, call).await;
    client.close().await.expect("close");
    figures
}

/// rmcp's client over `TokioChildProcess`.
async fn rmcp_client(load: &Load) -> Figures {
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;
    let (command, args) = server_command(load);
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args);
    let transport = TokioChildProcess::new(cmd).expect("spawn");
    let pid = transport.id();
    let service = ().serve(transport).await.expect("connect");
    let peer = service.peer().clone();
    let tool = load.tool;
    let call = move || {
        let peer = peer.clone();
        async move {
            let result = peer
                .call_tool(CallToolRequestParams::new(tool))
                .await
                .expect("a call");
            assert!(!result.is_error.unwrap_or(false));
        }
    };
    timed(WARM_UP, load.in_flight, pid, call.clone()).await;
    let figures = timed(load.calls, load.in_flight, pid, call).await;
    service.cancel().await.expect("close");
    figures
}

/// The floor: the same server, spoken to directly by this thread, blocking, one line out
/// and one line back.
fn pipe_floor(load: &Load) -> Figures {
    use std::io::{BufRead as _, BufReader};
    assert_eq!(load.in_flight, 1, "the pipe floor is sequential");
    let (command, args) = server_command(load);
    let mut child = Command::new(command)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}"#;
    stdin
        .write_all(format!("{init}\n").as_bytes())
        .expect("write");
    stdout.read_line(&mut line).expect("read");
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .expect("write");
    let mut id = 0u64;
    let mut call = |line: &mut String| {
        id += 1;
        let request = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{}\",\"arguments\":{{}}}}}}\n",
            load.tool
        );
        stdin.write_all(request.as_bytes()).expect("write");
        line.clear();
        stdout.read_line(line).expect("read");
        assert!(line.contains("\"result\""), "{line}");
    };
    for _ in 0..WARM_UP {
        call(&mut line);
    }
    let server_before = process_cpu_time(Some(child.id()));
    let cpu_before = cpu_time();
    let allocs_before = ALLOCATIONS.load(Ordering::Relaxed);
    let started = Instant::now();
    let mut latencies = Vec::with_capacity(load.calls);
    for _ in 0..load.calls {
        let sent = Instant::now();
        call(&mut line);
        latencies.push(sent.elapsed());
    }
    let elapsed = started.elapsed();
    let cpu = cpu_time().saturating_sub(cpu_before);
    let server_cpu = process_cpu_time(Some(child.id())).saturating_sub(server_before);
    let allocs = ALLOCATIONS.load(Ordering::Relaxed) - allocs_before;
    drop(stdin);
    let _ = child.wait();
    summarize(latencies, elapsed, cpu, server_cpu, allocs)
}

/// The same exchange as the floor from a task on the tokio runtime the clients run on.
async fn pipe_async(load: &Load) -> Figures {
    let (command, args) = server_command(load);
    let mut child = tokio::process::Command::new(command)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let stdin = child.stdin.take().expect("stdin");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let pipe = Arc::new(tokio::sync::Mutex::new((
        stdin,
        stdout,
        String::new(),
        0u64,
    )));
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}"#;
    {
        let mut guard = pipe.lock().await;
        let (stdin, stdout, line, _) = &mut *guard;
        stdin
            .write_all(format!("{init}\n").as_bytes())
            .await
            .expect("write");
        stdout.read_line(line).await.expect("read");
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .expect("write");
    }
    let tool = load.tool;
    let call = {
        let pipe = pipe.clone();
        move || {
            let pipe = pipe.clone();
            async move {
                let mut guard = pipe.lock().await;
                let (stdin, stdout, line, id) = &mut *guard;
                *id += 1;
                let request = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{tool}\",\"arguments\":{{}}}}}}\n"
                );
                stdin.write_all(request.as_bytes()).await.expect("write");
                line.clear();
                stdout.read_line(line).await.expect("read");
                assert!(line.contains("\"result\""), "{line}");
            }
        }
    };
    timed(WARM_UP, 1, pid, call.clone()).await;
    let figures = timed(load.calls, 1, pid, call).await;
    drop(pipe);
    let _ = child.wait().await;
    figures
}

/// The fast server: blocking reads and writes, the request's `id` and `method` read without
/// building a tree, `tools/call` answered with a canned `echo` result; answers are flushed
/// once no further request is already buffered (one write for a burst of requests).
fn serve_fast() {
    use std::io::{BufRead as _, BufReader, BufWriter};
    use std::os::fd::AsFd as _;

    /// What the server reads of a request; the rest of the line is skipped unparsed.
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        id: Option<Value>,
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }

    let owned = |fd: std::os::fd::BorrowedFd<'_>| {
        std::fs::File::from(fd.try_clone_to_owned().expect("a standard stream"))
    };
    let mut input = BufReader::with_capacity(64 * 1024, owned(std::io::stdin().as_fd()));
    let mut output = BufWriter::with_capacity(64 * 1024, owned(std::io::stdout().as_fd()));
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Ok(head) = serde_json::from_slice::<Head>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (head.id, head.method) else {
            continue;
        };
        let written = match &*method {
            "tools/call" => writeln!(
                output,
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"ok"}}],"isError":false}}}}"#,
                id
            ),
            "initialize" => {
                let version = serde_json::from_slice::<Value>(&line)
                    .ok()
                    .and_then(|m| m.pointer("/params/protocolVersion").cloned())
                    .unwrap_or(json!("2025-11-25"));
                writeln!(
                    output,
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":{version},"capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"bench-server-fast","version":"1"}}}}}}"#,
                    id
                )
            }
            "tools/list" => writeln!(
                output,
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[{{"name":"echo","inputSchema":{{"type":"object"}}}}]}}}}"#,
                id
            ),
            _ => writeln!(output, r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#, id),
        };
        if written.is_err() || (input.buffer().is_empty() && output.flush().is_err()) {
            return;
        }
    }
}

/// The server: newline-delimited JSON-RPC on stdin/stdout, one writer task, `wait` calls
/// answered by tasks of their own.
fn serve() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
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
