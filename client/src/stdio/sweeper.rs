//! The deadlines of the calls in flight, kept by one task instead of a timer per call.
//!
//! A call registers its deadline (and the time of its first look at the child, [`EXIT_POLL`]
//! after it was sent) in its pending entry; the sweeper sleeps until the earliest of them,
//! fails the calls past their deadline, and looks at the child once for the calls still
//! waiting past their look. A call answered sooner costs no timer at all: the sweeper is
//! woken only when a call's first event comes before the one it already sleeps until.

use std::sync::Arc;
use std::time::Instant;

use super::{lock, Conn, Delivery, Shared, EXIT_POLL};

impl Conn {
    /// The earliest deadline or look among the calls in flight.
    fn next_event(&self) -> Option<Instant> {
        self.pending.iter().filter_map(|p| p.next_event()).min()
    }
}

impl Shared {
    /// The call `id`, written at `sent`, times out at `deadline` (`None`: never) and looks at
    /// the child [`EXIT_POLL`] after `sent`; the sweeper is woken only if that comes before
    /// the event it sleeps until.
    pub(super) fn arm(&self, id: &serde_json::Value, sent: Instant, deadline: Option<Instant>) {
        let look_at = sent + EXIT_POLL;
        let first = deadline.map_or(look_at, |d| d.min(look_at));
        let mut conn = lock(&self.conn);
        // Already answered (or failed): nothing to arm.
        let Some(pending) = conn.pending.iter_mut().rev().find(|p| p.id == *id) else {
            return;
        };
        pending.look_at = Some(look_at);
        pending.deadline = deadline;
        if conn.sweep_at.is_some_and(|at| at <= first) {
            return;
        }
        conn.sweep_at = Some(first);
        drop(conn);
        self.sweep.notify_one();
    }

    /// Fails the calls past their deadline and returns whether one still waits past its look
    /// (the child is then looked at once); the next event is where the sweeper sleeps until.
    fn sweep(&self, now: Instant) -> bool {
        let mut conn = lock(&self.conn);
        let mut look = false;
        let mut at = 0;
        while at < conn.pending.len() {
            let pending = &mut conn.pending[at];
            if pending.deadline.is_some_and(|d| d <= now) {
                let pending = conn.pending.remove(at);
                let _ = pending.tx.send(Delivery::TimedOut);
                continue;
            }
            if pending.look_at.is_some_and(|l| l <= now) {
                look = true;
                pending.look_at = Some(now + EXIT_POLL);
            }
            at += 1;
        }
        if conn.pending.is_empty() {
            self.set_awaiting(false);
        }
        conn.sweep_at = conn.next_event();
        look
    }
}

/// Sleeps until the next deadline or look of a call in flight, and sweeps; runs until the
/// transport is closed or dropped (then aborted).
pub(crate) async fn run(shared: Arc<Shared>) {
    loop {
        let next = lock(&shared.conn).sweep_at;
        let notified = shared.sweep.notified();
        match next {
            None => notified.await,
            Some(at) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(at.into()) => {}
                    // An earlier event was armed: sleep until it instead.
                    _ = notified => continue,
                }
            }
        }
        if shared.sweep(Instant::now()) {
            shared.poll_exit();
        }
    }
}
