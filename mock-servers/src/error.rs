//! The library's errors: loading a script, reading a wire log.

use std::path::PathBuf;

/// A script file could not be loaded. Each message names the file and, where known, the
/// line and column.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The script file.
        path: PathBuf,
        /// Why (not found, not a regular file, too large, …).
        #[source]
        source: crate::files::FileError,
    },
    /// The file is not a valid script (TOML or JSON syntax, unknown step, unknown field, …).
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        /// The script file.
        path: PathBuf,
        /// The line (1-based; 0 when unknown).
        line: usize,
        /// The column (1-based; 0 when unknown).
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// The script parsed but is inconsistent (a `reply.to` naming no earlier request, …).
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The script file.
        path: PathBuf,
        /// What is wrong, with the step's place (`steps[3]`).
        message: String,
    },
}

/// A wire log could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WireLogError {
    /// The file could not be read.
    #[error("cannot read wire log {}", path.display())]
    Read {
        /// The wire log.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A complete line is not a record.
    #[error("wire log {}:{line}: not a record", path.display())]
    Parse {
        /// The wire log.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

/// The HTTP mock could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpStartError {
    /// The script is not one the HTTP mock plays (stdio transport, a stdio-only step, …).
    #[error("{0}")]
    Script(String),
    /// The wire log could not be opened.
    #[error("cannot open wire log {}", path.display())]
    Log {
        /// The wire log.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A listener, the runtime or the CA file could not be set up.
    #[error("cannot {what}")]
    Io {
        /// What failed (`listen on 127.0.0.1`).
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The certificates could not be made.
    #[error("{0}")]
    Tls(String),
}

/// Formats an error with its chain of causes on one line: `cannot read x.toml: No such file`.
pub fn one_line(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    // Parser messages can span lines ("invalid array\nexpected `]`"): keep one line.
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}
