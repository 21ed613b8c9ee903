//! What a client other than the reference one is held to, by the tier of each rule (see
//! `tier` in the rule registry): every client, whatever its profile, is held to the
//! specification-tier and the robustness-tier rules; a profile-tier rule (a seed document's
//! exact promise: its error texts, its defaults) binds only the profile whose source letter
//! it carries (`yoagent`: Y, `kova`: K). A scenario is judged on the rules it names that bind
//! the client; one naming another profile's promise is judged on its other rules where that
//! promise's expectations are set apart (`[expect.by_rule]`, see
//! [`crate::verdict::applicable`]), and is otherwise not applicable, with the reason. The
//! reference client is held to every scenario of its profile (profile-tier rules of this
//! project's own choice, R, bind it alone).

use crate::rules::{self, Tier};
use crate::scenario::LoadedScenario;

/// The source letter of the promises a client under `profile` claims.
pub fn source_of(profile: &str) -> Option<&'static str> {
    match profile {
        "strict" => Some("S"),
        "yoagent" => Some("Y"),
        "kova" => Some("K"),
        _ => None,
    }
}

fn source_name(source: &str) -> &'static str {
    match source {
        "S" => "the MCP specification",
        "Y" => "yoagent's documentation",
        "K" => "kova's documentation",
        "R" => "this project's choice",
        _ => "an unknown source",
    }
}

/// Whether rule `id` binds a client under `profile`, else why not.
pub fn binds(profile: &str, id: &str) -> Result<(), String> {
    let Some(source) = source_of(profile) else {
        return Err(format!("unknown profile `{profile}`"));
    };
    let Some(rule) = rules::find(id) else {
        return Err(format!("rule `{id}` is not in the registry"));
    };
    match rule.tier {
        Some(Tier::Specification | Tier::Robustness) => Ok(()),
        Some(Tier::Profile) if rule.sources.iter().any(|s| s == source) => Ok(()),
        Some(Tier::Profile) => {
            let from: Vec<&str> = rule.sources.iter().map(|s| source_name(s)).collect();
            let from = if from.is_empty() {
                "no document".to_string()
            } else {
                from.join(" and ")
            };
            Err(format!(
                "rule `{id}` is a profile-tier promise of {from}, not of the `{profile}` \
                 profile's"
            ))
        }
        None => Err(format!("rule `{id}` is a server check, not a client rule")),
    }
}

/// Whether every rule of `scenario` binds a client under `profile`, else why not.
pub fn held_to(profile: &str, scenario: &LoadedScenario) -> Result<(), String> {
    scenario
        .scenario
        .rules
        .iter()
        .try_for_each(|id| binds(profile, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(path: &str) -> LoadedScenario {
        let root = crate::harness::bundled_scenarios();
        crate::scenario::load(&root, &root.join(path)).unwrap()
    }

    #[test]
    fn every_profile_is_held_to_specification_and_robustness_rules_and_its_own_promises_alone() {
        // Specification tier: every profile.
        let sent_first = load("lifecycle/initialize-sent-first.toml");
        for profile in ["strict", "yoagent", "kova"] {
            assert_eq!(held_to(profile, &sent_first), Ok(()), "{profile}");
        }
        // Robustness tier (sourced Y alone): every profile too.
        assert_eq!(
            binds("strict", "lifecycle.initialized.undeliverable"),
            Ok(())
        );
        assert_eq!(binds("kova", "lifecycle.initialized.undeliverable"), Ok(()));
        // Profile tier: yoagent's error text binds yoagent alone.
        let exit_text = load("stdio/exit-error-text.toml");
        assert_eq!(held_to("yoagent", &exit_text), Ok(()));
        for profile in ["strict", "kova"] {
            let why = held_to(profile, &exit_text).unwrap_err();
            assert!(
                why.contains("rule `stdio.exit.error-text` is a profile-tier promise of yoagent's documentation, not of the"),
                "{why}"
            );
        }
        assert!(held_to("nobody", &sent_first)
            .unwrap_err()
            .contains("unknown profile"));
    }
}
