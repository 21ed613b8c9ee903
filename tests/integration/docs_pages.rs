//! The generated pages of the book (`docs/src/reference/`), each built from its single source:
//! the rule registry, the JSON schemas, the command line's own help.

use super::support::*;
use mcp_conformance::rules::{self, Rule, RuleKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The command that rewrites every generated page; stale pages name it.
pub const UPDATE_COMMAND: &str = "UPDATE_DOCS=1 cargo test --test integration docs";

fn generated_notice(source: &str) -> String {
    format!("Generated from {source} by `tests/integration/docs_pages.rs`: do not edit by hand; `{UPDATE_COMMAND}` rewrites it.\n")
}

/// `reference/proofs.md`: the rule × proof table — for each client rule, the broken clients
/// that make its scenarios fail, or that none does yet.
pub fn proofs_page() -> String {
    use super::proofs::{all_proofs, BrokenBy, NOT_YET_PROVEN};
    let client: Vec<&Rule> = rules::all()
        .iter()
        .filter(|r| r.kind == RuleKind::Client)
        .collect();
    let proven = client.len() - NOT_YET_PROVEN.len();
    let coverage = match NOT_YET_PROVEN.len() {
        0 => format!(
            "All {proven} client rules have a proof, and a test fails on a client rule without one."
        ),
        pending => format!(
            "{proven} of the {} client rules have a proof; the other {pending} are listed as not \
             yet proven, and a test fails on a client rule in neither list.",
            client.len()
        ),
    };
    let mut page = String::from("# Rule × proof table\n\n");
    page += &generated_notice("`tests/integration/proofs.rs`");
    let _ = write!(
        page,
        "\nA scenario that passes whatever the client does proves nothing, so each client rule is \
         shown checked by a broken client: a test-only `Breakage` switch of the reference client \
         (run by `cargo test --test integration broken_clients`, which requires the named \
         expectation to fail under each of the scenario's profiles) or a broken driver \
         (`tests/drivers/*.py`, run by `cargo test --test through_drivers broken`, which requires exactly its \
         rules' scenarios to fail). {coverage}\n\n\
         | Rule | Broken client | Scenario | Failing expectation |\n|---|---|---|---|\n",
    );
    for rule in &client {
        let proofs: Vec<_> = all_proofs()
            .filter(|p| p.rules.contains(&rule.id.as_str()))
            .collect();
        if proofs.is_empty() {
            let _ = writeln!(page, "| `{}` | not yet proven | | |", rule.id);
        }
        for proof in proofs {
            let by = match proof.by {
                BrokenBy::Switch(breakage) => format!("switch `{breakage:?}`"),
                BrokenBy::Driver(script) => format!("driver `{script}`"),
            };
            let what = match proof.what {
                "" => "its rules' failures".to_string(),
                what => format!("`{}`", what.replace('`', "")),
            };
            let _ = writeln!(
                page,
                "| `{}` | {by} | `{}` | {what} |",
                rule.id, proof.scenario
            );
        }
    }
    page
}

/// `reference/rules.md`: every rule of `validator/src/rules.toml`, grouped by area, with the scenarios
/// that name it.
pub fn rules_page() -> String {
    let mut named_by: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let scenarios = all_scenarios();
    for s in &scenarios {
        for rule in &s.scenario.rules {
            named_by
                .entry(rule.as_str())
                .or_default()
                .push(s.name.clone());
        }
    }
    let all = rules::all();
    let count = |kind| all.iter().filter(|r| r.kind == kind).count();
    let mut page = String::from("# Rules and checks\n\n");
    page += &generated_notice("`validator/src/rules.toml` and the scenarios that name each rule");
    let _ = write!(
        page,
        "\n{} client rules, checked by the scenarios, and {} server checks, run by \
         `mcp-conformance validate`. Level: `must` fails the run, `should` is a warning unless \
         the run is strict. Sources: S = the MCP specification, Y = yoagent's documentation, \
         K = kova's documentation, R = this project's own choice. Tier (client rules): whom the \
         rule binds — `specification` (the specification states it) and `robustness` (every \
         client should, though no sentence of the specification says it) bind every client, \
         whatever its profile; `profile` (a seed document's exact promise: its error texts, \
         defaults and API) binds only the profile whose source letter the rule carries. Revisions: `X` one revision, `X..` that one and every later one, `..X` that \
         one and every earlier one.\n",
        count(RuleKind::Client),
        count(RuleKind::Server),
    );
    let mut areas: Vec<&str> = Vec::new();
    for rule in all {
        if !areas.contains(&rule.group()) {
            areas.push(rule.group());
        }
    }
    for area in areas {
        let _ = write!(page, "\n## {area}\n");
        for rule in all.iter().filter(|r| r.group() == area) {
            page += &rule_entry(rule, named_by.get(rule.id.as_str()));
        }
    }
    page
}

fn rule_entry(rule: &Rule, scenarios: Option<&Vec<String>>) -> String {
    let kind = match rule.kind {
        RuleKind::Client => "client rule",
        RuleKind::Server => "server check",
    };
    let list = |items: &[String]| {
        items
            .iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sources = match rule.sources.is_empty() {
        true => "none named".to_string(),
        false => rule.sources.join(", "),
    };
    let revisions = match rule.revisions.is_empty() {
        true => "every revision".to_string(),
        false => list(&rule.revisions),
    };
    let scenarios = match (scenarios, rule.kind) {
        (Some(names), _) => list(names),
        (None, RuleKind::Server) => "none (a server check: run by `validate`)".to_string(),
        (None, RuleKind::Client) => "none".to_string(),
    };
    let tier = rule
        .tier
        .map_or(String::new(), |t| format!("; tier: {}", t.name()));
    format!(
        "\n### `{id}`\n\n- {kind}, {level}{tier}; sources: {sources}; revisions: {revisions}\n- scenarios: {scenarios}\n\n> {text}\n",
        id = rule.id,
        level = rule.level.name(),
        text = escape_html(&rule.text),
    )
}

/// A page describing every property of a JSON schema and of its definitions.
pub fn schema_page(title: &str, source: &str, intro: &str, schema: &str) -> String {
    let schema: Value = serde_json::from_str(schema).expect("the schema is JSON");
    let mut page = format!("# {title}\n\n{}\n{intro}\n", generated_notice(source));
    if let Some(description) = schema.get("description").and_then(Value::as_str) {
        let _ = write!(page, "\n## The top level\n\n{}\n", prose(description));
    }
    page += &shape(&schema);
    if let Some(messages) = schema.get("anyOf").and_then(Value::as_array) {
        page += "\nOne of:\n\n";
        for message in messages {
            let _ = writeln!(
                page,
                "- {}: {}",
                type_name(message),
                prose(description_of(message))
            );
        }
    }
    let definitions = schema.get("definitions").and_then(Value::as_object);
    for (name, definition) in definitions.into_iter().flatten() {
        let _ = write!(
            page,
            "\n## `{name}`\n\n{}\n",
            prose(description_of(definition))
        );
        page += &shape(definition);
    }
    page
}

/// A definition's properties and variants.
fn shape(definition: &Value) -> String {
    let mut text = properties(definition, "");
    if let Some(variants) = definition.get("oneOf").and_then(Value::as_array) {
        text += "\nOne of:\n\n";
        for variant in variants {
            text += &variant_entry(variant);
        }
    }
    text
}

fn variant_entry(variant: &Value) -> String {
    let description = prose(description_of(variant));
    if let Some(values) = variant.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
        return format!("- {}: {description}\n", values.join(", "));
    }
    let props = variant.get("properties").and_then(Value::as_object);
    let required = required_of(variant);
    // Internally tagged (`"step": "connect"`, the driver protocol) or externally tagged (a
    // table with one key naming the variant, the scenario files).
    let tag = props.into_iter().flatten().find_map(|(key, value)| {
        let only = value.get("enum")?.as_array().filter(|v| v.len() == 1)?;
        Some((key.clone(), only[0].clone()))
    });
    match (tag, props) {
        (Some((key, value)), _) => {
            let rest = properties(variant, &key);
            format!("- `\"{key}\": {value}`: {description}\n{}", indent(&rest))
        }
        (None, Some(props)) if props.len() == 1 && required.len() == 1 => {
            let (key, value) = props.iter().next().unwrap();
            format!("- `{key}` ({}): {description}\n", type_name(value))
        }
        _ => format!(
            "- {}: {description}\n{}",
            type_name(variant),
            indent(&properties(variant, ""))
        ),
    }
}

fn properties(definition: &Value, skip: &str) -> String {
    let Some(props) = definition.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let required = required_of(definition);
    let mut text = String::from("\n");
    for (name, property) in props.iter().filter(|(name, _)| name.as_str() != skip) {
        let need = match required.contains(&name.as_str()) {
            true => "required",
            false => "optional",
        };
        let default = match property.get("default") {
            Some(value) => format!(", default `{value}`"),
            None => String::new(),
        };
        let _ = writeln!(
            text,
            "- `{name}` ({}, {need}{default}): {}",
            type_name(property),
            prose(description_of(property))
        );
    }
    text
}

fn required_of(definition: &Value) -> Vec<&str> {
    definition
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

fn description_of(value: &Value) -> &str {
    value
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The type of a schema, in words, with definitions linked to their section.
fn type_name(schema: &Value) -> String {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let name = target.rsplit('/').next().unwrap_or(target);
        return format!("[`{name}`](#{})", name.to_lowercase());
    }
    for combinator in ["allOf", "anyOf", "oneOf"] {
        if let Some(items) = schema.get(combinator).and_then(Value::as_array) {
            let names: Vec<String> = items.iter().map(type_name).collect();
            return names.join(" or ");
        }
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
        return values.join(" or ");
    }
    let types: Vec<String> = match schema.get("type") {
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(many)) => many
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => return "any JSON value".to_string(),
    };
    let words: Vec<String> = types
        .iter()
        .map(|t| match t.as_str() {
            "array" => match schema.get("items") {
                Some(items) => format!("array of {}", type_name(items)),
                None => "array".to_string(),
            },
            "object" => match schema.get("additionalProperties") {
                Some(values) if values.is_object() => format!("map of {}", type_name(values)),
                _ => "object".to_string(),
            },
            other => other.to_string(),
        })
        .collect();
    words.join(" or ")
}

/// A description as Markdown prose: one paragraph, `<` and `>` outside code escaped (mdBook
/// would read `<tail>` as an HTML tag and hide it).
fn prose(text: &str) -> String {
    escape_html(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '<' if !in_code => out.push_str("&lt;"),
            '>' if !in_code => out.push_str("&gt;"),
            _ => out.push(c),
        }
    }
    out
}

