//! HTTP targets: the validator's own small HTTP/1.1 client for Streamable HTTP, so every byte
//! the server sends is seen (the reference client tolerates what the validator must judge).
//!
//! [`Wire`] sends one request over a fresh connection (TCP, or TLS trusting the system roots
//! plus `--ca-cert`; verification is never turned off) and reads the answer: a JSON body to
//! its end, an SSE body frame by frame until the awaited answer, or only the head. A whole
//! request (connect, TLS, the head, the body) is bounded by one `--timeout`, however busy
//! the stream; a body is read up to 8 MiB and an SSE body's events are parsed as they come. [`HttpSession`] keeps
//! a session's `Mcp-Session-Id`, negotiated revision and log, and speaks JSON-RPC over it.

mod headers;
mod reply;
mod session;
mod sse;
mod tls;
mod wire;

pub use headers::{check_headers, standard_headers, with, without};
pub use reply::{Posted, Reply, Until, WireError, MAX_BODY};
pub use session::{Handshake, HttpSession, PROTOCOL_VERSION_HEADER_SINCE};
pub use sse::{events, Event};
pub use tls::check_ca_cert;
pub use wire::Wire;
