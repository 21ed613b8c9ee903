//! Killing a server's process group (Unix), so what the command started goes with it.

/// Sends SIGKILL to the process group `pgid` (SIGTERM when `politely`, a test switch: a
/// descendant that ignores it lives on). A group that is already gone is not an error.
#[cfg(unix)]
pub(crate) fn kill_group(pgid: u32, politely: bool) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid <= 1 {
        return;
    }
    // SAFETY: killpg only sends a signal; a stale or unknown group yields ESRCH, which is
    // ignored. pgid > 1 rules out "our own group" (0) and init.
    let signal = if politely {
        libc::SIGTERM
    } else {
        libc::SIGKILL
    };
    let rc = unsafe { libc::killpg(pgid, signal) };
    if rc != 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ESRCH) {
            tracing::debug!(target: "mcp_refclient", pgid, "killpg failed: {err}");
        }
    }
}

/// Process groups are a Unix notion: elsewhere there is nothing to kill.
#[cfg(not(unix))]
pub(crate) fn kill_group(_pgid: u32, _politely: bool) {}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn killing_a_group_that_does_not_exist_is_harmless() {
        // Far above the default pid_max, so no such group exists.
        kill_group(4_000_000, false);
        kill_group(0, false);
        kill_group(1, false);
    }
}
