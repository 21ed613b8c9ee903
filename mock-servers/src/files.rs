//! Reading a local input file (a script, a scenario, a config, a baseline) safely: only a
//! regular file, opened without blocking (a FIFO named `*.toml` is refused at once instead
//! of hanging), and no bigger than a cap (`/dev/zero` or a huge file cannot fill memory).

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest input file read: scripts, scenarios, configs and baselines are small text.
pub const MAX_INPUT_BYTES: u64 = 4 << 20;

/// Why a local file was not read. Lowercase, one line; the caller names the file.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Opening or reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A FIFO, a device, a socket or a folder.
    #[error("is not a regular file (it is {0})")]
    NotRegular(&'static str),
    /// Over the cap.
    #[error("is larger than {cap} bytes")]
    TooLarge {
        /// The cap.
        cap: u64,
    },
    /// Not UTF-8.
    #[error("is not UTF-8 text")]
    NotUtf8,
}

/// Reads a regular file of at most `cap` bytes.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    // O_NONBLOCK: opening a FIFO without a writer returns at once (then it is refused below).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(FileError::NotRegular(if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_dir() {
            "a folder"
        } else {
            "not a file"
        }));
    }
    if meta.len() > cap {
        return Err(FileError::TooLarge { cap });
    }
    let mut bytes = Vec::new();
    // The file may grow after the check: never read past the cap.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(FileError::TooLarge { cap });
    }
    Ok(bytes)
}

/// Reads a regular UTF-8 text file of at most [`MAX_INPUT_BYTES`].
pub fn read_text(path: &Path) -> Result<String, FileError> {
    String::from_utf8(read_capped(path, MAX_INPUT_BYTES)?).map_err(|_| FileError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_folders_and_big_files_are_refused() {
        assert!(matches!(
            read_text(Path::new("/dev/zero")),
            Err(FileError::NotRegular("a device"))
        ));
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.toml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_text(&fifo),
            Err(FileError::NotRegular("a FIFO"))
        ));
        assert!(matches!(
            read_text(dir.path()),
            Err(FileError::NotRegular("a folder"))
        ));
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; 11]).unwrap();
        assert!(matches!(
            read_capped(&big, 10),
            Err(FileError::TooLarge { cap: 10 })
        ));
        assert_eq!(read_capped(&big, 11).unwrap().len(), 11);
        std::fs::write(&big, [0xff, 0xfe]).unwrap();
        assert!(matches!(read_text(&big), Err(FileError::NotUtf8)));
    }
}