fn indent(text: &str) -> String {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| format!("  {l}\n"))
        .collect()
}

/// `reference/cli.md`: the `--help` of the binary and of every subcommand it lists.
pub fn cli_page() -> String {
    let top = help(&["--help"]);
    let mut page = String::from("# Command line\n\n");
    page += &generated_notice("`mcp-conformance --help` and the `--help` of each subcommand");
    let _ = write!(page, "\n## `mcp-conformance`\n\n```text\n{top}```\n");
    for command in listed_subcommands(&top) {
        let text = help(&[&command, "--help"]);
        let _ = write!(
            page,
            "\n## `mcp-conformance {command}`\n\n```text\n{text}```\n"
        );
    }
    page
}

/// The subcommands the top-level help lists under `Commands:` (`help` aside).
fn listed_subcommands(top: &str) -> Vec<String> {
    top.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

fn help(args: &[&str]) -> String {
    let output = std::process::Command::new(conformance_bin())
        .args(args)
        .env("COLUMNS", "100")
        .env_remove("NO_COLOR")
        .output()
        .expect("the binary runs");
    assert!(output.status.success(), "`{args:?}` failed: {output:?}");
    let text = String::from_utf8(output.stdout).expect("the help is UTF-8");
    let trimmed: Vec<&str> = text.lines().map(str::trim_end).collect();
    format!("{}\n", trimmed.join("\n").trim_end())
}
