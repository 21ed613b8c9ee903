//! The `interrupt_host` step: the client in a host subprocess of its own session, a SIGINT
//! to the host's process group, and what became of the server.

use super::StepError;
use crate::probe::{moved_past, procs, until_wire_log};
use mcp_mock_servers::wire_log::{self, Record};
use serde_json::{json, Value};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// How long the host may take to connect, and then to end after the signal.
pub(crate) const HOST_BOUND: Duration = Duration::from_secs(5);

/// What the step needs to know.
pub(crate) struct HostPlan<'a> {
    /// The `mcp-conformance` binary, whose `host-client` command is the host.
    pub program: &'a Path,
    /// The profile name.
    pub profile: &'a str,
    /// The newest revision the client offers.
    pub revision: String,
    /// Whether the server gets a process group of its own.
    pub own_process_group: bool,
    /// The server command and arguments.
    pub server: Vec<String>,
    /// The server's wire log.
    pub log_path: &'a Path,
}

/// Runs the step.
pub(crate) async fn interrupt_host(plan: HostPlan<'_>) -> Result<Value, StepError> {
    let mut command = tokio::process::Command::new(plan.program);
    command.args([
        "host-client",
        "--profile",
        plan.profile,
        "--revision",
        &plan.revision,
    ]);
    if plan.own_process_group {
        command.arg("--own-process-group");
    }
    command
        .arg("--")
        .args(&plan.server)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    // SAFETY: setsid and signal are async-signal-safe and touch no memory of ours.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // A terminal host takes Ctrl+C by default; a shell running us in the background
            // may have left SIGINT ignored, and that would be inherited.
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut host = command
        .spawn()
        .map_err(|e| harness(format!("cannot start the host: {e}")))?;
    let host_pid = host
        .id()
        .ok_or_else(|| harness("the host has no pid".into()))?;
    let stdout = host
        .stdout
        .take()
        .ok_or_else(|| harness("the host has no stdout".into()))?;
    let mut line = String::new();
    let read = tokio::time::timeout(
        HOST_BOUND,
        tokio::io::BufReader::new(stdout).read_line(&mut line),
    )
    .await;
    let server_pid: u32 = match (read, line.strip_prefix("ready ")) {
        (Ok(Ok(_)), Some(pid)) => pid
            .trim()
            .parse()
            .map_err(|_| harness(format!("the host said {line:?}")))?,
        _ => {
            return Err(StepError {
                kind: Some("transport".into()),
                text: format!("the host did not connect: {line:?}"),
            })
        }
    };
    let waited = async {
        match tokio::time::timeout(HOST_BOUND, host.wait()).await {
            Err(_) => Err("the host outlived SIGINT".to_string()),
            Ok(status) => status.map_err(|e| format!("cannot wait for the host: {e}")),
        }
    };
    interrupt_group(host_pid, &[server_pid], plan.log_path, waited).await
}

/// After a host connected: lets the server read `initialized`, sends SIGINT to the host's
/// process group `group` (a Ctrl+C in its terminal), awaits the host's end (`host_ended`,
/// bounded by the caller) and reports what became of it and of the servers `servers`
/// (read from the wire log when empty). The reference client's host subprocess and a
/// driver process (which is its client's host) share it.
pub(crate) async fn interrupt_group(
    group: u32,
    servers: &[u32],
    log_path: &Path,
    host_ended: impl std::future::Future<Output = Result<std::process::ExitStatus, String>>,
) -> Result<Value, StepError> {
    // As after any connect, let the server read `initialized` first, so the transcript
    // does not depend on how fast the signal lands.
    let initialized = |wire: &[Record]| moved_past(wire, "notifications/initialized", 1);
    until_wire_log(log_path, HOST_BOUND, initialized).await;
    let servers = match servers {
        [] => {
            let wire = wire_log::read_wire_log(log_path).unwrap_or_default();
            procs::reported(&wire)
                .into_iter()
                .filter(|(_, role)| *role == "server")
                .map(|(pid, _)| pid)
                .collect()
        }
        given => given.to_vec(),
    };
    // The host leads its own group: this is what a Ctrl+C in its terminal sends.
    // SAFETY: killpg with a group the runner created; no memory is touched.
    unsafe {
        libc::killpg(group as libc::pid_t, libc::SIGINT);
    }
    let status = host_ended.await.map_err(harness)?;
    let host_end = match status.signal() {
        Some(libc::SIGINT) => "ended by SIGINT".to_string(),
        Some(signal) => format!("ended by signal {signal}"),
        None => format!("exited with {status}"),
    };
    // With the host gone the server's input is closed: a server that did not get the
    // signal now ends its script and exits on its own.
    procs::wait_all_gone(&servers, HOST_BOUND);
    let wire = wire_log::read_wire_log(log_path).unwrap_or_default();
    let exited_on_its_own = wire.iter().any(|r| matches!(r, Record::Exiting { .. }));
    let server_end = if exited_on_its_own {
        "exited on its own when its input closed"
    } else {
        "ended by a signal"
    };
    Ok(json!({ "host": host_end, "server": server_end }))
}

fn harness(text: String) -> StepError {
    StepError {
        kind: Some("harness".into()),
        text,
    }
}
