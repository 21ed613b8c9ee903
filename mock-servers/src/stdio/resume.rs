//! What a launcher hands to its background copy besides the step index: the requests it
//! received, its flags, and stdin bytes it had read but not consumed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The player's state that outlives a step.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct PlayState {
    /// The latest request an `expect` step matched (what a `reply` answers by default).
    pub latest_request: Option<Value>,
    /// Messages matched by `expect` steps that gave a `name`.
    pub named: BTreeMap<String, Value>,
    /// Whether `ignore_stdin_close` was played.
    pub ignore_stdin_close: bool,
    /// Whether `stop_reading` was played.
    pub stdin_closed: bool,
    /// Whether `close_stdout` was played.
    pub stdout_closed: bool,
    /// stdin bytes read but not yet consumed.
    pub pending_input: Vec<u8>,
}

/// Writes the state for a background copy into `dir`, in a file named after this process.
pub fn save(dir: &Path, state: &PlayState) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("resume-{}.json", std::process::id()));
    let text = serde_json::to_vec(state).map_err(std::io::Error::other)?;
    std::fs::write(&path, text)?;
    Ok(path)
}

/// Reads (and removes) the state a launcher saved.
pub fn take(path: &Path) -> std::io::Result<PlayState> {
    let bytes = std::fs::read(path)?;
    let _ = std::fs::remove_file(path);
    serde_json::from_slice(&bytes).map_err(std::io::Error::other)
}
