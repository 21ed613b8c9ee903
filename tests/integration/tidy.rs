//! The suite's invariants, as tests.

use super::support::*;
use mcp_conformance::rules::{self, RuleKind, COVERED_GROUPS};
use mcp_mock_servers::script::{AuthSettings, Step};
use std::collections::BTreeSet;

/// Rules of a covered group that wait for a transport not built yet, with the reason.
const NOT_YET_COVERABLE: &[(&str, &str)] = &[];

#[test]
fn every_rule_of_a_covered_group_has_a_scenario() {
    let scenarios = all_scenarios();
    let covered: BTreeSet<&str> = scenarios
        .iter()
        .flat_map(|s| s.scenario.rules.iter().map(String::as_str))
        .collect();
    let missing: Vec<&str> = rules::all()
        .iter()
        .filter(|r| r.kind == RuleKind::Client && COVERED_GROUPS.contains(&r.group()))
        .map(|r| r.id.as_str())
        .filter(|id| !covered.contains(id) && !NOT_YET_COVERABLE.iter().any(|(n, _)| n == id))
        .collect();
    assert!(missing.is_empty(), "rules without a scenario: {missing:?}");
}

#[test]
fn every_misbehaviour_is_used_by_some_scenario() {
    let mut used = BTreeSet::new();
    for s in all_scenarios() {
        let server = &s.scenario.server;
        for step in server.steps.iter().chain(server.relaunch.iter().flatten()) {
            used.insert(step_name(step));
        }
    }
    let every = [
        "handshake",
        "expect",
        "reply",
        "notify",
        "request",
        "banner",
        "long_line",
        "stderr",
        "stderr_flood",
        "stall",
        "crash",
        "exit",
        "ignore_stdin_close",
        "await_stdin_close",
        "spawn_child",
        "background",
        "close_stdout",
        "stop_reading",
        "respond",
        "redirect",
        "hang",
        "disconnect",
        "open_sse",
        "write",
        "close_stream",
        "expire_session",
        "endpoint",
        "refuse",
        "discover",
    ];
    let unused: Vec<&str> = every
        .iter()
        .copied()
        .filter(|name| !used.contains(name))
        .collect();
    assert!(
        unused.is_empty(),
        "misbehaviours no scenario uses: {unused:?}"
    );
}

#[test]
fn every_knob_of_the_authorization_side_is_used_by_some_scenario_or_validator_server() {
    // A knob is used where a scenario sets it to something else than its default.
    let default: serde_json::Value =
        serde_json::to_value(serde_json::from_str::<AuthSettings>("{}").expect("defaults"))
            .expect("serializes");
    let mut used = BTreeSet::new();
    // The scenarios' scripts, and the validator's scripted servers behind authorization.
    let mut scripts: Vec<AuthSettings> = all_scenarios()
        .into_iter()
        .filter_map(|s| s.scenario.server.auth)
        .collect();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for folder in [
        "tests/validate/broken-http",
        "tests/validate/correct-http",
        "tests/validate/broken-auth-tokens",
        "tests/validate/correct-auth-tokens",
        "tests/validate/broken-authorization-server",
        "tests/validate/correct-authorization-server",
    ] {
        for entry in std::fs::read_dir(root.join(folder))
            .expect("the folder")
            .flatten()
        {
            let script = mcp_mock_servers::load::load_script(&entry.path()).expect("a script");
            scripts.extend(script.auth);
        }
    }
    for auth in &scripts {
        let value = serde_json::to_value(auth).expect("serializes");
        for (key, v) in value.as_object().into_iter().flatten() {
            if default.get(key) != Some(v) {
                used.insert(key.clone());
            }
        }
    }
    // Values, not faults: the credentials the mock issues.
    let values = ["code", "access_token"];
    let every = serde_json::to_value(AuthSettings {
        refresh_token: Some(String::new()),
        client_secret: Some(String::new()),
        client_jwk: Some(mcp_mock_servers::script::Jwk {
            kty: String::new(),
            crv: String::new(),
            x: String::new(),
            y: String::new(),
        }),
        challenge_scope: Some(String::new()),
        scopes_supported: Some(Vec::new()),
        required_scope: Some(String::new()),
        wrong_issuer: true,
        wrong_state: true,
        token_auth_methods: Vec::new(),
        iss: mcp_mock_servers::script::IssMode::Wrong,
        no_pkce_methods: true,
        resource_optional: true,
        token_error_echoes: true,
        prm_resource: Some(String::new()),
        any_token_served: true,
        query_token_served: true,
        audience_unchecked_token: Some(String::new()),
        scopeless_token: Some(String::new()),
        insufficient_scope_unnamed: true,
        issuer_path: "/x".into(),
        ..serde_json::from_str("{}").expect("defaults")
    })
    .expect("serializes");
    let unused: Vec<&String> = every
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .filter(|k| !values.contains(&k.as_str()) && !used.contains(*k))
        .collect();
    assert!(
        unused.is_empty(),
        "knobs of [server.auth] no scenario uses: {unused:?}"
    );
}

