//! The scripted stdio server: a child process that plays a [`Script`](crate::script::Script)
//! on its stdin/stdout/stderr.

pub mod cli;
pub mod exit_code;
pub mod flood;
pub mod input;
pub mod invocation;
pub mod launches;
pub mod output;
pub mod player;
pub mod resume;

pub use cli::stdio_main;
