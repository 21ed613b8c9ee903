//! Writing to stdout and stderr: one `write_all` per line (or deliberate chunks), flushed.
//! Write errors (a reader gone) are ignored: the server goes on with its script.

use std::fs::File;
use std::io::Write;
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::time::Duration;

/// The pause between the chunks of a split write.
pub const SPLIT_PAUSE: Duration = Duration::from_millis(5);

/// The two output streams, with stdout's closed state.
#[derive(Debug, Default)]
pub struct Output {
    stdout_closed: bool,
}

fn fd(fd: i32) -> ManuallyDrop<File> {
    // SAFETY: fds 1 and 2 stay open for the life of the process (close_stdout replaces fd 1
    // with /dev/null rather than leaving it closed); ManuallyDrop never closes them.
    ManuallyDrop::new(unsafe { File::from_raw_fd(fd) })
}

impl Output {
    /// Output whose stdout was already closed (by a launcher) when `stdout_closed`.
    pub fn new(stdout_closed: bool) -> Self {
        Self { stdout_closed }
    }

    /// Whether stdout was closed.
    pub fn stdout_closed(&self) -> bool {
        self.stdout_closed
    }

    /// Writes bytes to stdout in one `write_all`, then flushes. Returns false when the write
    /// failed or stdout is closed.
    pub fn stdout(&mut self, bytes: &[u8]) -> bool {
        if self.stdout_closed {
            return false;
        }
        let mut out = fd(1);
        out.write_all(bytes).and_then(|()| out.flush()).is_ok()
    }

    /// Writes bytes to stdout in `parts` writes, flushed and [`SPLIT_PAUSE`] apart.
    pub fn stdout_split(&mut self, bytes: &[u8], parts: usize) -> bool {
        let size = bytes.len().div_ceil(parts.max(1)).max(1);
        for (i, chunk) in bytes.chunks(size).enumerate() {
            if i > 0 {
                std::thread::sleep(SPLIT_PAUSE);
            }
            if !self.stdout(chunk) {
                return false;
            }
        }
        true
    }

    /// Writes bytes to stderr in one `write_all` (blocking while the pipe is full).
    pub fn stderr(&mut self, bytes: &[u8]) -> bool {
        let mut err = fd(2);
        err.write_all(bytes).and_then(|()| err.flush()).is_ok()
    }

    /// Closes stdout: fd 1 becomes `/dev/null`, so the client's end sees EOF while the fd
    /// number stays taken (no later file can land on it).
    pub fn close_stdout(&mut self) {
        replace_with_dev_null(1, libc::O_WRONLY);
        self.stdout_closed = true;
    }

    /// Closes stderr the same way (fd 2 becomes `/dev/null`): the client sees its end; later
    /// writes to it go nowhere.
    pub fn close_stderr(&mut self) {
        replace_with_dev_null(2, libc::O_WRONLY);
    }
}

/// Closes stdin the same way: fd 0 becomes `/dev/null`, so the client's next write fails
/// with EPIPE.
pub fn close_stdin() {
    replace_with_dev_null(0, libc::O_RDONLY);
}

fn replace_with_dev_null(target: i32, flags: i32) {
    // SAFETY: plain libc calls on fds this process owns; the path is a valid C string.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), flags | libc::O_CLOEXEC);
        if null < 0 {
            libc::close(target);
            return;
        }
        // dup2 closes `target` and puts /dev/null in its place (without O_CLOEXEC).
        libc::dup2(null, target);
        libc::close(null);
    }
}
