//! The launch counter: a file `launches` in the state folder, one number.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

/// The counter file's name inside the state folder.
pub const LAUNCHES_FILE: &str = "launches";

/// Counts one more launch and returns it (1 for the first). The file is locked while it is
/// updated, so launches at the same moment each get their own number.
pub fn next_launch(state_dir: &Path) -> std::io::Result<u32> {
    std::fs::create_dir_all(state_dir)?;
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(state_dir.join(LAUNCHES_FILE))?;
    // SAFETY: flock on an fd we own; the lock is released when the file closes.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let launch = text.trim().parse::<u32>().unwrap_or(0).saturating_add(1);
    file.set_len(0)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(format!("{launch}\n").as_bytes())?;
    Ok(launch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launches_count_up_from_one() {
        let dir = std::env::temp_dir().join(format!("launches-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(next_launch(&dir).unwrap(), 1);
        assert_eq!(next_launch(&dir).unwrap(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
