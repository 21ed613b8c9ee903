//! Descriptor hygiene while scenarios run side by side in one process.
//!
//! A process forked by one thread holds a copy of every descriptor of the whole process until
//! its exec, close-on-exec or not. A scenario that needs a descriptor gone at a known moment
//! (a pipe's read end, so that a write to it fails; a listener, so that a connection is
//! refused) runs [`exclusive`]ly; one that starts processes (a stdio server, a driver, a host)
//! runs [`spawning`]. The lock prefers the scenarios that start processes: an exclusive one
//! waits for a moment when none runs, and in the meantime holds no one up (a waiting writer
//! that blocked every new reader would stall the whole run behind the longest scenario
//! under way). Both are taken before a scenario's first step, so no step's time includes them.

use std::cell::Cell;
use std::sync::{Condvar, Mutex, MutexGuard};

static STATE: Mutex<State> = Mutex::new(State {
    starting: 0,
    exclusive: false,
});
static CHANGED: Condvar = Condvar::new();

struct State {
    /// Scenarios that start processes, running.
    starting: usize,
    /// An exclusive scenario runs.
    exclusive: bool,
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
    while state.exclusive {
        state = CHANGED.wait(state).unwrap_or_else(|e| e.into_inner());
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
    while state.exclusive || state.starting > 0 {
        state = CHANGED.wait(state).unwrap_or_else(|e| e.into_inner());
    }
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

    #[test]
    fn an_exclusive_run_waits_for_starting_ones_and_holds_them_off_while_it_runs() {
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
