//! Meaning, not wording: a portable text check (`contains`, `lacks` outside
//! `[expect.reference]`) judges every client, so it may ask only for what the client was
//! given (the server's texts, its own configuration, the tools it called), for origins and
//! numbers, or for words a profile rule of the scenario quotes (a seed document's promised
//! text, held under that profile only). A client's own
//! phrasing belongs in `[expect.reference]`; a bound in `duration_ms`, a status in `numbers`.

use super::support::*;
use mcp_conformance::rules::{self, Tier};
use serde_json::Value;

/// Texts every scenario may name: the mock's origins and names, the markers the runner puts
/// where a port was (`outcome.normalize`), and the runner's own account of an interrupted
/// host (`src/cut/host.rs`).
const ALWAYS_GIVEN: &[&str] = &[
    r#""server":"exited on its own when its input closed""#,
    r#""server":"ended by a signal""#,
    "http://127.0.0.1:",
    "https://127.0.0.1:",
    "http://localhost:",
    "[PORT1]",
    "[PORT2]",
    "[PORT3]",
    "mcp-mock-stdio",
    "null",
];

/// Units a duration is spelled in: checked as a value (`duration_ms`), never as text.
const DURATION_UNITS: &[&str] = &[
    "ms",
    "s",
    "sec",
    "secs",
    "second",
    "seconds",
    "msec",
    "millisecond",
    "milliseconds",
];

/// The edges a fragment left between given texts may carry without saying anything.
const NEUTRAL: &[char] = &[
    ' ', ':', ';', ',', '.', '\'', '"', '(', ')', '=', '/', '?', '&', '-', '_', '#', '{', '}', '[',
    ']',
];

fn strings_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings_in(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                out.push(key.clone());
                strings_in(v, out);
            }
        }
        other => out.push(other.to_string()),
    }
}

/// What of `literal` is neither given nor a number: the fragments left between them.
fn unexplained(literal: &str, given: &[String]) -> Vec<String> {
    const CUT: char = '\u{0}';
    let mut rest = literal.to_string();
    for g in given {
        rest = cut_out(&rest, g, CUT);
    }
    let rest: String = rest
        .chars()
        .map(|c| if c.is_ascii_digit() { CUT } else { c })
        .collect();
    rest.split(CUT)
        .map(|f| f.trim_matches(NEUTRAL).to_string())
        .filter(|f| !f.is_empty())
        .collect()
}

