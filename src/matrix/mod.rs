//! `mcp-conformance matrix`: every row of `adapters/matrix.toml` (a client under test, through
//! its driver) over every scenario of its profile, each failure held against the row's baseline.

pub mod reasons;
pub mod render;
pub mod rows;
pub mod run;
