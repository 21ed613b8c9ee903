//! The rule registry: every client rule and server check, loaded from `rules.toml`.

use serde::Deserialize;
use std::sync::OnceLock;

/// How much a rule weighs.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A failure fails the run.
    Must,
    /// A failure is a warning unless the run is strict.
    Should,
}

impl Level {
    /// The level as the reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Level::Must => "must",
            Level::Should => "should",
        }
    }
}

/// Whether a rule binds clients (checked by scenarios) or servers (checked by `validate`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    /// A client rule.
    Client,
    /// A server check.
    Server,
}

/// One rule.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// The stable id, e.g. `stdio.ping.answered`.
    pub id: String,
    /// must or should.
    pub level: Level,
    /// Client rule or server check.
    pub kind: RuleKind,
    /// Which documents state it (Y, K, S, R).
    #[serde(default)]
    pub sources: Vec<String>,
    /// The rule's text.
    pub text: String,
}

impl Rule {
    /// The group: the id up to its first dot (`stdio` for `stdio.ping.answered`).
    pub fn group(&self) -> &str {
        self.id.split('.').next().unwrap_or(&self.id)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Registry {
    rule: Vec<Rule>,
}

/// The client rule groups whose every rule must have a scenario (grown as transports land).
pub const COVERED_GROUPS: &[&str] = &[
    "lifecycle", "stdio", "process", "timeouts", "http", "headers", "redirects", "auth", "redaction", "legacy-sse",
    "resilience", "tools", "errors",
];

/// Every rule, in registry order.
pub fn all() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let registry: Registry =
            toml::from_str(include_str!("rules.toml")).expect("src/rules.toml is valid (checked by a test)");
        registry.rule
    })
}

/// The rule with this id.
pub fn find(id: &str) -> Option<&'static Rule> {
    all().iter().find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_ids_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for rule in all() {
            assert!(seen.insert(&rule.id), "duplicate rule id {}", rule.id);
            assert!(rule.id.contains('.'), "rule id {} has no group", rule.id);
        }
        assert!(all().len() > 100);
    }
}