/// The step's name as scenarios spell it (its serde tag).
fn step_name(step: &Step) -> &'static str {
    let value = serde_json::to_value(step).expect("a step serializes");
    let name = value
        .as_object()
        .and_then(|o| o.keys().next())
        .cloned()
        .unwrap_or_default();
    Box::leak(name.into_boxed_str())
}

#[test]
fn there_are_at_least_45_scenarios_and_each_names_only_known_rules() {
    let scenarios = all_scenarios();
    assert!(scenarios.len() >= 45, "only {} scenarios", scenarios.len());
    for s in &scenarios {
        for rule in &s.scenario.rules {
            assert!(
                rules::find(rule).is_some(),
                "{} names unknown rule {rule}",
                s.name
            );
        }
    }
}

/// A scenario with an authorization server names the flow's redaction rule, so that a
/// credential of the flow found in the client's output counts against that rule alone and a
/// known leak never hides a failure of the rule the scenario is about.
#[test]
fn every_scenario_with_an_authorization_server_names_the_flow_redaction_rule() {
    for s in all_scenarios() {
        if s.scenario.server.auth.is_none() {
            continue;
        }
        let named = |rule: &str| s.scenario.rules.iter().any(|r| r == rule);
        assert!(
            named("auth.oauth.credentials-redacted") || named("redaction.credentials"),
            "{} scripts an authorization server but names neither \
             auth.oauth.credentials-redacted nor (at 2025-03-26) redaction.credentials",
            s.name
        );
    }
}

#[test]
fn every_snapshot_belongs_to_a_scenario_and_every_scenario_has_one() {
    let names: BTreeSet<String> = all_scenarios().into_iter().map(|s| s.name).collect();
    let mut snapshots = BTreeSet::new();
    let root = snapshots_root();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "snap") {
                let name = path
                    .strip_prefix(&root)
                    .unwrap()
                    .with_extension("")
                    .to_string_lossy()
                    .replace('\\', "/");
                snapshots.insert(name);
            }
        }
    }
    let stale: Vec<&String> = snapshots.difference(&names).collect();
    assert!(stale.is_empty(), "snapshots without a scenario: {stale:?}");
    let missing: Vec<&String> = names.difference(&snapshots).collect();
    assert!(
        missing.is_empty(),
        "scenarios without a snapshot: {missing:?}"
    );
}

/// insta compares a snapshot's body only: a header left from an older scenario text would
/// show a reviewer a requirement the scenario no longer states.
#[test]
fn every_snapshot_header_quotes_its_scenarios_requirement() {
    let mut stale = Vec::new();
    for s in all_scenarios() {
        let path = snapshots_root().join(format!("{}.snap", s.name));
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let header = text
            .strip_prefix("---\n")
            .and_then(|t| t.split("\n---\n").next())
            .unwrap_or_default();
        let field = |key: &str| {
            header
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|raw| match raw.starts_with('"') {
                    true => serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_string()),
                    false => raw.to_string(),
                })
        };
        if field("description: ").as_deref() != Some(s.scenario.requirement.as_str()) {
            stale.push(format!("{}: description", s.name));
        }
        if field("input_file: ") != Some(format!("scenarios/{}.toml", s.name)) {
            stale.push(format!("{}: input_file", s.name));
        }
    }
    assert!(stale.is_empty(), "snapshot headers that are not their scenario's (rewrite them: `INSTA_UPDATE=always INSTA_FORCE_UPDATE=1 cargo test --test scenarios -- NAME`): {stale:?}");
}

