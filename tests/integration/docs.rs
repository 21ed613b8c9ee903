//! The book (`docs/`) and the README: generated references fresh, links that resolve, every
//! page in the summary, a short front page.

use super::docs_pages::{self, UPDATE_COMMAND};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const README_MAX_LINES: usize = 250;

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn docs_src() -> PathBuf {
    repo_root().join("docs/src")
}

/// Compares a generated page with its checked-in copy (rewriting it first under
/// `UPDATE_DOCS`).
fn assert_page_fresh(relative: &str, fresh: &str) {
    let path = docs_src().join(relative);
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, fresh).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == fresh,
        "{} is stale: run `{UPDATE_COMMAND}` and commit it",
        path.display()
    );
}

#[test]
fn the_rule_reference_is_fresh() {
    assert_page_fresh("reference/rules.md", &docs_pages::rules_page());
}

#[test]
fn the_proof_table_is_fresh() {
    assert_page_fresh("reference/proofs.md", &docs_pages::proofs_page());
}

#[test]
fn the_scenario_format_reference_is_fresh() {
    let page = docs_pages::schema_page(
        "Scenario format",
        "the serde types of a scenario file (`mcp_conformance::scenario::json_schema`, checked in as `scenarios/scenario.schema.json`)",
        "A scenario is one TOML file under `scenarios/<area>/`; unknown fields are refused. A \
         step is a table with one key naming it (`{ connect = {} }`). See \
         [Write a scenario](../guide/write-a-scenario.md) for a whole file.",
        &mcp_conformance::scenario::json_schema(),
    );
    assert_page_fresh("reference/scenario-format.md", &page);
}

#[test]
fn the_driver_protocol_reference_is_fresh() {
    let page = docs_pages::schema_page(
        "Driver protocol",
        "the serde types of the protocol (`mcp_conformance::cut::driver::protocol::json_schema`, checked in as `protocol/driver.schema.json`)",
        "JSON lines on the driver's stdin and stdout: the driver says hello, the runner sends \
         requests, the driver answers each by its `id`. See \
         [Test your own client](../guide/test-your-client.md#any-language-the-driver-protocol) \
         for an exchange.",
        &mcp_conformance::cut::driver::protocol::json_schema(),
    );
    assert_page_fresh("reference/driver-protocol.md", &page);
}

#[test]
fn the_command_line_reference_is_fresh() {
    assert_page_fresh("reference/cli.md", &docs_pages::cli_page());
}

#[test]
fn the_command_line_reference_lists_the_driver_subcommand() {
    let page = docs_pages::cli_page();
    assert!(
        page.contains("## `mcp-conformance driver`"),
        "`mcp-conformance --help` does not list `driver`, which the guide tells other-language authors to use"
    );
}

#[test]
fn the_readme_is_a_front_page_of_at_most_250_lines() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines (at most {README_MAX_LINES}): move the detail into docs/src"
    );
}

/// Every Markdown file of the book, relative to `docs/src`.
fn book_pages() -> BTreeSet<String> {
    let root = docs_src();
    let mut pages = BTreeSet::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let relative = path.strip_prefix(&root).unwrap();
                pages.insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    pages
}

#[test]
fn every_page_of_the_book_is_in_the_summary_and_every_entry_exists() {
    let summary = std::fs::read_to_string(docs_src().join("SUMMARY.md")).unwrap();
    let entries: BTreeSet<String> = links(&summary).into_iter().collect();
    let pages = book_pages();
    let missing: Vec<&String> = entries.iter().filter(|e| !pages.contains(*e)).collect();
    assert!(
        missing.is_empty(),
        "SUMMARY.md entries without a page: {missing:?}"
    );
    let unlisted: Vec<&String> = pages
        .iter()
        .filter(|p| p.as_str() != "SUMMARY.md" && !entries.contains(*p))
        .collect();
    assert!(
        unlisted.is_empty(),
        "pages of docs/src not in SUMMARY.md: {unlisted:?}"
    );
}

/// The targets of the inline links of a Markdown text (`[text](target)`), fenced code left out.
fn links(markdown: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    targets
}

/// The anchors mdBook gives a page's headings: the text without code and emphasis marks,
/// lowercase, spaces as `-`, other punctuation dropped.
fn heading_anchors(markdown: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut anchors = BTreeSet::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let Some(heading) = line.strip_prefix('#').filter(|_| !fenced) else {
            continue;
        };
        let text = heading.trim_start_matches('#').trim();
        let anchor: String = text
            .chars()
            .filter_map(|c| match c {
                c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
                c if c.is_whitespace() => Some('-'),
                _ => None,
            })
            .collect();
        anchors.insert(anchor);
    }
    anchors
}

#[test]
fn every_relative_link_of_the_readme_and_the_book_resolves() {
    let mut files = vec![repo_root().join("README.md")];
    files.extend(book_pages().iter().map(|p| docs_src().join(p)));
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let resolved = match path.is_empty() {
                true => file.clone(),
                false => file.parent().unwrap().join(path),
            };
            let Ok(content) = std::fs::read_to_string(&resolved) else {
                if !resolved.exists() {
                    broken.push(format!("{}: {target}", file.display()));
                }
                continue;
            };
            let is_markdown = resolved.extension().is_some_and(|e| e == "md");
            if let Some(anchor) = anchor.filter(|_| is_markdown) {
                if !heading_anchors(&content).contains(anchor) {
                    broken.push(format!("{}: {target} (no such heading)", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "links that do not resolve: {broken:#?}");
}

/// The counts the front page and the introduction state, from the registry and the scenarios
/// themselves: a rule or a scenario added without them fails here.
#[test]
fn the_stated_counts_are_the_registry_and_the_scenarios() {
    let rules = mcp_conformance::rules::all();
    let client = rules
        .iter()
        .filter(|r| r.kind == mcp_conformance::rules::RuleKind::Client)
        .count();
    let scenarios = super::support::all_scenarios();
    let strict = scenarios
        .iter()
        .filter(|s| {
            s.scenario.profiles.is_empty() || s.scenario.profiles.iter().any(|p| p == "strict")
        })
        .count();
    let phrases = [
        format!(
            "holds {} rules: {client} client rules and {} server checks.",
            rules.len(),
            rules.len() - client
        ),
        format!("{} scenario files cover every client rule", scenarios.len()),
        format!("on the {strict} scenarios of that profile;"),
        format!("the other {} files belong only", scenarios.len() - strict),
    ];
    for page in ["README.md", "docs/src/introduction.md"] {
        let text = std::fs::read_to_string(repo_root().join(page)).unwrap();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for phrase in &phrases {
            assert!(
                text.contains(phrase.as_str()),
                "{page} does not say {phrase:?}"
            );
        }
    }
}
