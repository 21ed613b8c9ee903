//! Scenarios: loading one file, validating it against the registry, finding them all.

pub mod model;

pub use model::*;

use mcp_mock_servers::load::{
    check_size, line_column, MAX_SCRIPT_DEPTH, MAX_SCRIPT_VALUES, MAX_STEPS,
};
use mcp_refclient::Profile;
use std::path::{Path, PathBuf};

/// A scenario loaded from its file.
#[derive(Clone, Debug)]
pub struct LoadedScenario {
    /// Its name: the path below `scenarios/` without `.toml` (`stdio/banner-before-initialize`).
    pub name: String,
    /// The file.
    pub path: PathBuf,
    /// The content.
    pub scenario: Scenario,
}

impl LoadedScenario {
    /// The folder the scenario is in (`stdio`).
    pub fn area(&self) -> &str {
        self.name
            .rsplit_once('/')
            .map(|(area, _)| area)
            .unwrap_or("")
    }

    /// Whether every rule it checks applies at `revision`: a run at that revision leaves the
    /// others out (the handshake's scenarios at 2026-07-28).
    pub fn applies_at(&self, revision: &str) -> bool {
        self.scenario
            .rules
            .iter()
            .all(|id| crate::rules::find(id).is_some_and(|rule| rule.applies_at(revision)))
    }

    /// The profiles it applies to.
    pub fn profiles(&self) -> Vec<Profile> {
        if self.scenario.profiles.is_empty() {
            return Profile::ALL.to_vec();
        }
        self.scenario
            .profiles
            .iter()
            .filter_map(|p| Profile::from_name(p))
            .collect()
    }
}

