//! What a client other than the reference one is held to: the rules its profile's promises
//! come from. A client claiming `strict` claims the MCP specification (rules sourced `S`);
//! `yoagent` and `kova` claim their own documentation (`Y`, `K`). The reference client's
//! profiles bundle more (strict is yoagent's behaviour plus Kova's token provider plus the
//! specification, and this project's choices, `R`): a scenario of such a rule judges the
//! reference client only, and is not applicable to another client, with the reason.

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

/// Whether every rule of `scenario` comes from the promises of `profile`, else why not.
pub fn held_to(profile: &str, scenario: &LoadedScenario) -> Result<(), String> {
    let Some(source) = source_of(profile) else {
        return Err(format!("unknown profile `{profile}`"));
    };
    for id in &scenario.scenario.rules {
        let sources: Vec<&str> = crate::rules::all()
            .iter()
            .find(|r| &r.id == id)
            .map(|r| r.sources.iter().map(String::as_str).collect())
            .unwrap_or_default();
        if !sources.contains(&source) {
            let from: Vec<&str> = sources.iter().map(|s| source_name(s)).collect();
            let from = if from.is_empty() {
                "no source".to_string()
            } else {
                from.join(" and ")
            };
            return Err(format!(
                "rule `{id}` is {from}'s, not {}'s: it holds the reference client only",
                source_name(source)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_strict_client_is_held_to_the_specifications_rules_and_a_seed_client_to_its_docs() {
        let root = crate::harness::bundled_scenarios();
        let sent_first =
            crate::scenario::load(&root, &root.join("lifecycle/initialize-sent-first.toml"))
                .unwrap();
        assert_eq!(held_to("strict", &sent_first), Ok(()));
        let exit_text =
            crate::scenario::load(&root, &root.join("stdio/exit-error-text.toml")).unwrap();
        let why = held_to("strict", &exit_text).unwrap_err();
        assert!(why.contains("rule `stdio.exit.error-text` is yoagent's documentation's, not the MCP specification's"), "{why}");
        assert_eq!(held_to("yoagent", &exit_text), Ok(()));
    }
}
