//! Scripted MCP servers that misbehave on purpose, for testing MCP clients.
//!
//! Use this crate to run a real server process whose every move is scripted: the
//! `mcp-mock-stdio` binary (or `mcp-conformance mock-stdio`) plays a [`script::Script`] on
//! its stdin/stdout, answers with defaults where the script does not say, and appends what it
//! sees and does to a wire log ([`wire_log::Record`], read back with [`read_wire_log`]).
//!
//! ```
//! use mcp_mock_servers::{describe_step, load::parse_toml};
//!
//! let script = parse_toml(
//!     r#"
//!     steps = [
//!       { banner = { lines = ["starting my-server v1.0", "ready"] } },
//!       { handshake = {} },
//!       { expect = { method = "tools/call" } },
//!       { reply = {} },
//!     ]
//!     "#,
//!     "example.toml".as_ref(),
//! )
//! .unwrap();
//! let described: Vec<String> = script.steps.iter().map(describe_step).collect();
//! assert_eq!(described, ["banner (2 lines)", "handshake", "expect tools/call", "reply"]);
//! ```
//!
//! By hand: `mcp-mock-stdio --script my-script.toml --log wire.jsonl`.
//!
//! Over HTTP (`transport = "http"`, `"https"`, `"legacy-sse"`) the same script drives a real
//! loopback listener: [`HttpMock::start`] in-process (it runs on a thread of its own), or
//! `mcp-mock-http --script my-script.toml` by hand, which prints its URL.
//!
//! Already testing with `wiremock`? The `wiremock` feature adds [`wiremock::McpResponder`]
//! (a whole MCP server as one responder) and MCP matchers to mount on your `MockServer`.

mod args;
pub mod describe;
pub mod error;
pub mod files;
pub mod http;
pub mod load;
pub mod matcher;
pub mod responder;
pub mod script;
pub mod stdio;
pub mod weight;
pub mod wire_log;
#[cfg(feature = "wiremock")]
pub mod wiremock;

pub use describe::describe_step;
pub use error::{HttpStartError, LoadError, WireLogError};
pub use http::{http_main, HttpMock};
pub use stdio::stdio_main;
pub use wire_log::read_wire_log;
