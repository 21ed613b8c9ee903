//! [`HeaderList`]: the caller's headers, validated before anything is sent and kept out of
//! debug output.

use hyper::header::{HeaderName, HeaderValue};

use crate::McpError;

/// Headers the transport sets itself; a caller cannot give them.
pub(crate) const TRANSPORT_OWNED: [&str; 7] = [
    "accept",
    "content-type",
    "mcp-session-id",
    "content-length",
    "transfer-encoding",
    "connection",
    "host",
];

/// The caller's headers, sent on every request of the session (`initialize`, the
/// `initialized` notification, calls, the closing `DELETE`). Values are sensitive: `Debug`
/// prints the names only.
///
/// ```
/// use mcp_refclient::HeaderList;
/// let headers = HeaderList::new()
///     .with_header("authorization", "Bearer abc")?
///     .with_header("user-agent", "my-app/1.0")?;
/// assert_eq!(format!("{headers:?}"), r#"{"authorization": "[sensitive]", "user-agent": "[sensitive]"}"#);
/// # Ok::<(), mcp_refclient::McpError>(())
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HeaderList {
    entries: Vec<(HeaderName, HeaderValue)>,
}

impl HeaderList {
    /// An empty list.
    pub fn new() -> Self {
        HeaderList::default()
    }

    /// Adds `name: value`, replacing an earlier value of that name. Refuses an invalid name, a
    /// value that is not visible ASCII (space and tab are allowed inside it), and a header
    /// the transport sets itself; the refused value is never echoed.
    pub fn with_header(
        mut self,
        name: impl AsRef<str>,
        value: impl AsRef<str>,
    ) -> Result<Self, McpError> {
        let name = name.as_ref();
        let value = value.as_ref();
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            McpError::Transport(format!(
                "invalid HTTP header name '{}'",
                name.escape_debug()
            ))
        })?;
        if TRANSPORT_OWNED.contains(&header.as_str()) {
            return Err(McpError::Transport(format!(
                "HTTP header '{name}' is set by the transport itself and cannot be given"
            )));
        }
        let value = valid_value(value).ok_or_else(|| {
            McpError::Transport(format!(
                "invalid value for HTTP header '{name}': only visible ASCII is allowed, with spaces and tabs inside (the value is not shown)"
            ))
        })?;
        match self.entries.iter_mut().find(|(n, _)| *n == header) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((header, value)),
        }
        Ok(self)
    }

    /// The names, in the order first given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn entries(&self) -> &[(HeaderName, HeaderValue)] {
        &self.entries
    }
}

/// A sensitive header value if `value` is visible ASCII with spaces and tabs only inside.
pub(crate) fn valid_value(value: &str) -> Option<HeaderValue> {
    let bytes = value.as_bytes();
    let visible = |b: &u8| (0x21..=0x7e).contains(b);
    let inner_ok = bytes
        .iter()
        .all(|b| visible(b) || *b == b' ' || *b == b'\t');
    let ends_ok = bytes.first().into_iter().chain(bytes.last()).all(visible);
    if !(inner_ok && ends_ok) {
        return None;
    }
    let mut value = HeaderValue::from_str(value).ok()?;
    value.set_sensitive(true);
    Some(value)
}

impl std::fmt::Debug for HeaderList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(
                self.entries
                    .iter()
                    .map(|(n, _)| (n.as_str(), "[sensitive]")),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setting_a_name_again_replaces_it() {
        let list = HeaderList::new()
            .with_header("X-Key", "a")
            .unwrap()
            .with_header("x-key", "b")
            .unwrap();
        assert_eq!(list.entries().len(), 1);
        assert_eq!(list.entries()[0].1, "b");
        assert!(!list.is_empty());
        assert_eq!(list.names().collect::<Vec<_>>(), ["x-key"]);
        assert!(HeaderList::new().is_empty());
    }

    #[test]
    fn transport_owned_names_are_refused() {
        for name in [
            "Accept",
            "content-type",
            "MCP-Session-Id",
            "Content-Length",
            "Transfer-Encoding",
            "Connection",
            "Host",
        ] {
            let err = HeaderList::new().with_header(name, "x").unwrap_err();
            assert!(
                err.to_string().contains("set by the transport itself"),
                "{err}"
            );
        }
    }

    #[test]
    fn refused_values_are_not_echoed() {
        for value in [
            "sec\nret-1",
            "sécret-2",
            " secret-3",
            "secret-4\t",
            "secret\u{7f}5",
        ] {
            let err = HeaderList::new().with_header("x-key", value).unwrap_err();
            assert!(!err.to_string().contains("secret"), "{err}");
            assert!(!format!("{err:?}").contains("secret"), "{err:?}");
        }
        assert!(HeaderList::new()
            .with_header("authorization", "Bearer a\tb")
            .is_ok());
    }

    #[test]
    fn invalid_names_are_refused() {
        for name in ["", "x y", "x:y", "é"] {
            assert!(HeaderList::new().with_header(name, "v").is_err(), "{name}");
        }
    }

    #[test]
    fn debug_prints_names_only() {
        let list = HeaderList::new()
            .with_header("x-api-key", "topsecret")
            .unwrap();
        assert_eq!(format!("{list:?}"), r#"{"x-api-key": "[sensitive]"}"#);
    }
}
