//! The command line's process hygiene: signals watched (every descendant ended on SIGINT,
//! SIGTERM, SIGHUP) and the descendants that escaped their group ended once a run is over.

use std::time::Duration;

use mcp_conformance::exit_code;

use crate::fail;

/// Set by the signal thread before it ends the servers: the scenarios then failing is no
/// result to report, and the signal thread gives the exit code.
pub(crate) static INTERRUPTED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// No server outlives `run`: it becomes the reaper of orphaned descendants, and on SIGINT,
/// SIGTERM or SIGHUP kills every descendant and its process group (the scripted servers run
/// in groups of their own, so a Ctrl-C at the terminal reaches only `run`), then exits with
/// [`exit_code::SIGNALLED`] plus the signal's number. The signals are registered before any
/// server starts.
pub(crate) fn watch_signals() -> std::io::Result<()> {
    use mcp_conformance::validate::reaper;
    use tokio::signal::unix::{signal, SignalKind};
    reaper::become_subreaper();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut interrupt, mut terminate, mut hangup) = {
        let _entered = runtime.enter();
        (
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
            signal(SignalKind::hangup())?,
        )
    };
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            runtime.block_on(async move {
                let (name, number) = tokio::select! {
                    _ = interrupt.recv() => ("SIGINT", libc::SIGINT),
                    _ = terminate.recv() => ("SIGTERM", libc::SIGTERM),
                    _ = hangup.recv() => ("SIGHUP", libc::SIGHUP),
                };
                INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
                let ended = reaper::kill_descendants();
                fail(&format!("interrupted by {name}: {ended} process(es) ended"));
                std::process::exit(i32::from(exit_code::SIGNALLED) + number);
            })
        })?;
    Ok(())
}

/// The longest the end of a run waits for the descendants that escaped their process group
/// to be killed and reaped.
const ESCAPED_BOUND: Duration = Duration::from_secs(2);

/// Once every scenario has ended (each driver's and server's group killed), what a driver or
/// a server started outside its group (`setsid`, a daemon's double fork) has been reparented
/// to this process, the subreaper (see [`watch_signals`]): it is killed and reaped here, so
/// nothing outlives `run` or `matrix`.
pub(crate) fn end_escaped_descendants() {
    mcp_conformance::validate::reaper::sweep(ESCAPED_BOUND);
}