/// Why a scenario file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read scenario {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause (not found, not a regular file, too large, not UTF-8).
        #[source]
        source: mcp_mock_servers::files::FileError,
    },
    /// The file is not a valid scenario (TOML syntax, unknown or missing field).
    #[error("invalid scenario {path}: line {line}, column {column}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// The column (1-based, in characters).
        column: usize,
        /// The parser's message, cut to [`MAX_MESSAGE`] characters (never the whole line: a
        /// scenario may be one line of megabytes).
        message: String,
    },
    /// The file parses but says something impossible (an unknown rule id, say).
    #[error("invalid scenario {path}:{line}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line the problem is on (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The scenario folder could not be listed.
    #[error("cannot list scenarios in {path}")]
    List {
        /// The folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// The most characters of a parser's message an error shows.
pub const MAX_MESSAGE: usize = 200;

/// Error kinds a scenario may name.
pub const ERROR_KINDS: &[&str] = &[
    "transport",
    "http",
    "protocol",
    "json-rpc",
    "serialization",
    "io",
    "connection-closed",
    "timeout",
];

/// Loads and validates one scenario file; `root` is the `scenarios/` folder that names it.
pub fn load(root: &Path, path: &Path) -> Result<LoadedScenario, LoadError> {
    let text = mcp_mock_servers::files::read_text(path).map_err(|source| LoadError::Read {
        path: path.into(),
        source,
    })?;
    let invalid = |needle: &str, message: String| LoadError::Invalid {
        path: path.into(),
        line: line_of(&text, needle),
        message,
    };
    // A file under the byte cap may still expand to hundreds of megabytes once parsed.
    mcp_mock_servers::weight::check_toml(&text, MAX_SCRIPT_VALUES, MAX_SCRIPT_DEPTH).map_err(
        |heavy| {
            invalid(
                "",
                format!(
                    "too large to load: {heavy} (the bounds on a scenario are \
                     {MAX_SCRIPT_VALUES} values and {MAX_SCRIPT_DEPTH} levels)"
                ),
            )
        },
    )?;
    let scenario: Scenario = toml::from_str(&text).map_err(|error| {
        let (line, column) = error
            .span()
            .map_or((1, 1), |span| line_column(&text, span.start));
        LoadError::Parse {
            path: path.into(),
            line,
            column,
            message: crate::text::cut(error.message().trim(), MAX_MESSAGE),
        }
    })?;
    mcp_mock_servers::load::validate(&scenario.server)
        .map_err(|message| invalid("[server]", format!("[server] {message}")))?;
    if scenario.rules.is_empty() {
        return Err(invalid("rules", "`rules` names no rule".into()));
    }
    let revision = scenario.revision();
    if !crate::rules::REVISIONS.contains(&revision) {
        let known = crate::rules::REVISIONS.join(", ");
        return Err(invalid(
            revision,
            format!("unknown revision `{revision}` (expected one of {known})"),
        ));
    }
    for rule in &scenario.rules {
        match crate::rules::find(rule) {
            None => {
                return Err(invalid(
                    rule,
                    format!("unknown rule id `{rule}` (see `mcp-conformance list`)"),
                ))
            }
            Some(found) if !found.applies_at(revision) => {
                return Err(invalid(
                    rule,
                    format!(
                        "rule `{rule}` does not apply at revision {revision} (its revisions: {})",
                        found.revisions.join(", ")
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    for profile in &scenario.profiles {
        if Profile::from_name(profile).is_none() {
            return Err(invalid(
                profile,
                format!("unknown profile `{profile}` (expected strict, yoagent or kova)"),
            ));
        }
    }
    validate_steps(&scenario, &invalid)?;
    let name = path
        .strip_prefix(root)
        .unwrap_or(path)
        .with_extension("")
        .to_string_lossy()
        .replace('\\', "/");
    Ok(LoadedScenario {
        name,
        path: path.into(),
        scenario,
    })
}

fn validate_steps(
    scenario: &Scenario,
    invalid: &dyn Fn(&str, String) -> LoadError,
) -> Result<(), LoadError> {
    let steps = &scenario.client.steps;
    if steps.is_empty() {
        return Err(invalid("[client]", "the client has no steps".into()));
    }
    if steps.len() > MAX_STEPS {
        return Err(invalid(
            "[client]",
            format!(
                "the client has {} steps, over the maximum of {MAX_STEPS}",
                steps.len()
            ),
        ));
    }
    if let Some(bytes) = scenario.client.http.max_body_bytes {
        check_size("[client.http]", "max_body_bytes", bytes)
            .map_err(|message| invalid("max_body_bytes", message))?;
    }
    for (i, step) in steps.iter().enumerate() {
        let call = match step {
            ClientStep::CallTool(call) => Some(call),
            ClientStep::Spawn(spawn) => match &*spawn.step {
                ClientStep::CallTool(call) => Some(call),
                _ => None,
            },
            _ => None,
        };
        if let Some(bytes) = call.and_then(|c| c.pad_bytes) {
            check_size(&format!("client steps[{i}]"), "pad_bytes", bytes)
                .map_err(|message| invalid("pad_bytes", message))?;
        }
    }
    let mut spawned = Vec::new();
    for step in steps {
        match step {
            ClientStep::Spawn(spawn) => {
                if matches!(
                    *spawn.step,
                    ClientStep::Spawn(_)
                        | ClientStep::Join(_)
                        | ClientStep::Connect(_)
                        | ClientStep::InterruptHost(_)
                        | ClientStep::ToolSource(_)
                ) {
                    return Err(invalid(
                        "spawn",
                        "a spawned step must be a call, a listing, close or a read".into(),
                    ));
                }
                spawned.push(spawn.name.clone());
            }
            ClientStep::Join(join) | ClientStep::Cancel(join) if !spawned.contains(&join.name) => {
                return Err(invalid(
                    &join.name,
                    format!("`{}` names no earlier `spawn`", join.name),
                ));
            }
            _ => {}
        }
    }
    validate_expect(&scenario.expect, steps.len(), invalid)?;
    if let Some(reference) = &scenario.expect.reference {
        if reference.reference.is_some() {
            return Err(invalid(
                "[expect.reference.reference]",
                "`[expect.reference]` cannot hold another `reference`".into(),
            ));
        }
        if !reference.by_rule.is_empty() {
            return Err(invalid(
                "[expect.reference.by_rule]",
                "`[expect.reference]` cannot hold `by_rule` tables".into(),
            ));
        }
        validate_expect(reference, steps.len(), invalid)?;
    }
    for (rule, table) in &scenario.expect.by_rule {
        if !scenario.rules.contains(rule) {
            return Err(invalid(
                rule,
                format!(
                    "`[expect.by_rule.\"{rule}\"]` names a rule the scenario does not check \
                     (its rules: {})",
                    scenario.rules.join(", ")
                ),
            ));
        }
        if table.reference.is_some() || !table.by_rule.is_empty() || !table.script_completed {
            return Err(invalid(
                rule,
                format!(
                    "`[expect.by_rule.\"{rule}\"]` cannot hold `reference`, `by_rule` or \
                     `script_completed` (the script is judged for every rule)"
                ),
            ));
        }
        validate_expect(table, steps.len(), invalid)?;
    }
    Ok(())
}

fn validate_expect(
    expect: &Expectations,
    steps: usize,
    invalid: &dyn Fn(&str, String) -> LoadError,
) -> Result<(), LoadError> {
    for step in &expect.steps {
        if step.step == 0 || step.step > steps {
            return Err(invalid(
                "step =",
                format!(
                    "[expect] names step {}, but the client has steps 1 to {steps}",
                    step.step
                ),
            ));
        }
        if let Some(kind) = &step.error {
            if !ERROR_KINDS.contains(&kind.as_str()) {
                return Err(invalid(
                    kind,
                    format!(
                        "unknown error kind `{kind}` (expected one of {})",
                        ERROR_KINDS.join(", ")
                    ),
                ));
            }
        }
    }
    for log in &expect.logs {
        if !["ERROR", "WARN", "INFO", "DEBUG", "TRACE"].contains(&log.level.as_str()) {
            return Err(invalid(
                &log.level,
                format!("unknown log level `{}`", log.level),
            ));
        }
    }
    Ok(())
}

/// The 1-based line of the first occurrence of `needle` (quoted if it can be), else 1.
fn line_of(text: &str, needle: &str) -> usize {
    let quoted = format!("\"{needle}\"");
    let at = text.find(&quoted).or_else(|| text.find(needle));
    at.map(|at| text[..at].lines().count().max(1) + usize::from(text[..at].ends_with('\n')))
        .unwrap_or(1)
}

/// Every `*.toml` under `root`, sorted by path.
pub fn discover(root: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let mut found = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder).map_err(|source| LoadError::List {
            path: folder.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| LoadError::List {
                path: folder.clone(),
                source,
            })?;
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Loads every scenario under `root`.
pub fn load_all(root: &Path) -> Result<Vec<LoadedScenario>, LoadError> {
    discover(root)?
        .iter()
        .map(|path| load(root, path))
        .collect()
}

/// The JSON schema of the scenario format, as checked in at `scenarios/scenario.schema.json`.
pub fn json_schema() -> String {
    crate::schema_text::<Scenario>()
}

#[cfg(test)]
mod tests {
    use super::line_of;

    #[test]
    fn line_of_finds_the_quoted_needle() {
        let text = "a = 1\nrules = [\"x.y\"]\n";
        assert_eq!(line_of(text, "x.y"), 2);
        assert_eq!(line_of(text, "nowhere"), 1);
        assert_eq!(line_of("first\n\nthird \"z\"", "z"), 3);
    }
}
