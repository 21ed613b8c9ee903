//! Exposed tool names: `prefix__name`, and the error for two tools with one exposed name.

/// What joins a prefix (namespace) and a tool's name: `docs__search`.
pub const PREFIX_SEPARATOR: &str = "__";

/// The name a model sees for the server tool `name`: `name` itself, or `prefix__name`.
pub fn exposed_name(prefix: Option<&str>, name: &str) -> String {
    match prefix {
        Some(prefix) => format!("{prefix}{PREFIX_SEPARATOR}{name}"),
        None => name.to_string(),
    }
}

/// Two tools with one exposed name (a model provider refuses such a tool list).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("tool name '{name}' offered by '{first}' and '{second}'; give one a prefix")]
pub struct ToolNameCollision {
    /// The exposed name both tools have.
    pub name: String,
    /// The server that offered it first.
    pub first: String,
    /// The server that offered it again.
    pub second: String,
}
