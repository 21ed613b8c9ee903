//! The tool layer: an MCP server's tools as tools a model can call.
//!
//! - [`ToolAdapter`] exposes one listed tool (its original name, or `prefix__name`, its
//!   description and JSON Schema) and calls the server with the original name, turning the
//!   result into a [`ToolOutcome`] (`isError` becomes [`ToolOutcome::Failed`]).
//! - [`content`] maps content blocks to the text a model sees.
//! - [`ToolSet`] gathers several servers' adapters and refuses two tools with one exposed
//!   name.
//! - [`ToolSource`] follows a server whose tools change: it lists at the start of every run,
//!   again after `notifications/tools/list_changed`, keeps the last good list when a listing
//!   fails, and withdraws the tools of a server that exited.
//! - [`ToolServer`] is what these need from a client; [`crate::McpClient`] implements it.

mod adapter;
pub mod content;
mod names;
mod outcome;
mod server;
mod set;
mod source;

pub use adapter::{adapters_for, ToolAdapter};
pub use names::{exposed_name, ToolNameCollision, PREFIX_SEPARATOR};
pub use outcome::ToolOutcome;
pub use server::ToolServer;
pub use set::ToolSet;
pub use source::ToolSource;
