//! The product's prose speaks of the product: its Markdown and the comments of its code never
//! say who wrote it or how it was made.

use std::path::{Path, PathBuf};

/// Words and phrases of how the project was made, matched case-insensitively as whole words.
const PROCESS_WORDS: &[&str] = &[
    "engineer",
    "engineers",
    "this session",
    "previous session",
    "last session",
    "the lead",
    "worktree",
    "worktrees",
    "previous try",
    "helper agent",
];

/// Comments where the session named is an MCP session (a validator's connection to a
/// server), the protocol's own word.
const PROTOCOL_SESSION_COMMENTS: &[&str] = &[
    "A request id not used before in this session.",
    "Another handle on this session (same id, revision and log)",
    "The headers every POST of this session carries",
    "The method of the request this session sent earlier",
    "The next request id this session will use.",
];

/// Folders that hold no product prose: build output, installed servers, mutation runs, the
/// built book.
fn skipped(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    matches!(name, "target" | ".git" | "node_modules" | "book") || name.starts_with("mutants.out")
}

fn product_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![PathBuf::from(env!("CARGO_MANIFEST_DIR"))];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !skipped(&path) {
                    folders.push(path);
                }
            } else if path
                .extension()
                .is_some_and(|e| e == "md" || e == "rs" || e == "toml")
            {
                files.push(path);
            }
        }
    }
    files
}

/// The prose of a line: the whole line of Markdown, the comment of Rust (`//`, `///`, `//!`)
/// and TOML (`#`).
fn prose_of<'a>(path: &Path, line: &'a str) -> Option<&'a str> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("md") => Some(line),
        Some("rs") => line.find("//").map(|at| &line[at..]),
        Some("toml") => line.find('#').map(|at| &line[at..]),
        _ => None,
    }
}

/// The process words `text` holds as whole words.
fn process_words_in(text: &str) -> Vec<&'static str> {
    let lower = text.to_lowercase();
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    PROCESS_WORDS
        .iter()
        .copied()
        .filter(|word| {
            lower.match_indices(word).any(|(at, _)| {
                !is_word(lower[..at].chars().next_back())
                    && !is_word(lower[at + word.len()..].chars().next())
            })
        })
        .collect()
}

#[test]
fn the_product_prose_never_says_who_made_it_or_how() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for file in product_files() {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (number, line) in text.lines().enumerate() {
            let Some(prose) = prose_of(&file, line) else {
                continue;
            };
            if PROTOCOL_SESSION_COMMENTS.iter().any(|c| prose.contains(c)) {
                continue;
            }
            for word in process_words_in(prose) {
                let shown = file.strip_prefix(root).unwrap_or(&file).display();
                found.push(format!("{shown}:{}: {word}", number + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "prose about who made the project or how (say what was measured, on what, with which command): {found:#?}"
    );
}

#[test]
fn process_words_match_whole_words_in_any_case() {
    assert_eq!(
        process_words_in("Measured while The Lead watched"),
        ["the lead"]
    );
    assert_eq!(process_words_in("two engineers building"), ["engineers"]);
    assert!(process_words_in("the leading line; an engineered part; worktreeish").is_empty());
    assert!(process_words_in("an MCP session; Mcp-Session-Id").is_empty());
}
