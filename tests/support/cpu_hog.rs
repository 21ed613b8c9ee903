//! A busy process on every core, for verdicts that must not change with the machine's load.

use std::process::{Child, Command, Stdio};

/// Busy processes on every core, each ended by `timeout` after `bound_s` seconds at the
/// latest (should the holder never drop it) and killed when dropped.
pub struct CpuHog(Vec<Child>);

impl CpuHog {
    pub fn start(bound_s: u32) -> CpuHog {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let bound = bound_s.to_string();
        CpuHog(
            (0..cores)
                .map(|_| {
                    Command::new("timeout")
                        .args([bound.as_str(), "sh", "-c", "while :; do :; done"])
                        .stdin(Stdio::null())
                        .spawn()
                        .expect("start a busy loop")
                })
                .collect(),
        )
    }
}

impl CpuHog {
    /// How many busy processes run.
    pub fn cores(&self) -> usize {
        self.0.len()
    }
}

impl Drop for CpuHog {
    fn drop(&mut self) {
        for child in &mut self.0 {
            // `timeout` passes SIGTERM on to its shell.
            // SAFETY: the pid is our own child's, not yet reaped.
            unsafe { libc::kill(i32::try_from(child.id()).unwrap(), libc::SIGTERM) };
            let _ = child.wait();
        }
    }
}
