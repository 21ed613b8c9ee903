//! Spawning the server: piped stdin/stdout/stderr, extra environment on top of the inherited
//! one, and on Unix a process group of its own when asked.

use std::process::Stdio;

use tokio::process::{Child, Command};

use crate::{McpError, StdioServer};

/// Starts `server`. A command that cannot be spawned is a transport error naming the command
/// and the OS cause.
pub(crate) fn spawn(server: &StdioServer, env_replaced: bool) -> Result<Child, McpError> {
    let mut command = Command::new(&server.command);
    if env_replaced {
        command.env_clear();
    }
    command
        .args(&server.args)
        .envs(server.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = &server.cwd {
        command.current_dir(cwd);
    }
    #[cfg(unix)]
    if server.own_process_group {
        command.process_group(0);
    }
    command.spawn().map_err(|e| {
        McpError::Transport(format!("cannot start MCP server '{}': {e}", server.command))
    })
}
