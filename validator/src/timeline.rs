//! Where a run's time goes: with `MCP_CONFORMANCE_TIMELINE=FILE` set, `validate` writes one
//! line per event to FILE — each server's spawn, first byte and answered handshake, each
//! check's start and end, each server's end, a start-up slot freed by a `server/discover`
//! left unanswered (`slot-freed`) — with the wall time since the run started and
//! the CPU this process (the validator alone, not its servers) had used by then, and at the
//! end the CPU of the validator and of its children (the servers it reaped). Unset, nothing
//! is recorded (one relaxed load per event).
//!
//! Lines: `<wall ms> <validator cpu ms> <event> <subject>`; the last two lines are
//! `cpu self <user+sys ms>` and `cpu children <user+sys ms>`.

use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// The environment variable naming the file to write.
pub const VARIABLE: &str = "MCP_CONFORMANCE_TIMELINE";

struct Timeline {
    started: Instant,
    lines: Mutex<Vec<String>>,
}

fn timeline() -> Option<&'static Timeline> {
    static TIMELINE: OnceLock<Option<Timeline>> = OnceLock::new();
    TIMELINE
        .get_or_init(|| {
            std::env::var_os(VARIABLE).map(|_| Timeline {
                started: Instant::now(),
                lines: Mutex::new(Vec::new()),
            })
        })
        .as_ref()
}

/// Whether events are recorded (to skip building their text when not).
pub fn enabled() -> bool {
    timeline().is_some()
}

/// Starts the clock (call first thing in a run); later events are timed from here.
pub fn start() {
    let _ = timeline();
}

/// User plus system CPU of `who` (`RUSAGE_SELF`, or `RUSAGE_CHILDREN`: the reaped children
/// and theirs), from `getrusage`.
pub fn cpu_time(who: libc::c_int) -> std::time::Duration {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    };
    let of = |t: libc::timeval| {
        std::time::Duration::from_secs(t.tv_sec as u64)
            + std::time::Duration::from_micros(t.tv_usec as u64)
    };
    of(usage.ru_utime) + of(usage.ru_stime)
}

/// [`cpu_time`] in milliseconds.
pub fn cpu_millis(who: libc::c_int) -> u128 {
    cpu_time(who).as_millis()
}

/// User plus system CPU of the live process `pid` (its threads included) in milliseconds,
/// from `/proc/PID/stat`; `None` when it cannot be read.
pub fn process_cpu_millis(pid: i32) -> Option<u128> {
    let stat = super::reaper::stat_fields(pid)?;
    let fields: Vec<&str> = stat.split_whitespace().collect();
    // utime and stime, fields 14 and 15 of the whole line.
    let ticks = fields.get(11)?.parse::<u128>().ok()? + fields.get(12)?.parse::<u128>().ok()?;
    // SAFETY: sysconf only reads a system setting.
    let per_second = u128::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) })
        .ok()
        .filter(|t| *t > 0)?;
    Some(ticks * 1000 / per_second)
}

/// Records `event` about `subject` (a session label, a check id).
pub fn event(event: &str, subject: &str) {
    let Some(timeline) = timeline() else { return };
    let line = format!(
        "{:>6} {:>5} {event} {subject}",
        timeline.started.elapsed().as_millis(),
        cpu_millis(libc::RUSAGE_SELF)
    );
    timeline
        .lines
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(line);
}

/// Writes the events and the CPU totals to the file named by [`VARIABLE`], if it is set; an
/// error is returned as a sentence.
pub fn write() -> Result<(), String> {
    let Some(timeline) = timeline() else {
        return Ok(());
    };
    let Some(path) = std::env::var_os(VARIABLE) else {
        return Ok(());
    };
    let mut text = timeline
        .lines
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .join("\n");
    let own = cpu_millis(libc::RUSAGE_SELF);
    text.push_str(&format!(
        "\n{:>6} {own:>5} end run\ncpu self {own}\ncpu children {}\n",
        timeline.started.elapsed().as_millis(),
        cpu_millis(libc::RUSAGE_CHILDREN)
    ));
    std::fs::write(&path, text).map_err(|e| {
        format!(
            "cannot write the timeline {}: {e}",
            std::path::Path::new(&path).display()
        )
    })
}
