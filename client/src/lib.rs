//! `mcp-refclient`: the reference MCP client of mcp-conformance.
//!
//! A complete MCP client that keeps every client rule of the project's rule registry,
//! under three profiles (`strict`, `yoagent`, `kova`). The scenario runner drives it through
//! scripted misbehaving servers; the validator points it at third-party servers.
//!
//! ```no_run
//! # async fn demo() -> Result<(), mcp_refclient::McpError> {
//! use mcp_refclient::{ClientConfig, McpClient, Profile, StdioServer};
//! let server = StdioServer { command: "my-mcp-server".into(), ..Default::default() };
//! let client = McpClient::connect_stdio(server, ClientConfig::new(Profile::Strict)).await?;
//! for tool in client.list_tools().await? {
//!     println!("{}", tool.name);
//! }
//! let result = client.call_tool("echo", serde_json::json!({"text": "hi"}), None).await?;
//! println!("{result:?}");
//! client.close().await?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod client;
pub mod config;
pub mod error;
mod http;
pub mod jsonrpc;
pub mod redact;
mod stateless;
mod stdio;
pub mod tool;
pub mod tools;

pub use client::McpClient;
pub use config::{Breakage, ClientConfig, Profile, StdioServer, TestHooks, Timeouts};
pub use error::{ErrorKind, McpError};
pub use http::oauth;
pub use http::{
    BoxFuture, HeaderList, HttpServer, Redirects, TokenProvider, DEFAULT_MAX_BODY_BYTES,
    MAX_REDIRECTS,
};
pub use jsonrpc::ErrorCode;
pub use stateless::{base64, header_value};
pub use tool::{CallToolResult, Tool};

/// The newest protocol revision with an `initialize` handshake: what the client offers there
/// (and falls back to on a server that does not know `server/discover`).
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// The stateless revision (no handshake, `_meta` on every request, `server/discover`): the
/// strict profile's first choice.
pub const STATELESS_PROTOCOL_VERSION: &str = "2026-07-28";

/// The stateless revisions the client speaks.
pub const STATELESS_PROTOCOL_VERSIONS: [&str; 1] = [STATELESS_PROTOCOL_VERSION];

/// The stateful revisions the client accepts from a server.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Where the client's own log events go, by target, so tests can select them.
pub mod log_targets {
    /// The server's stderr, logged at DEBUG line by line.
    pub const STDERR: &str = "mcp_refclient::stderr";
    /// Everything else the client logs.
    pub const CLIENT: &str = "mcp_refclient";
}
