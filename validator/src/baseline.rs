//! The baseline: failures a target is known to have, each with its reason. A listed failure
//! is reported as expected (`xfail`) and does not fail the run; a listed check that passes is
//! stale and fails the run until its entry is removed.
//!
//! ```toml
//! [[expected]]
//! check = "server.jsonrpc.parse-error"   # a check id
//! reason = "the TypeScript SDK drops lines that are not JSON without answering"
//! server = "everything"                  # optional: only for this name in a --config run
//! revision = "2025-11-25"                # optional: only for this revision
//! ```

use serde::Deserialize;
use std::path::Path;

/// The baseline file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The expected failures.
    #[serde(default)]
    pub expected: Vec<Expected>,
}

/// One expected failure.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    /// The check id.
    pub check: String,
    /// Why the target fails it.
    pub reason: String,
    /// The `--config` server name it applies to; any target when absent.
    #[serde(default)]
    pub server: Option<String>,
    /// The revision it applies to; any when absent.
    #[serde(default)]
    pub revision: Option<String>,
}

impl Baseline {
    /// Reads and checks a baseline file; the error is one line naming the file.
    pub fn load(path: &Path, known_checks: &[&str]) -> Result<Baseline, String> {
        let text = mcp_mock_servers::files::read_text(path)
            .map_err(|e| format!("cannot read the baseline {}: {e}", path.display()))?;
        let baseline: Baseline = toml::from_str(&text).map_err(|e| {
            format!(
                "the baseline {} is not valid: {}",
                path.display(),
                e.to_string().replace('\n', " ").trim()
            )
        })?;
        if let Some(unknown) = baseline
            .expected
            .iter()
            .find(|e| !known_checks.contains(&e.check.as_str()))
        {
            return Err(format!(
                "the baseline {} names an unknown check `{}`",
                path.display(),
                unknown.check
            ));
        }
        Ok(baseline)
    }

    /// The entry expecting `check` to fail for this server and revision.
    pub fn find(&self, check: &str, server: Option<&str>, revision: &str) -> Option<&Expected> {
        self.expected.iter().find(|e| {
            e.check == check
                && match e.server.as_deref() {
                    None => true,
                    Some(s) => Some(s) == server,
                }
                && match e.revision.as_deref() {
                    None => true,
                    Some(r) => r == revision || revision == "all",
                }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_match_by_check_server_and_revision() {
        let baseline: Baseline = toml::from_str(
            "[[expected]]\ncheck = \"server.ping\"\nreason = \"r\"\nserver = \"a\"\n[[expected]]\ncheck = \"server.tools.list\"\nreason = \"r\"\nrevision = \"2024-11-05\"\n",
        )
        .unwrap();
        assert!(baseline
            .find("server.ping", Some("a"), "2025-11-25")
            .is_some());
        assert!(baseline
            .find("server.ping", Some("b"), "2025-11-25")
            .is_none());
        assert!(baseline
            .find("server.tools.list", None, "2024-11-05")
            .is_some());
        assert!(baseline
            .find("server.tools.list", None, "2025-11-25")
            .is_none());
    }
}
