//! The third-party servers the validator's tests run against, installed on first use.
//!
//! `cargo test --workspace --locked` on a fresh clone must pass by itself, so the first test
//! that needs a server runs `tests/validate/install-servers.sh` (npm and PyPI, pinned
//! versions, into `target/validate-servers/`). The script is idempotent and well under a
//! second once installed. One install at a time across processes (nextest runs every test in
//! a process of its own): an exclusive `flock` on `target/validate-servers.lock`.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long an install may take before the tests give up on it (npm and pip on a cold cache
/// take about a minute here).
const INSTALL_BOUND: Duration = Duration::from_secs(600);

/// The folder the servers are installed into, installing them first if needed. Panics with
/// the script's own output (and a hint about the registries) when the install fails.
pub fn installed(root: &Path) -> PathBuf {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    let outcome = INSTALLED.get_or_init(|| install(root));
    if let Err(why) = outcome {
        panic!("{why}");
    }
    root.join("target/validate-servers")
}

fn install(root: &Path) -> Result<(), String> {
    let target = root.join("target");
    std::fs::create_dir_all(&target)
        .map_err(|e| format!("cannot create {}: {e}", target.display()))?;
    let lock_path = target.join("validate-servers.lock");
    let lock = std::fs::File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    // SAFETY: flock on a descriptor this function owns; released when `lock` is dropped.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(format!(
            "cannot lock {}: {}",
            lock_path.display(),
            std::io::Error::last_os_error()
        ));
    }
    let script = root.join("tests/validate/install-servers.sh");
    let mut child = Command::new("bash")
        .arg(&script)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    // Both pipes are read on threads so a chatty installer never blocks on a full pipe.
    let out = read_on_a_thread(child.stdout.take().expect("piped stdout"));
    let err = read_on_a_thread(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + INSTALL_BOUND;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(format!("cannot wait for {}: {e}", script.display())),
        }
    };
    let output = format!(
        "{}{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    match status {
        Some(status) if status.success() => {
            if !output.trim().is_empty() {
                eprintln!("{}", output.trim_end());
            }
            Ok(())
        }
        Some(status) => Err(format!(
            "installing the validator's third-party servers failed ({} {status}); npm (registry.npmjs.org) and PyPI must be reachable, with node, npm and python3 -m venv on PATH. Its output:\n{}",
            script.display(),
            tail(&output)
        )),
        None => Err(format!(
            "installing the validator's third-party servers took over {} s ({}); is the npm registry or PyPI unreachable? Its output:\n{}",
            INSTALL_BOUND.as_secs(),
            script.display(),
            tail(&output)
        )),
    }
}

/// Reads `pipe` to its end on a thread of its own.
fn read_on_a_thread(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// The last lines of an installer's output (npm's errors come last).
fn tail(output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// The server written with the TypeScript SDK 2.x (`tests/validate/ts_server.cjs`), installed
/// first if needed: over stdio, or with `Some(port)` over Streamable HTTP on
/// `http://127.0.0.1:PORT/mcp`. The SDK speaks 2026-07-28 and, to `initialize`, 2025-11-25.
#[allow(dead_code)]
pub fn ts_server(root: &Path, port: Option<u16>) -> Vec<String> {
    let sdk = installed(root).join("ts/node_modules/@modelcontextprotocol/server/package.json");
    assert!(
        sdk.is_file(),
        "the TypeScript SDK is missing at {} after its install",
        sdk.display()
    );
    let mut command = vec![
        "node".to_string(),
        root.join("tests/validate/ts_server.cjs")
            .display()
            .to_string(),
    ];
    if let Some(port) = port {
        command.extend(["streamable-http".to_string(), port.to_string()]);
    }
    command
}

/// The server written with the Python SDK 2.x (`tests/validate/python_server.py`), installed
/// first if needed: over stdio, or with `Some(port)` over Streamable HTTP on
/// `http://127.0.0.1:PORT/mcp`. The SDK speaks 2026-07-28 and, to `initialize`, 2025-11-25.
#[allow(dead_code)]
pub fn python_server(root: &Path, port: Option<u16>) -> Vec<String> {
    let python = installed(root).join("venv/bin/python");
    assert!(
        python.is_file(),
        "the Python SDK venv is missing at {} after its install",
        python.display()
    );
    let mut command = vec![
        python.display().to_string(),
        root.join("tests/validate/python_server.py")
            .display()
            .to_string(),
    ];
    if let Some(port) = port {
        command.extend(["streamable-http".to_string(), port.to_string()]);
    }
    command
}

/// A port on 127.0.0.1 for a server that must be told its port before it binds it. A port
/// from `bind(0)`, released, can be taken before the server binds it: it is in the kernel's
/// ephemeral range, where every outgoing connection of the parallel tests gets its local port
/// (a validator test once met "connection refused" so). This one is below that range, which
/// only explicit binds use, and is spread by pid and a counter over 12,000 ports so parallel
/// tests and test processes do not pick the same one. Free at the time of the call.
#[allow(dead_code)]
pub fn server_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let range =
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap_or_default();
    let ephemeral_low = range
        .split_whitespace()
        .next()
        .and_then(|low| low.parse::<u32>().ok())
        .unwrap_or(32768);
    let span = 12_000;
    if ephemeral_low < 1024 + span {
        return std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
    }
    let start = std::process::id().wrapping_mul(7919);
    for _ in 0..span {
        // 101 and 12,000 are coprime: the counter visits every port of the span once.
        let step = NEXT.fetch_add(1, Ordering::Relaxed).wrapping_mul(101);
        let port = (ephemeral_low - span + start.wrapping_add(step) % span) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port on 127.0.0.1 below the ephemeral range ({ephemeral_low})");
}

/// Runs `git ARGS` in `repo` under a throwaway identity; panics unless it succeeds.
#[allow(dead_code)]
pub fn git(repo: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.email=validate@example.invalid",
            "-c",
            "user.name=validate",
        ])
        .args(args)
        .current_dir(repo)
        .stdout(Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// Makes `repo` a git repository with one commit, of `tracked.txt` ("one"): what
/// mcp-server-git is validated on.
#[allow(dead_code)]
pub fn git_repo_with_one_commit(repo: &Path) {
    git(repo, &["init", "-q"]);
    std::fs::write(repo.join("tracked.txt"), "one\n").expect("write tracked.txt");
    git(repo, &["add", "tracked.txt"]);
    git(repo, &["commit", "-q", "-m", "first"]);
}
