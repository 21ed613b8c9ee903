//! `mcp-conformance`: the conformance suite and harness for the Model Context Protocol.
//!
//! The scenario model ([`scenario`]), the rule registry ([`rules`]), the runner that plays a
//! scenario's scripted server against a client under test ([`runner`]), the seam every
//! client goes through ([`cut`]: the reference client, a Rust adapter, a driver in any
//! language), the verdicts ([`verdict`]) and the reports ([`report`]). [`harness::main`]
//! runs the scenarios in a client author's own `cargo test`. The CLI (`mcp-conformance run`,
//! `run --client`, `list`) is a thin layer over these.
//!
//! ```no_run
//! use mcp_conformance::{runner::MockLauncher, scenario, verdict};
//! let root = std::path::Path::new("scenarios");
//! let scenarios = scenario::load_all(root).unwrap();
//! let launcher = MockLauncher::this_binary().unwrap();
//! let results = verdict::run_all(&scenarios, &[mcp_refclient::Profile::Strict], &launcher);
//! println!("{} scenario runs", results.len());
//! ```

pub mod cut;
pub mod harness;
pub mod host;
pub mod matrix;
pub mod probe;
pub mod profiles;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod text;
pub mod verdict;

/// The server validator, a crate of its own (`mcp-validator`), under the path it always had.
pub use mcp_validator as validate;
/// The rule registry, the terminal escaping and the exit codes live in the validator crate,
/// below both it and the runner; they keep their paths here.
pub use mcp_validator::{exit_code, rules, terminal};

/// An error and its chained causes on one line, joined by `: `.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The JSON schema of a checked-in format (scenarios, the driver protocol), pretty-printed
/// with a final newline, as the files are checked in and kept fresh by a test.
pub fn schema_text<T: schemars::JsonSchema>() -> String {
    let schema = schemars::schema_for!(T);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}
