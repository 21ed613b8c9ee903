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

/// Who is held to a client rule.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The MCP specification states it: every client is held to it.
    Specification,
    /// Every client should do it, though no sentence of the specification says so (no
    /// credential in an error, the server process ended, bounded time, no call run twice).
    Robustness,
    /// A seed document's exact promise (its error texts, its defaults, its API): held only
    /// under the profile whose source letter the rule carries.
    Profile,
}

impl Tier {
    /// Every tier, in the order reports list them.
    pub const ALL: [Tier; 3] = [Tier::Specification, Tier::Robustness, Tier::Profile];

    /// The tier as the registry and the reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Specification => "specification",
            Tier::Robustness => "robustness",
            Tier::Profile => "profile",
        }
    }
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
    /// Who is held to it (client rules; a server check has none).
    #[serde(default)]
    pub tier: Option<Tier>,
    /// The rule's text.
    pub text: String,
    /// The protocol revisions the rule applies to: each item a revision (`2025-06-18`), a
    /// revision and every later one (`2026-07-28..`), or a revision and every earlier one
    /// (`..2025-11-25`). Absent: every revision. A run at a revision the rule does not
    /// apply to neither checks nor counts it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub revisions: Vec<String>,
}

/// Every protocol revision the suite knows, oldest first.
pub const REVISIONS: &[&str] = &[
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The newest revision with an `initialize` handshake ("legacy" in the 2026-07-28 text).
pub const LAST_LEGACY_REVISION: &str = "2025-11-25";

/// The current revision (stateless MCP).
pub const LATEST_REVISION: &str = "2026-07-28";

/// Why a `revisions` item is not understood.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{item}` is not a revision or a range of revisions (known: {known})")]
pub struct RevisionSpecError {
    /// The item.
    pub item: String,
    /// The revisions known.
    pub known: String,
}

/// Whether `revision` falls under one `revisions` item (`X`, `X..` or `..X`).
pub fn revision_matches(item: &str, revision: &str) -> Result<bool, RevisionSpecError> {
    let known = |r: &str| REVISIONS.contains(&r);
    let bad = || RevisionSpecError {
        item: item.into(),
        known: REVISIONS.join(", "),
    };
    // Revisions are ISO dates, so string order is time order.
    let matched = if let Some(from) = item.strip_suffix("..") {
        known(from).then(|| revision >= from)
    } else if let Some(to) = item.strip_prefix("..") {
        known(to).then(|| revision <= to)
    } else {
        known(item).then(|| revision == item)
    };
    matched.ok_or_else(bad)
}

impl Rule {
    /// Whether the rule applies at `revision` (an item the registry cannot read applies
    /// nowhere; a test keeps every item readable).
    pub fn applies_at(&self, revision: &str) -> bool {
        self.revisions.is_empty()
            || self
                .revisions
                .iter()
                .any(|item| revision_matches(item, revision).unwrap_or(false))
    }

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
    "lifecycle",
    "stdio",
    "process",
    "timeouts",
    "http",
    "headers",
    "redirects",
    "auth",
    "redaction",
    "legacy-sse",
    "resilience",
    "tools",
    "errors",
    "stateless",
];

/// Every rule, in registry order.
pub fn all() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let registry: Registry = toml::from_str(include_str!("rules.toml"))
            .expect("validator/src/rules.toml is valid (checked by a test)");
        registry.rule
    })
}

/// The rules that apply at `revision`: those a run at that revision checks and counts.
pub fn at_revision(revision: &str) -> impl Iterator<Item = &'static Rule> + '_ {
    all().iter().filter(move |r| r.applies_at(revision))
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

    #[test]
    fn every_client_rule_has_a_tier_and_every_specification_rule_is_of_its_tier() {
        for rule in all() {
            match rule.kind {
                RuleKind::Server => assert_eq!(rule.tier, None, "{} is a server check", rule.id),
                RuleKind::Client => {
                    let tier = rule
                        .tier
                        .unwrap_or_else(|| panic!("{} has no tier", rule.id));
                    let sourced_s = rule.sources.iter().any(|s| s == "S");
                    assert_eq!(
                        sourced_s,
                        tier == Tier::Specification,
                        "{}: the specification tier is exactly the rules sourced S",
                        rule.id
                    );
                }
            }
        }
    }

    #[test]
    fn every_revisions_item_names_known_revisions() {
        for rule in all() {
            for item in &rule.revisions {
                assert!(
                    revision_matches(item, LATEST_REVISION).is_ok(),
                    "{}: {item} is not readable",
                    rule.id
                );
            }
        }
    }

    #[test]
    fn revision_items_read_as_one_revision_or_an_open_range() {
        assert_eq!(revision_matches("2025-06-18", "2025-06-18"), Ok(true));
        assert_eq!(revision_matches("2025-06-18", "2025-11-25"), Ok(false));
        assert_eq!(revision_matches("..2025-11-25", "2024-11-05"), Ok(true));
        assert_eq!(revision_matches("..2025-11-25", "2026-07-28"), Ok(false));
        assert_eq!(revision_matches("2026-07-28..", "2026-07-28"), Ok(true));
        assert_eq!(revision_matches("2026-07-28..", "2025-11-25"), Ok(false));
        assert!(revision_matches("2025-13-01", "2025-11-25").is_err());
        assert!(revision_matches("..latest", "2025-11-25").is_err());
    }

    #[test]
    fn the_handshake_ping_and_sessions_are_neither_checked_nor_counted_at_2026_07_28() {
        let modern: Vec<&str> = at_revision(LATEST_REVISION)
            .map(|r| r.id.as_str())
            .collect();
        let legacy: Vec<&str> = at_revision(LAST_LEGACY_REVISION)
            .map(|r| r.id.as_str())
            .collect();
        for gone in [
            "lifecycle.initialize.sent-first",
            "stdio.ping.answered",
            "http.session.captured",
        ] {
            assert!(
                !modern.contains(&gone),
                "{gone} applies at {LATEST_REVISION}"
            );
            assert!(
                legacy.contains(&gone),
                "{gone} does not apply at {LAST_LEGACY_REVISION}"
            );
        }
        assert!(
            modern.contains(&"stateless.meta.every-request")
                && !legacy.contains(&"stateless.meta.every-request")
        );
        assert!(
            modern.contains(&"stdio.framing.newline") && legacy.contains(&"stdio.framing.newline")
        );
    }

    #[test]
    fn every_2026_07_28_client_rule_quotes_its_sentence_and_level() {
        for rule in all().iter().filter(|r| {
            r.kind == RuleKind::Client && r.revisions.iter().any(|i| i == "2026-07-28..")
        }) {
            assert!(
                rule.text.contains('"'),
                "{} quotes no spec sentence",
                rule.id
            );
            let level = rule.level.name().to_uppercase();
            assert!(
                rule.text.contains("MUST")
                    || rule.text.contains("SHOULD")
                    || rule.text.contains("MAY"),
                "{} names no spec level",
                rule.id
            );
            assert!(
                rule.sources.iter().any(|s| s == "S" || s == "R"),
                "{} ({level}) names no source",
                rule.id
            );
        }
    }
}
