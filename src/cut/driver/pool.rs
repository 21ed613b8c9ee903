//! Reusable drivers: a driver that declares `reusable` is started once and serves scenario
//! after scenario. Between two scenarios the runner sends `reset`; the driver drops every
//! connection it holds and answers once clean, and the runner checks that none of the last
//! scenario's processes is alive before the driver goes back to the pool. A driver that
//! broke the protocol, exited, did not answer `reset` in time, answered it with an error,
//! or left a process running is stopped and replaced by a fresh one, which the scenario's
//! result notes. A scenario whose facts are about the driver process itself (a `drop`
//! whose end it looks at, `interrupt_host`) gets a process of its own, stopped after it.

use super::process::DriverProcess;
use super::protocol::DriverStep;
use super::DriverClient;
use crate::cut::{needs, Capability, Described};
use crate::probe::procs;
use crate::scenario::Scenario;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a driver may take to answer `reset`: a client's close may wait for its server
/// to exit (the Python SDK gives a stdio server 2 s before it terminates it).
pub const RESET_BOUND: Duration = Duration::from_secs(5);

/// How long the last scenario's processes may take to be gone once `reset` was answered.
pub const LEFT_BEHIND_BOUND: Duration = Duration::from_secs(2);

/// The driver processes of one driver command, shared by the threads that run its scenarios.
pub struct DriverPool {
    argv: Vec<String>,
    described: Described,
    hello_within: Duration,
    dir: Option<PathBuf>,
    /// False: one process per scenario (the driver does not declare `reusable`, or reuse
    /// was turned off).
    reuse: bool,
    idle: Mutex<Vec<Arc<DriverProcess>>>,
    counts: Counts,
}

/// How many driver processes a pool started, and why.
#[derive(Debug, Default)]
struct Counts {
    starts: AtomicUsize,
    reused: AtomicUsize,
    fresh: AtomicUsize,
    replaced: AtomicUsize,
}

/// What a pool did over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PoolCounts {
    /// Driver processes started.
    pub starts: usize,
    /// Scenarios served by a process that had served another.
    pub reused: usize,
    /// Scenarios given a process of their own (their facts are about the process).
    pub fresh: usize,
    /// Processes stopped after a scenario because they could not serve another.
    pub replaced: usize,
}

impl DriverPool {
    /// A pool for the driver `argv`, which described itself as `described` and says hello
    /// within `hello_within`; reused across scenarios when it declares `reusable` and
    /// `reuse` is asked for.
    pub fn new(
        argv: Vec<String>,
        described: Described,
        hello_within: Duration,
        reuse: bool,
    ) -> Arc<Self> {
        Self::in_dir(argv, described, hello_within, reuse, None)
    }

    /// [`DriverPool::new`], the driver started in `dir` (a matrix row's folder).
    pub fn in_dir(
        argv: Vec<String>,
        described: Described,
        hello_within: Duration,
        reuse: bool,
        dir: Option<PathBuf>,
    ) -> Arc<Self> {
        let reuse = reuse && described.capabilities.contains(&Capability::Reusable);
        Arc::new(DriverPool {
            argv,
            described,
            hello_within,
            dir,
            reuse,
            idle: Mutex::new(Vec::new()),
            counts: Counts::default(),
        })
    }

    /// Whether the pool's processes serve several scenarios each.
    pub fn reuses(&self) -> bool {
        self.reuse
    }

    /// A client for `scenario`: a pooled process when it may share one.
    pub fn client(self: &Arc<Self>, scenario: &Scenario) -> DriverClient {
        let mut client =
            DriverClient::new(self.argv.clone(), self.described.clone(), self.hello_within);
        client.dir = self.dir.clone();
        if self.reuse {
            let needed = needs::of(scenario).capabilities;
            let about_the_process = needed
                .iter()
                .any(|c| matches!(c, Capability::Drop | Capability::InterruptHost));
            client.pool = Some(self.clone());
            client.fresh = about_the_process;
        }
        client
    }

    /// What the pool did so far.
    pub fn counts(&self) -> PoolCounts {
        PoolCounts {
            starts: self.counts.starts.load(Ordering::SeqCst),
            reused: self.counts.reused.load(Ordering::SeqCst),
            fresh: self.counts.fresh.load(Ordering::SeqCst),
            replaced: self.counts.replaced.load(Ordering::SeqCst),
        }
    }

    /// An idle process for a scenario that may share one.
    pub(super) fn take_idle(&self) -> Option<Arc<DriverProcess>> {
        loop {
            let process = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop()?;
            // One that went away while idle serves no one (its scenario was not harmed: no
            // note); the next idle one, or a fresh start, serves instead.
            if process.healthy().is_err() {
                process.stop();
                continue;
            }
            self.counts.reused.fetch_add(1, Ordering::SeqCst);
            return Some(process);
        }
    }

    /// A process was started for a scenario (`fresh`: one of its own).
    pub(super) fn started(&self, fresh: bool) {
        self.counts.starts.fetch_add(1, Ordering::SeqCst);
        if fresh {
            self.counts.fresh.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// After a scenario: resets `process` and keeps it for the next one, or stops it and
    /// says why it could not serve another.
    pub(super) fn give_back(
        &self,
        process: Arc<DriverProcess>,
        started: &[u32],
        failed: bool,
    ) -> Option<String> {
        let clean = match failed {
            true => Err("it failed the scenario".to_string()),
            false => clean_after(&process, started),
        };
        match clean {
            Ok(()) => {
                process.log_here(false);
                process.forget_pending();
                self.idle
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(process);
                None
            }
            Err(why) => {
                process.log_here(false);
                process.stop();
                self.counts.replaced.fetch_add(1, Ordering::SeqCst);
                Some(format!(
                    "the driver process was replaced by a fresh one: {why}"
                ))
            }
        }
    }
}

/// Sends `reset` and checks that nothing of the last scenario (`started`: the processes
/// its servers reported) is alive after it.
fn clean_after(process: &DriverProcess, started: &[u32]) -> Result<(), String> {
    process.healthy()?;
    let (_, answer) = process.request(DriverStep::Reset);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start a runtime to wait for `reset`: {e}"))?;
    match runtime.block_on(async { tokio::time::timeout(RESET_BOUND, answer).await }) {
        Err(_) => {
            return Err(format!(
                "it did not answer `reset` within {} ms",
                RESET_BOUND.as_millis()
            ))
        }
        Ok(Err(_)) => return Err("it went away during `reset`".into()),
        Ok(Ok(Err(text))) => {
            return Err(format!(
                "it answered `reset` with an error: {}",
                crate::text::cut(&text, 300)
            ))
        }
        Ok(Ok(Ok(_))) => {}
    }
    let alive = procs::wait_all_gone(started, LEFT_BEHIND_BOUND);
    if !alive.is_empty() {
        let pids: Vec<String> = alive.iter().map(u32::to_string).collect();
        return Err(format!(
            "process {} of the last scenario still ran {} ms after `reset`",
            pids.join(", "),
            LEFT_BEHIND_BOUND.as_millis()
        ));
    }
    process.healthy()
}

impl Drop for DriverPool {
    fn drop(&mut self) {
        for process in self
            .idle
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            process.stop();
        }
    }
}
