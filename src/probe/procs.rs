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

/// Whether `pid` is alive. A process that can never run again counts as gone: a zombie
/// (state `Z`: killed, not yet reaped because its parent already exited), one exiting
/// (`PF_EXITING`), and one with a SIGKILL pending (sent, not yet acted on). So a kill a client
/// has just sent reads as done at once, however loaded the machine: "some alive" is never a
/// process that was killed a moment ago and has not yet been scheduled to die.
pub fn is_alive(pid: u32) -> bool {
    task(pid).is_some_and(|(state, flags)| {
        !matches!(state.as_str(), "Z" | "X") && flags & PF_EXITING == 0
    })
}

/// Whether `pid` has finished exiting: gone, a zombie, or killed (a SIGKILL pending). Unlike
/// [`is_alive`], a process still exiting (`PF_EXITING`) has not: its open files, the ends of
/// its pipes among them, close only as its exit completes, so a client writing to it in that
/// moment still finds a reader. What a client sees of a server that has exited between two
/// of its steps is then the same however the kernel's teardown and the next step interleave.
pub fn has_exited(pid: u32) -> bool {
    task(pid).is_none_or(|(state, _)| matches!(state.as_str(), "Z" | "X"))
}

/// The state and the flags of `pid` as `/proc` shows them; none for a process that is gone
/// or has a SIGKILL pending (it never runs again).
fn task(pid: u32) -> Option<(String, u64)> {
    // The pending signals first: once the SIGKILL is taken, the process is exiting, which its
    // flags (read after) show.
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    if kill_pending(&status) {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the command name, which is in parentheses and may hold spaces; the
    // flags are the seventh field after it.
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let flags = fields
        .get(6)
        .and_then(|f| f.parse::<u64>().ok())
        .unwrap_or(0);
    Some((fields.first()?.to_string(), flags))
}

/// The kernel's task flag of a process that is exiting (`include/linux/sched.h`).
const PF_EXITING: u64 = 0x4;

/// Whether `/proc/PID/status` shows a SIGKILL pending, for the thread or the process.
fn kill_pending(status: &str) -> bool {
    let sigkill = 1u64 << (libc::SIGKILL - 1);
    status.lines().any(|line| {
        let mask = line
            .strip_prefix("SigPnd:")
            .or_else(|| line.strip_prefix("ShdPnd:"));
        mask.and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|m| m & sigkill != 0)
    })
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

    #[test]
    fn a_running_process_has_not_exited_and_a_zombie_or_a_reaped_one_has() {
        assert!(!has_exited(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Unreaped, it is a zombie once it has exited: done, its pipes closed.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !has_exited(pid) {
            assert!(Instant::now() < deadline, "`true` still running after 10 s");
            std::thread::yield_now();
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        assert!(
            stat.rsplit_once(')')
                .unwrap()
                .1
                .trim_start()
                .starts_with('Z'),
            "{stat}"
        );
        child.wait().unwrap();
        assert!(has_exited(pid));
    }

    #[test]
    fn a_pending_sigkill_reads_as_gone() {
        assert!(!kill_pending(
            "Name:\tx\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
        ));
        assert!(kill_pending(
            "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000100\n"
        ));
        assert!(kill_pending(
            "SigPnd:\t0000000000000100\nShdPnd:\t0000000000000000\n"
        ));
        // SIGTERM (15) pending is not a kill.
        assert!(!kill_pending(
            "SigPnd:\t0000000000004000\nShdPnd:\t0000000000000000\n"
        ));
    }
}
