//! `mcp-conformance`: the conformance suite and harness for the Model Context Protocol.
//!
//! The scenario model ([`scenario`]), the rule registry ([`rules`]), the runner that plays a
//! scenario's scripted server against the reference client ([`runner`]), the verdicts
//! ([`verdict`]) and the reports ([`report`]). The CLI (`mcp-conformance run`, `list`) is a
//! thin layer over these.
//!
//! ```no_run
//! use mcp_conformance::{runner::MockLauncher, scenario, verdict};
//! let root = std::path::Path::new("scenarios");
//! let scenarios = scenario::load_all(root).unwrap();
//! let launcher = MockLauncher::this_binary().unwrap();
//! let results = verdict::run_all(&scenarios, &[mcp_refclient::Profile::Strict], &launcher);
//! println!("{} scenario runs", results.len());
//! ```

pub mod exit_code;
pub mod host;
pub mod report;
pub mod rules;
pub mod runner;
pub mod scenario;
pub mod verdict;
