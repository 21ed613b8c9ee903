//! The scripted HTTP(S) server: a loopback listener (two origins, three over https) that
//! plays a [`Script`](crate::script::Script) against the requests it receives, for
//! Streamable HTTP, its TLS variant and the legacy HTTP+SSE transport.
//!
//! Use [`HttpMock`] in-process (the conformance runner does), or the `mcp-mock-http` binary
//! ([`http_main`]) by hand. What each step does over HTTP is told in [`player`].
//!
//! ```
//! use mcp_mock_servers::{load::parse_toml, HttpMock};
//!
//! let script = parse_toml(
//!     r#"
//!     transport = "http"
//!     steps = [{ expect = { http = { method = "DELETE" } } }, { respond = { status = 405 } }]
//!     "#,
//!     "example.toml".as_ref(),
//! )
//! .unwrap();
//! let mock = HttpMock::start(script, None, std::env::temp_dir()).unwrap();
//! assert!(mock.url().starts_with("http://127.0.0.1:"));
//! assert!(mock.second_origin_url().starts_with("http://localhost:"));
//! mock.shutdown();
//! ```

pub mod body;
pub mod cli;
pub mod mock;
pub mod player;
pub mod server;
pub mod sse;
pub mod tls;

pub use cli::http_main;
pub use mock::HttpMock;
