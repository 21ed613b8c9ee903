//! Descriptor hygiene while scenarios run side by side in one process.
//!
//! A process forked by one thread holds a copy of every descriptor of the whole process until
//! its exec, close-on-exec or not. A scenario that needs a descriptor gone at a known moment
//! (a pipe's read end, so that a write to it fails; a listener, so that a connection is
//! refused) runs [`exclusive`]ly; one whose client starts processes from this process (a
//! stdio server, a host) runs [`spawning`], and so does each start of a driver process, for
//! the moment of its fork only (a driver's own servers are forked by the driver). The lock prefers the scenarios that start processes: an exclusive one
//! waits for a moment when none runs, and in the meantime holds no one up (a waiting writer
//! that blocked every new reader would stall the whole run behind the longest scenario
//! under way) — for [`HOLD_OFF_AFTER`]: past it, new scenarios that start processes wait
//! until the exclusive one has run, so that its wait is bounded by the longest scenario
//! under way (when every scenario starts processes, as a driver's do, it would otherwise
//! wait for the whole run). Both are taken before a scenario's first step, so no step's
//! time includes them.

use std::cell::Cell;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

static STATE: Mutex<State> = Mutex::new(State {
    starting: 0,
    exclusive: false,
    waiting: 0,
    waiting_since: None,
});
static CHANGED: Condvar = Condvar::new();

/// How long an exclusive scenario waits before new scenarios that start processes are held
/// off for it.
pub const HOLD_OFF_AFTER: Duration = Duration::from_secs(2);

/// How often a held-off scenario looks again (the hold-off begins on a clock, not an event).
const RECHECK: Duration = Duration::from_millis(50);

struct State {
    /// Scenarios that start processes, running.
    starting: usize,
    /// An exclusive scenario runs.
    exclusive: bool,
    /// Exclusive scenarios waiting.
    waiting: usize,
    /// Since when the longest-waiting of them waits.
    waiting_since: Option<Instant>,
}

impl State {
    /// An exclusive scenario has waited long enough: hold new starting ones off.
    fn exclusive_overdue(&self) -> bool {
        self.waiting_since
            .is_some_and(|since| since.elapsed() >= HOLD_OFF_AFTER)
    }
}

thread_local! {
    static HELD_HERE: Cell<bool> = const { Cell::new(false) };
}

/// Held until dropped; on the thread that took it.
#[must_use = "the lock is held until the guard is dropped"]
pub struct SpawnGuard {
    held: Held,
    // Dropped on the thread that took it (the thread-local marks it).
    _not_send: std::marker::PhantomData<*const ()>,
}

#[derive(Debug, PartialEq)]
enum Held {
    /// This thread held the lock already.
    Nothing,
    Spawning,
    Exclusive,
}

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

fn guard(held: Held) -> SpawnGuard {
    if held != Held::Nothing {
        HELD_HERE.set(true);
    }
    SpawnGuard {
        held,
        _not_send: std::marker::PhantomData,
    }
}

/// For a scenario that starts processes: waits only while an exclusive one runs.
pub fn spawning() -> SpawnGuard {
    if HELD_HERE.get() {
        return guard(Held::Nothing);
    }
    let mut state = state();
    while state.exclusive || state.exclusive_overdue() {
        state = CHANGED
            .wait_timeout(state, RECHECK)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    state.starting += 1;
    guard(Held::Spawning)
}

/// For a scenario that needs no process started meanwhile: waits until none that starts
/// processes, and no other exclusive one, runs.
pub fn exclusive() -> SpawnGuard {
    if HELD_HERE.get() {
        return guard(Held::Nothing);
    }
    let mut state = state();
    state.waiting += 1;
    state.waiting_since.get_or_insert_with(Instant::now);
    while state.exclusive || state.starting > 0 {
        state = CHANGED.wait(state).unwrap_or_else(|e| e.into_inner());
    }
    state.waiting -= 1;
    // The next exclusive one in line waits afresh.
    state.waiting_since = (state.waiting > 0).then(Instant::now);
    state.exclusive = true;
    guard(Held::Exclusive)
}

impl Drop for SpawnGuard {
    fn drop(&mut self) {
        let mut state = state();
        match self.held {
            Held::Nothing => return,
            Held::Spawning => state.starting -= 1,
            Held::Exclusive => state.exclusive = false,
        }
        drop(state);
        HELD_HERE.set(false);
        CHANGED.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// The lock is one per process: one test at a time.
    fn one_test() -> MutexGuard<'static, ()> {
        static ONE: Mutex<()> = Mutex::new(());
        ONE.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[test]
    fn an_exclusive_run_waiting_past_the_hold_off_holds_new_starting_runs_off() {
        let _one = one_test();
        let starting = spawning();
        let (tx, rx) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let exclusive_run = std::thread::spawn(move || {
            let _exclusive = exclusive();
            tx.send(()).unwrap();
            released.recv_timeout(Duration::from_secs(5)).unwrap();
        });
        // The hold-off begins on a clock: let it pass.
        std::thread::sleep(HOLD_OFF_AFTER + RECHECK);
        let (tx2, rx2) = mpsc::channel();
        let late = std::thread::spawn(move || {
            let _starting = spawning();
            tx2.send(()).unwrap();
        });
        assert!(
            rx2.recv_timeout(Duration::from_millis(200)).is_err(),
            "a new starting run waits for the overdue exclusive one"
        );
        drop(starting);
        rx.recv_timeout(Duration::from_secs(5))
            .expect("the exclusive run goes once the running one ends");
        assert!(
            rx2.recv_timeout(Duration::from_millis(100)).is_err(),
            "not beside it"
        );
        release.send(()).unwrap();
        exclusive_run.join().unwrap();
        rx2.recv_timeout(Duration::from_secs(5))
            .expect("and the held-off run after it");
        late.join().unwrap();
    }

    #[test]
    fn an_exclusive_run_waits_for_starting_ones_and_holds_them_off_while_it_runs() {
        let _one = one_test();
        let starting = spawning();
        assert_eq!(
            spawning().held,
            Held::Nothing,
            "a thread does not wait on itself"
        );
        let (tx, rx) = mpsc::channel();
        let other = std::thread::spawn(move || {
            let exclusive = exclusive();
            tx.send("exclusive").unwrap();
            let (tx2, rx2) = mpsc::channel();
            let third = std::thread::spawn(move || {
                let _starting = spawning();
                tx2.send(()).unwrap();
            });
            assert!(
                rx2.recv_timeout(Duration::from_millis(100)).is_err(),
                "a starting run waits for it"
            );
            drop(exclusive);
            rx2.recv_timeout(Duration::from_secs(5))
                .expect("and goes on after it");
            third.join().unwrap();
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(100)).is_err(),
            "the exclusive run waits"
        );
        // Another starting run is not held up by the exclusive one waiting.
        std::thread::spawn(|| drop(spawning())).join().unwrap();
        drop(starting);
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(5)).unwrap(),
            "exclusive"
        );
        other.join().unwrap();
        assert!(!HELD_HERE.get());
    }
}
