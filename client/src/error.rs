//! The typed errors of the client.

use crate::jsonrpc::ErrorCode;

/// The neutral error kinds scenarios assert on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Connection or I/O failure on the transport (a server that exited included).
    Transport,
    /// A non-success HTTP status.
    Http,
    /// An unexpected message or response format.
    Protocol,
    /// The server answered with a JSON-RPC error.
    JsonRpc,
    /// A message could not be (de)serialized.
    Serialization,
    /// An I/O error, e.g. on the stdio pipes.
    Io,
    /// The connection ended.
    ConnectionClosed,
    /// A bound ran out.
    Timeout,
}

impl ErrorKind {
    /// The kind's name as scenarios spell it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Transport => "transport",
            ErrorKind::Http => "http",
            ErrorKind::Protocol => "protocol",
            ErrorKind::JsonRpc => "json-rpc",
            ErrorKind::Serialization => "serialization",
            ErrorKind::Io => "io",
            ErrorKind::ConnectionClosed => "connection-closed",
            ErrorKind::Timeout => "timeout",
        }
    }
}

/// An error of the MCP client.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// Connection or I/O failure, e.g. "Connection closed: MCP server 'x' exited with ...".
    #[error("{0}")]
    Transport(String),
    /// The server answered with a non-success HTTP status.
    #[error("{message}")]
    Http {
        /// The status.
        status: u16,
        /// What happened, naming the server by origin only.
        message: String,
    },
    /// An unexpected message or response format.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The server returned a JSON-RPC error, code and message kept as sent.
    #[error("server error {code}: {message}")]
    JsonRpc {
        /// The code.
        code: ErrorCode,
        /// The message.
        message: String,
        /// The data, if any.
        data: Option<serde_json::Value>,
    },
    /// A message could not be (de)serialized.
    #[error("invalid json")]
    Serialization(#[source] serde_json::Error),
    /// An I/O error.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The connection ended.
    #[error("connection closed: {0}")]
    ConnectionClosed(String),
    /// A bound ran out.
    #[error("{0}")]
    Timeout(String),
}

impl McpError {
    /// The neutral kind.
    pub fn kind(&self) -> ErrorKind {
        match self {
            McpError::Transport(_) => ErrorKind::Transport,
            McpError::Http { .. } => ErrorKind::Http,
            McpError::Protocol(_) => ErrorKind::Protocol,
            McpError::JsonRpc { .. } => ErrorKind::JsonRpc,
            McpError::Serialization(_) => ErrorKind::Serialization,
            McpError::Io { .. } => ErrorKind::Io,
            McpError::ConnectionClosed(_) => ErrorKind::ConnectionClosed,
            McpError::Timeout(_) => ErrorKind::Timeout,
        }
    }

    /// The HTTP status, where there is one.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            McpError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The whole text: the error and its chained causes, joined by `: `.
    pub fn full_text(&self) -> String {
        let mut text = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }
}

/// What a failed request says about its connection: whether it is dead, and whether the
/// request may have reached the server. Drives the kova profile's reconnect-and-retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// The connection may still be alive: a timeout, an HTTP status, a protocol or JSON-RPC
    /// error, a refused redirect.
    Alive,
    /// The connection is dead and the request never left the client (the write to the
    /// server failed, the TCP connection was refused).
    DeadUnsent,
    /// The connection died after the request went out: the server may have received it.
    DeadMaybeSent,
}

/// A failed request and what it says about the connection.
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) error: McpError,
    pub(crate) fate: Fate,
}

impl Failed {
    pub(crate) fn new(error: McpError, fate: Fate) -> Self {
        Failed { error, fate }
    }

    /// A failure that says nothing about the connection.
    pub(crate) fn alive(error: McpError) -> Self {
        Failed {
            error,
            fate: Fate::Alive,
        }
    }
}

impl From<McpError> for Failed {
    fn from(error: McpError) -> Self {
        Failed::alive(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_text_does_not_double_prefixes() {
        let text =
            "Connection closed: MCP server 'srv' exited with exit status: 3; last stderr: boom";
        assert_eq!(McpError::Transport(text.into()).full_text(), text);
        let rpc = McpError::JsonRpc {
            code: ErrorCode::METHOD_NOT_FOUND,
            message: "Method not found".into(),
            data: None,
        };
        assert_eq!(rpc.full_text(), "server error -32601: Method not found");
        let io = McpError::Io {
            context: "writing to the server".into(),
            source: std::io::Error::other("broken pipe"),
        };
        assert_eq!(io.full_text(), "writing to the server: broken pipe");
        let timeout = McpError::Timeout(
            "MCP call 'tools/call' timed out after 100ms; the server may still carry it out".into(),
        );
        assert_eq!(timeout.full_text(), timeout.to_string());
        assert_eq!(timeout.kind().name(), "timeout");
    }
}
