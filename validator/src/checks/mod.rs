//! The server checks of RULES.md ("Server checks"), in three layers, each importing only
//! those below it:
//! - [`session`]: what a check needs of a session (requests and answers, notifications,
//!   several requests in flight, the session's log, fresh sessions opened);
//! - [`common`], then one file per check area (`initialize`, `tools`, `http`, …): each
//!   declares its checks and judges them, over the session API and the judgements several
//!   areas share — never over another area;
//! - [`plan`]: which checks run, in which order and on which sessions; it imports the areas,
//!   and nothing below it imports the plan.

pub mod auth;
pub mod capabilities;
pub mod common;
pub mod http;
pub mod initialize;
pub mod jsonrpc;
pub mod lifecycle;
pub mod ping;
pub mod plan;
pub mod prompts;
pub mod requests;
pub mod resources;
pub mod schema;
pub mod session;
pub mod stateless;
pub mod stdio;
pub mod tool_calls;
pub mod tools;
pub mod utilities;
