//! No server outlives the validator. Each stdio server runs in a process group of its own
//! (so a Ctrl-C at the terminal reaches the validator only) and dies with the thread that
//! started it (`PR_SET_PDEATHSIG`, which holds even when the validator is killed with
//! SIGKILL); the groups alive are tracked here and killed when a session ends or when the
//! validator gets SIGINT, SIGTERM or SIGHUP. A descendant that left its group (`setsid`,
//! `setpgid`) is found because the validator is a child subreaper (`PR_SET_CHILD_SUBREAPER`):
//! once its parent dies it becomes the validator's child, killed when any session ends (and
//! reaped by [`sweep`] after each target).
//!
//! Not possible: a descendant that escaped and whose ancestors are all still alive is not a
//! child yet (its server's group is killed first, which makes it one); nothing survives
//! being reparented if the validator itself gets SIGKILL except what already escaped the
//! server's group and the death signal (a daemon that double-forked away from its server).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Set (under the [`GROUPS`] lock) once [`kill_all`] ran: no server starts after that, so a
/// launch racing a signal cannot start a server the clean-up has already passed by.
static STOPPING: AtomicBool = AtomicBool::new(false);

fn groups() -> std::sync::MutexGuard<'static, Vec<i32>> {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes this process the reaper of its orphaned descendants (Linux); false where that
/// cannot be done.
pub fn become_subreaper() -> bool {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
}

/// Starts a server and notes its process group (its leader's pid) as alive, under the lock
/// [`end_escaped`] takes, so a server just started is never taken for an escaped descendant.
/// Refuses once the validator is stopping on a signal ([`kill_all`]).
pub fn spawn_tracked(
    command: &mut tokio::process::Command,
) -> std::io::Result<tokio::process::Child> {
    let mut groups = groups();
    if STOPPING.load(Ordering::SeqCst) {
        return Err(std::io::Error::other(
            "the validator is stopping on a signal",
        ));
    }
    let child = command.spawn()?;
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        groups.push(pid);
    }
    Ok(child)
}

/// Kills a server's process group and forgets it, then kills the descendants that escaped
/// their groups and are this process's children by now.
pub fn kill_group(group: i32) {
    // SAFETY: killpg only sends a signal; the group is one a session created.
    unsafe {
        libc::killpg(group, libc::SIGKILL);
    }
    groups().retain(|g| *g != group);
    end_escaped();
}

/// Kills (without reaping: a session may still want its server's exit status) every child
/// of this process that is not a tracked server: descendants reparented here.
fn end_escaped() {
    let groups = groups();
    for pid in children().into_iter().filter(|pid| !groups.contains(pid)) {
        kill_with_group(pid);
    }
}

/// Kills every tracked group (on a signal to the validator) and lets no server start after
/// it; returns how many there were.
pub fn kill_all() -> usize {
    let all = {
        let mut groups = groups();
        STOPPING.store(true, Ordering::SeqCst);
        std::mem::take(&mut *groups)
    };
    for group in &all {
        // SAFETY: as in kill_group.
        unsafe {
            libc::killpg(*group, libc::SIGKILL);
        }
    }
    all.len()
}

/// The longest [`kill_descendants`] goes on finding what its kills left behind.
pub const DESCENDANTS_BOUND: Duration = Duration::from_secs(2);

/// Kills every descendant of this process and its process group (other than ours): what
/// `run` does on a signal, when the servers were started by a client it does not track.
/// Returns how many there were. See [`end_until_none`] for why one look is not enough.
pub fn kill_descendants() -> usize {
    end_until_none(DESCENDANTS_BOUND, live_descendants, false)
}

/// The live (not zombie) descendants of this process, from one look at `/proc`.
fn live_descendants() -> Vec<i32> {
    let parents = parents();
    let me = i32::try_from(std::process::id()).unwrap_or_default();
    let mut found = vec![me];
    let mut index = 0;
    while index < found.len() {
        let parent = found[index];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(pid, _)| *pid),
        );
        index += 1;
    }
    found
        .into_iter()
        .skip(1)
        .filter(|pid| !gone(*pid))
        .collect()
}

/// Whether `pid` is gone: no such process, or a zombie (its children were handed on when it
/// died).
fn gone(pid: i32) -> bool {
    stat_fields(pid).is_none_or(|fields| fields.trim_start().starts_with('Z'))
}

/// Kills (with their groups) what `find` finds, again and again, until a look at `/proc`
/// taken once everything killed before it is gone finds nothing, or `bound` has passed;
/// with `reap`, the killed children of this process are reaped. Returns how many were
/// killed.
///
/// One look is not enough: it is not atomic (a process can fork, `setsid` or be handed to
/// this subreaper while `/proc` is read), and a process that was starting when it was taken
/// (a driver forking a child that leaves its group) has children it did not show. Those
/// children are handed to this process when their parent dies, so a look taken after every
/// killed process is gone sees them.
fn end_until_none(bound: Duration, find: fn() -> Vec<i32>, reap: bool) -> usize {
    let deadline = Instant::now() + bound;
    let mut killed: Vec<i32> = Vec::new();
    loop {
        if reap {
            for pid in &killed {
                let mut status = 0;
                // SAFETY: waitpid with WNOHANG only reaps our own child (an error otherwise).
                unsafe { libc::waitpid(*pid, &mut status, libc::WNOHANG) };
            }
        }
        if killed.iter().all(|pid| gone(*pid)) {
            let found = find();
            if found.is_empty() {
                return killed.len();
            }
            for pid in found {
                kill_with_group(pid);
                if !killed.contains(&pid) {
                    killed.push(pid);
                }
            }
        }
        if Instant::now() >= deadline {
            return killed.len();
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// SIGKILL to `pid` and to its process group, unless that group is ours.
fn kill_with_group(pid: i32) {
    // SAFETY: kill and killpg only send signals, to a process this module found as a child or
    // descendant of this process and to its group (never our own group).
    unsafe {
        let group = libc::getpgid(pid);
        if group > 0 && group != libc::getpgid(0) {
            libc::killpg(group, libc::SIGKILL);
        }
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Every process's pid and parent pid, from `/proc`.
fn parents() -> Vec<(i32, i32)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Some(stat) = stat_fields(pid) else {
            continue;
        };
        if let Some(parent) = stat.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            found.push((pid, parent));
        }
    }
    found
}

/// The fields of `/proc/PID/stat` after the command name (`state ppid pgrp …`, see proc(5));
/// `None` when the process is gone. `pid (comm) state …`: comm may hold spaces and
/// parentheses, so the fields are those after the last `)`.
pub fn stat_fields(pid: i32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')').map(|(_, rest)| rest.to_string())
}

/// The pids whose parent is this process.
fn children() -> Vec<i32> {
    let me = i32::try_from(std::process::id()).unwrap_or_default();
    parents()
        .into_iter()
        .filter(|(_, parent)| *parent == me)
        .map(|(pid, _)| pid)
        .collect()
}

/// Kills and reaps every child of this process: the escaped descendants reparented to it
/// (call it when no session of its own is running), and what they leave when they die.
/// Bounded by `bound`; returns how many were ended.
pub fn sweep(bound: Duration) -> usize {
    let ended = end_until_none(bound, live_children, true);
    // Zombies found dead already (a server killed with its group) are reaped too.
    for pid in children() {
        let mut status = 0;
        // SAFETY: as in end_until_none.
        unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    }
    ended
}

/// The live (not zombie) children of this process.
fn live_children() -> Vec<i32> {
    children().into_iter().filter(|pid| !gone(*pid)).collect()
}
