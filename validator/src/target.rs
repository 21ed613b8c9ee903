//! What to validate: a command to run over stdio, or a URL, and the `mcpServers` config
//! file desktop hosts use, which names several of either.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A server to validate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A command spoken to over stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment.
        env: Vec<(String, String)>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint URL.
        url: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
    },
}

impl Target {
    /// How reports name the target: the command line, or the URL.
    pub fn describe(&self) -> String {
        match self {
            Target::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Target::Http { url, .. } => super::redact::public_url(url),
        }
    }

    /// Whether the target is spoken to over stdio.
    pub fn is_stdio(&self) -> bool {
        matches!(self, Target::Stdio { .. })
    }
}

/// A wrong input: the message is one line, lowercase, without a trailing period.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InputError {
    /// `--env` without `=`.
    #[error("--env `{0}` is not KEY=VALUE")]
    Env(String),
    /// `--header` without `:` (the text is not shown: it may be a credential).
    #[error("--header number {0} is not `Name: value` (its text is not shown)")]
    Header(usize),
    /// The config file cannot be read.
    #[error("cannot read the config file {path}: {reason}")]
    ConfigRead {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// The config file is not a valid `mcpServers` config.
    #[error("the config file {path} is not a valid mcpServers config: {reason}")]
    ConfigFormat {
        /// The file.
        path: String,
        /// Why, with line and column where serde gives them.
        reason: String,
    },
    /// A server entry names neither `command` nor `url`, or both.
    #[error("server `{name}` in {path} needs either `command` or `url`")]
    ConfigEntry {
        /// The file.
        path: String,
        /// The entry.
        name: String,
    },
    /// A name asked for is not in the file.
    #[error("no server named `{name}` in {path} (it has: {known})")]
    UnknownName {
        /// The file.
        path: String,
        /// The name asked for.
        name: String,
        /// The names the file has.
        known: String,
    },
    /// The file lists no server.
    #[error("the config file {0} lists no server under mcpServers")]
    Empty(String),
}

/// Parses repeated `--env K=V`.
pub fn parse_env(items: &[String]) -> Result<Vec<(String, String)>, InputError> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(InputError::Env(item.clone())),
        })
        .collect()
}

/// Parses repeated `--header 'Name: value'`.
pub fn parse_headers(items: &[String]) -> Result<Vec<(String, String)>, InputError> {
    items
        .iter()
        .enumerate()
        .map(|(index, item)| match item.split_once(':') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(InputError::Header(index + 1)),
        })
        .collect()
}

/// The config file: `{ "mcpServers": { NAME: ENTRY, ... } }`.
#[derive(Deserialize)]
struct ConfigFile {
    #[serde(rename = "mcpServers")]
    mcp_servers: BTreeMap<String, ConfigEntry>,
}

/// One server entry. Unknown keys (`type`, `disabled`, `alwaysAllow`, …) are tolerated, as
/// the hosts that write these files add their own.
#[derive(Deserialize)]
struct ConfigEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// Reads a config file and returns the servers named in `names` (all of them, in file
/// order, when `names` is empty), each with its name.
pub fn load_config(path: &Path, names: &[String]) -> Result<Vec<(String, Target)>, InputError> {
    let shown = path.display().to_string();
    let text = mcp_mock_servers::files::read_text(path).map_err(|e| InputError::ConfigRead {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let file: ConfigFile = serde_json::from_str(&text).map_err(|e| InputError::ConfigFormat {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let mut servers = Vec::new();
    for (name, entry) in file.mcp_servers {
        let target = match (entry.command, entry.url) {
            (Some(command), None) => Target::Stdio {
                command,
                args: entry.args,
                env: entry.env.into_iter().collect(),
            },
            (None, Some(url)) => Target::Http {
                url,
                headers: entry.headers.into_iter().collect(),
            },
            _ => return Err(InputError::ConfigEntry { path: shown, name }),
        };
        servers.push((name, target));
    }
    if servers.is_empty() {
        return Err(InputError::Empty(shown));
    }
    if names.is_empty() {
        return Ok(servers);
    }
    names
        .iter()
        .map(|name| {
            servers
                .iter()
                .find(|(n, _)| n == name)
                .cloned()
                .ok_or_else(|| InputError::UnknownName {
                    path: shown.clone(),
                    name: name.clone(),
                    known: servers
                        .iter()
                        .map(|(n, _)| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    #[test]
    fn a_config_file_gives_stdio_and_http_targets_by_name() {
        let file = write(
            r#"{"mcpServers": {
                "a": {"command": "srv", "args": ["--x"], "env": {"K": "V"}, "disabled": false},
                "b": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer t"}}
            }}"#,
        );
        let all = load_config(file.path(), &[]).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(
            all[0].1,
            Target::Stdio {
                command: "srv".into(),
                args: vec!["--x".into()],
                env: vec![("K".into(), "V".into())]
            }
        );
        let only_b = load_config(file.path(), &["b".into()]).unwrap();
        assert!(
            matches!(&only_b[0].1, Target::Http { url, .. } if url == "http://127.0.0.1:1/mcp")
        );
        let missing = load_config(file.path(), &["c".into()]).unwrap_err();
        assert_eq!(
            missing.to_string(),
            format!(
                "no server named `c` in {} (it has: a, b)",
                file.path().display()
            )
        );
    }

    #[test]
    fn a_broken_config_file_says_where() {
        let file = write("{\"mcpServers\": {\"a\": {\"command\": 1}}}");
        let error = load_config(file.path(), &[]).unwrap_err().to_string();
        assert!(error.contains("line 1 column"), "{error}");
        let both = write(r#"{"mcpServers": {"a": {"command": "x", "url": "http://127.0.0.1"}}}"#);
        assert!(load_config(both.path(), &[])
            .unwrap_err()
            .to_string()
            .contains("either `command` or `url`"));
    }

    #[test]
    fn env_and_headers_are_parsed_or_refused() {
        assert_eq!(
            parse_env(&["A=b=c".into()]).unwrap(),
            vec![("A".into(), "b=c".into())]
        );
        assert!(parse_env(&["nope".into()]).is_err());
        assert_eq!(
            parse_headers(&["X-Key: v 1".into()]).unwrap(),
            vec![("X-Key".into(), "v 1".into())]
        );
        assert!(parse_headers(&["nope".into()]).is_err());
    }
}
