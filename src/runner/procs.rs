//! Process facts: which of the processes a scripted server reported are still alive.

use mcp_mock_servers::wire_log::Record;
use std::time::{Duration, Instant};

/// The processes a server's wire log reports, in order: each launch (`server`) and what it
/// spawned (`descendant`).
pub fn reported(wire: &[Record]) -> Vec<(u32, &'static str)> {
    let mut seen: Vec<(u32, &'static str)> = Vec::new();
    for record in wire {
        let (pid, role) = match record {
            Record::Started { pid, .. } => (*pid, "server"),
            Record::Spawned { pid, .. } => (*pid, "descendant"),
            _ => continue,
        };
        if let Some(entry) = seen.iter_mut().find(|(p, _)| *p == pid) {
            // A backgrounded copy is both spawned and started: it is a server.
            if role == "server" {
                entry.1 = role;
            }
        } else {
            seen.push((pid, role));
        }
    }
    seen
}

/// Whether `pid` is alive. A zombie (state `Z`: killed, not yet reaped because its parent
/// already exited) counts as gone.
pub fn is_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses and may hold spaces.
    let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z") | Some("X") | None)
}

/// Waits until none of `pids` is alive, bounded by `within`; returns those still alive.
pub fn wait_all_gone(pids: &[u32], within: Duration) -> Vec<u32> {
    let deadline = Instant::now() + within;
    loop {
        let alive: Vec<u32> = pids.iter().copied().filter(|&pid| is_alive(pid)).collect();
        if alive.is_empty() || Instant::now() >= deadline {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kills what is left (the runner's own clean-up, after the facts are recorded).
pub fn kill_all(pids: &[u32]) {
    for &pid in pids {
        if is_alive(pid) {
            if let Ok(pid) = i32::try_from(pid) {
                // SAFETY: kill(2) with a pid we were told about; no memory is touched.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        assert!(is_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!is_alive(pid));
    }
}