/// `text` with every occurrence of `word` that stands as a word of its own (not `close`
/// inside `closed`) replaced by `mark`.
fn cut_out(text: &str, word: &str, mark: char) -> String {
    let edge = |c: Option<char>| !c.is_some_and(char::is_alphanumeric);
    let starts_word = !word.starts_with(char::is_alphanumeric);
    let ends_word = !word.ends_with(char::is_alphanumeric);
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back().or(out.chars().next_back());
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if (starts_word || edge(before)) && (ends_word || edge(after)) {
            out.push(mark);
        } else {
            out.push_str(word);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// `text` as the mock sends it when it names `${env?:NAME}` (`set` in its place), if it does.
fn env_set(text: &str) -> Option<String> {
    let (head, tail) = text.split_once("${env?:")?;
    let (_, rest) = tail.split_once('}')?;
    Some(format!(
        "{head}set{}",
        env_set(rest).unwrap_or_else(|| rest.to_string())
    ))
}

/// The pieces of `text` between its `${…}` placeholders.
fn around_placeholders(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some((head, tail)) = rest.split_once("${") {
        pieces.push(head.to_string());
        rest = tail.split_once('}').map_or("", |(_, after)| after);
    }
    pieces.push(rest.to_string());
    pieces.retain(|p| !p.trim().is_empty());
    pieces
}

/// The texts a rule quotes between backticks (`[redacted]`, `/mcp`) or double quotes (a seed
/// document's error text): what it demands in so many words.
fn quoted(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    for mark in ['`', '"'] {
        spans.extend(
            text.split(mark)
                .skip(1)
                .step_by(2)
                .filter(|q| !q.is_empty())
                .map(str::to_string),
        );
    }
    spans
}

#[test]
fn no_portable_text_check_names_a_clients_phrasing() {
    let mut refused = Vec::new();
    for s in all_scenarios() {
        let by_rule = &s.scenario.expect.by_rule;
        // What a profile rule quotes, it demands in its own table where it has one, else in
        // the scenario's common `[expect]`.
        let quotes_of = |id: &String| -> Vec<String> {
            rules::find(id)
                .filter(|r| r.tier == Some(Tier::Profile))
                .map(|r| quoted(&r.text))
                .unwrap_or_default()
        };
        let common_quotes: Vec<String> = s
            .scenario
            .rules
            .iter()
            .filter(|id| !by_rule.contains_key(*id))
            .flat_map(quotes_of)
            .collect();
        let mut given = Vec::new();
        for part in [
            serde_json::to_value(&s.scenario.server).unwrap(),
            serde_json::to_value(&s.scenario.client).unwrap(),
        ] {
            strings_in(&part, &mut given);
        }
        // The mock writes `set` for `${env?:NAME}` when NAME is set.
        let expanded: Vec<String> = given.iter().filter_map(|g| env_set(g)).collect();
        given.extend(expanded);
        // The mock fills `${path}`, `${primary}` and the like in: the text around them is
        // what it sends.
        let around: Vec<String> = given
            .iter()
            .filter(|g| g.contains("${"))
            .flat_map(|g| around_placeholders(g))
            .collect();
        given.extend(around);
        // The mock answers a call it has no script for with `called NAME`.
        let called: Vec<String> = given.iter().map(|g| format!("called {g}")).collect();
        given.extend(called);
        given.extend(ALWAYS_GIVEN.iter().map(|g| g.to_string()));
        given.retain(|g| g.chars().count() >= 3 || ALWAYS_GIVEN.contains(&g.as_str()));
        let tables = std::iter::once((common_quotes, &s.scenario.expect))
            .chain(by_rule.iter().map(|(id, table)| (quotes_of(id), table)));
        for (quotes, table) in tables {
            // What a profile rule of the scenario quotes, it demands of that profile's clients.
            let mut given = given.clone();
            given.extend(quotes.into_iter().filter(|q| q.chars().count() >= 3));
            given.sort_by_key(|g| std::cmp::Reverse(g.len()));
            for step in &table.steps {
                for (key, literal) in step
                    .contains
                    .iter()
                    .map(|l| ("contains", l))
                    .chain(step.lacks.iter().map(|l| ("lacks", l)))
                {
                    // A piece of a given or quoted text (a secret cut short, a marker inside a
                    // body) is given too; a unit after a number never is (`duration_ms`).
                    let said = |f: &String| {
                        !DURATION_UNITS.contains(&f.to_ascii_lowercase().as_str())
                            && given.iter().any(|g| g.contains(f.as_str()))
                    };
                    let unsaid: Vec<String> = if given.iter().any(|g| g.contains(literal.as_str()))
                    {
                        Vec::new()
                    } else {
                        unexplained(literal, &given)
                            .into_iter()
                            .filter(|f| !said(f))
                            .collect()
                    };
                    if !unsaid.is_empty() {
                        refused.push(format!(
                            "{} step {} {key} {literal:?}: {unsaid:?}",
                            s.name, step.step
                        ));
                    }
                }
            }
        }
    }
    assert!(
        refused.is_empty(),
        "portable text checks naming words neither given to the client nor demanded by a rule \
         of the scenario (move the phrasing to [expect.reference]; check a status with \
         `numbers`, a bound with `duration_ms`):\n{}",
        refused.join("\n")
    );
}

#[test]
fn the_wording_check_refuses_a_phrasing_and_allows_what_was_given() {
    let given = vec![
        "database connection lost".to_string(),
        "[PORT1]".to_string(),
    ];
    assert!(unexplained("500: database connection lost", &given).is_empty());
    assert!(unexplained("[PORT1]", &given).is_empty());
    assert_eq!(
        unexplained("timed out after 150ms", &given),
        ["timed out after", "ms"]
    );
    let close = vec!["close".to_string()];
    assert_eq!(unexplained("was closed", &close), ["was closed"]);
    assert_eq!(
        around_placeholders("failed: ${path} at ${primary}"),
        ["failed: ", " at "]
    );
    assert_eq!(
        quoted(r#"kept as `[redacted]`, `/mcp` stays; the error reads "Connection closed""#),
        ["[redacted]", "/mcp", "Connection closed"]
    );
}
