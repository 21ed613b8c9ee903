//! Clients through the driver protocol, in one test binary: every matrix row reused and
//! started per scenario against its baseline (`rows`), and deliberately broken drivers that
//! fail exactly their rules' scenarios (`broken`).
//!
//! Each test runs whole folders of scenarios with timing bounds, several scenarios at once,
//! and mostly waits (on a 2-core machine two of them keep the cores about 60 % busy): three
//! run beside each other ([`lane`]), never more, so the bounds they check are not loaded by a
//! fourth (libtest runs four tests at once, `.cargo/config.toml`). A binary of their own keeps them off the
//! integration tests' memory and leak checks.

#[path = "../support/matrix_row.rs"]
mod matrix_row;
#[path = "../validate/servers.rs"]
mod servers;
#[path = "../integration/support.rs"]
#[allow(dead_code)]
mod support;

mod broken;
mod rows;

use std::sync::{Condvar, Mutex};

/// How many of these tests run at once, whatever `--test-threads` says.
const LANES: usize = 3;

/// A place among the [`LANES`]: held for the whole test, given back on drop (a panic too).
pub struct Lane;

/// Waits for a free lane.
pub fn lane() -> Lane {
    let mut busy = LANES_STATE.0.lock().unwrap_or_else(|e| e.into_inner());
    while *busy >= LANES {
        busy = LANES_STATE.1.wait(busy).unwrap_or_else(|e| e.into_inner());
    }
    *busy += 1;
    Lane
}

impl Drop for Lane {
    fn drop(&mut self) {
        let mut busy = LANES_STATE.0.lock().unwrap_or_else(|e| e.into_inner());
        *busy -= 1;
        LANES_STATE.1.notify_one();
    }
}

static LANES_STATE: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());