#[test]
fn the_checked_in_scenario_schema_is_fresh() {
    assert_schema_fresh(
        &scenarios_root().join("scenario.schema.json"),
        &mcp_conformance::scenario::json_schema(),
    );
}

#[test]
fn the_checked_in_driver_protocol_schema_is_fresh() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/driver.schema.json");
    assert_schema_fresh(
        &path,
        &mcp_conformance::cut::driver::protocol::json_schema(),
    );
}

fn assert_schema_fresh(path: &std::path::Path, fresh: &str) {
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(path, fresh).unwrap();
    }
    let checked_in = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        checked_in == fresh,
        "{} is stale: run `UPDATE_SCHEMA=1 cargo test --test integration schema` and commit it",
        path.display()
    );
}

#[test]
fn every_scenario_states_an_explicit_expectation() {
    for s in all_scenarios() {
        let e = &s.scenario.expect;
        let explicit = !e.steps.is_empty()
            || e.received.is_some()
            || !e.received_includes.is_empty()
            || !e.counts.is_empty()
            || !e.logs.is_empty()
            || !e.never_contains.is_empty()
            || e.processes_gone.is_some()
            || e.launches.is_some()
            || !e.http_requests.is_empty()
            || e.http_every_request.is_some()
            || !e.http_request_counts.is_empty()
            || !e.http_distinct_headers.is_empty();
        assert!(
            explicit,
            "{} states no expectation of its own in [expect]",
            s.name
        );
    }
}

/// The server check reference (`docs/src/reference/server-checks.md`) lists every server check
/// of the registry once, with its level: a check added without its row fails here.
#[test]
fn the_check_reference_tables_list_every_server_check_once_with_its_level() {
    let reference = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs/src/reference/server-checks.md"),
    )
    .unwrap();
    let mut listed: Vec<(String, String)> = reference
        .lines()
        .filter_map(|line| {
            let (id, rest) = line.strip_prefix("| `server.")?.split_once("` | ")?;
            Some((format!("server.{id}"), rest.split(" |").next()?.to_string()))
        })
        .collect();
    listed.sort();
    let mut registry: Vec<(String, String)> = rules::all()
        .iter()
        .filter(|r| r.kind == RuleKind::Server)
        .map(|r| (r.id.clone(), r.level.name().to_string()))
        .collect();
    registry.sort();
    assert_eq!(listed, registry);
}

/// A client bound marked `safety_only` only keeps the run short, so a client that cannot set
/// its bounds is judged all the same: never in a scenario whose rule is about a client bound.
#[test]
fn no_bound_under_test_is_marked_a_safety_bound() {
    const BOUND_RULES: &[&str] = &[
        "lifecycle.handshake.bounded",
        "http.idle.bounded",
        "http.idle.reset-on-read",
        "timeouts.client.configurable",
        "timeouts.call.override",
        "tools.source.list-bounded",
    ];
    let mut marked = 0;
    let mut wrong = Vec::new();
    for s in all_scenarios() {
        if !s.scenario.client.timeouts.safety_only {
            continue;
        }
        marked += 1;
        for rule in &s.scenario.rules {
            if BOUND_RULES.contains(&rule.as_str()) {
                wrong.push(format!("{}: {rule}", s.name));
            }
        }
    }
    assert!(marked > 0, "no scenario marks its bounds safety_only");
    assert!(
        wrong.is_empty(),
        "scenarios whose bounds are under test, marked safety_only: {wrong:?}"
    );
}
