//! The layers of the root crate: the seam every client goes through (`cut`) and what it
//! sees of the scripted server (`probe`) stand below the runner that drives them.

use std::path::{Path, PathBuf};

/// Modules that must not reach into `runner` (the runner uses them, never the reverse).
const BELOW_THE_RUNNER: &[&str] = &["src/cut", "src/probe", "src/text.rs"];

#[test]
fn the_client_seam_and_the_probe_import_nothing_of_the_runner() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offences = Vec::new();
    for below in BELOW_THE_RUNNER {
        for file in rust_files(&root.join(below)) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                if runner_path(line) {
                    let shown = file.strip_prefix(root).unwrap().display();
                    offences.push(format!("{shown}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offences.is_empty(),
        "these lines use the runner from below it (move what they need down, into `probe` or the seam):\n{}",
        offences.join("\n")
    );
}

/// Whether a line's code (not its comment) names the runner module.
fn runner_path(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or_default();
    ["crate::runner", "super::runner", "mcp_conformance::runner"]
        .iter()
        .any(|path| code.contains(path))
        || (code.trim_start().starts_with("use crate::{") && code.contains("runner"))
}

fn rust_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn a_runner_path_is_seen_in_code_and_not_in_comments() {
    assert!(runner_path("    let x = crate::runner::check::cut(&t, 3);"));
    assert!(runner_path("use crate::{runner::procs, text};"));
    assert!(!runner_path(
        "// the runner's crate::runner module drives it"
    ));
    assert!(!runner_path("use crate::probe::procs;"));
}
