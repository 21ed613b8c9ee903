//! [`ToolOutcome`]: what a tool call through the tool layer comes to.

use crate::McpError;

/// The outcome of a tool call made through a [`ToolAdapter`](super::ToolAdapter),
/// [`ToolSet`](super::ToolSet) or [`ToolSource`](super::ToolSource).
#[derive(Debug)]
pub enum ToolOutcome {
    /// The tool ran; its content as text for the model.
    Output(String),
    /// The tool reported a failure (`isError: true`), or it is not offered (an unknown tool);
    /// the content's text for the model.
    Failed(String),
    /// The call itself failed (transport, timeout, JSON-RPC error…); the error kept typed.
    Error(McpError),
}

impl ToolOutcome {
    /// The answer to a call of a tool that is not offered (or was withdrawn):
    /// "unknown tool 'x'". The server is not called.
    pub fn unknown_tool(name: &str) -> ToolOutcome {
        ToolOutcome::Failed(format!("unknown tool '{name}'"))
    }

    /// Whether the model is to see this as a failed tool call.
    pub fn is_error(&self) -> bool {
        !matches!(self, ToolOutcome::Output(_))
    }

    /// The text the model sees: the output, the failure's text, or "MCP call failed: " and
    /// the error's whole text.
    pub fn text(&self) -> String {
        match self {
            ToolOutcome::Output(text) | ToolOutcome::Failed(text) => text.clone(),
            ToolOutcome::Error(error) => format!("MCP call failed: {}", error.full_text()),
        }
    }
}
