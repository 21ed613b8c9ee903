//! The validator's modules stay layered: no import cycle among them, nothing below the plan
//! imports it, and no check area imports another.
//!
//! The graph is read from the source text: every `crate::…`, `super::…` and `self::…` path
//! (use trees with braces included) and every path through a child module by its bare name,
//! outside comments. A path counts as an import of the deepest module it names (a file of
//! `src/`); `mod` declarations do not count (a parent declares its children, it need not use
//! them).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module by its path from the crate root (`["checks", "plan", "http"]`; the root is `[]`).
type Module = Vec<String>;

/// Who imports whom, with the file of each module.
struct Graph {
    files: BTreeMap<Module, String>,
    imports: BTreeMap<Module, BTreeSet<Module>>,
}

/// The plan: which checks run, in which order, on which sessions.
const PLAN: &[&str] = &["checks", "plan"];
/// The entry that turns the options into a plan and runs it: the only modules outside the
/// plan that import it.
const ENTRY: &[&[&str]] = &[&["job"], &["run"]];
/// What every check area may import besides the modules outside `checks`: the session API
/// and the judgements areas share.
const BELOW_AREAS: &[&[&str]] = &[&["checks", "session"], &["checks", "common"]];

fn module(parts: &[&str]) -> Module {
    parts.iter().map(|p| p.to_string()).collect()
}

fn within(module: &[String], prefix: &[&str]) -> bool {
    module.len() >= prefix.len() && module.iter().zip(prefix).all(|(a, b)| a == b)
}

fn name(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
    }
}

/// Every `.rs` file under `dir`, as (module, path relative to the crate).
fn source_files(root: &Path, dir: &Path, out: &mut Vec<(Module, PathBuf)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            source_files(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).unwrap().with_extension("");
            let mut parts: Module = relative
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                parts.pop();
            }
            out.push((parts, path));
        }
    }
}

/// The use tree at the start of `code`: each full path it names (`a::{b, c::d}` names `a::b`
/// and `a::c::d`), and how many bytes it took.
fn use_tree(code: &str) -> (Vec<Vec<String>>, usize) {
    let bytes = code.as_bytes();
    let mut at = 0;
    let mut path = Vec::new();
    loop {
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        if at == start {
            return (vec![path], at);
        }
        path.push(code[start..at].to_string());
        if !code[at..].starts_with("::") {
            return (vec![path], at);
        }
        at += 2;
        if code[at..].starts_with('{') {
            at += 1;
            let mut paths = Vec::new();
            loop {
                while at < bytes.len() && matches!(bytes[at], b' ' | b',' | b'\n') {
                    at += 1;
                }
                if at >= bytes.len() || bytes[at] == b'}' {
                    return (paths, at + 1);
                }
                let (inner, used) = use_tree(&code[at..]);
                if used == 0 {
                    return (paths, at);
                }
                paths.extend(inner.into_iter().map(|tail| [path.clone(), tail].concat()));
                at += used;
            }
        }
        if code[at..].starts_with('*') {
            return (vec![path], at + 1);
        }
    }
}

/// The deepest module of `known` that `path` names.
fn resolve(path: &[String], known: &BTreeMap<Module, String>) -> Module {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|prefix| known.contains_key(prefix))
        .unwrap_or_default()
}

/// Whether `line` is a `use` declaration (whose tree may go on over several lines).
fn is_use(line: &str) -> bool {
    let line = line.trim_start();
    ["use ", "pub use ", "pub(crate) use "]
        .iter()
        .any(|start| line.starts_with(start))
}

/// Whether `at` in `code` starts a path rather than continuing one (`a::b`, `x.b`).
fn starts_path(code: &str, at: usize) -> bool {
    at == 0 || {
        let before = code.as_bytes()[at - 1];
        !(before.is_ascii_alphanumeric() || before == b'_' || before == b':')
    }
}

/// The modules `module` (its source `text`) imports.
fn imports_of(module: &Module, text: &str, known: &BTreeMap<Module, String>) -> BTreeSet<Module> {
    // Each line with the module it is in (inline `mod name {` blocks, closed by a `}` at the
    // same indent as rustfmt writes them); comments left out.
    let mut inline: Vec<(usize, String)> = Vec::new();
    let mut lines: Vec<(Module, String)> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if inline
            .last()
            .is_some_and(|(at, _)| *at == indent && trimmed == "}")
        {
            inline.pop();
            continue;
        }
        let declaration = trimmed
            .trim_start_matches("pub ")
            .trim_start_matches("pub(crate) ");
        if let Some(rest) = declaration.strip_prefix("mod ") {
            if let Some(inner) = rest.strip_suffix(" {") {
                inline.push((indent, inner.to_string()));
                continue;
            }
        }
        if trimmed.starts_with("//") {
            continue;
        }
        let here = [
            module.clone(),
            inline.iter().map(|(_, n)| n.clone()).collect(),
        ]
        .concat();
        match lines.last_mut() {
            // A use tree with braces open on an earlier line goes on.
            Some((_, open))
                if is_use(open) && open.matches('{').count() > open.matches('}').count() =>
            {
                open.push(' ');
                open.push_str(trimmed);
            }
            _ => lines.push((here, line.to_string())),
        }
    }
    let mut out = BTreeSet::new();
    for (here, code) in &lines {
        for (at, _) in code.match_indices("::") {
            let start = code[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            if start == at || !starts_path(code, start) {
                continue;
            }
            let (paths, _) = use_tree(&code[start..]);
            for path in paths {
                let target = match path[0].as_str() {
                    "crate" => resolve(&path[1..], known),
                    "self" => resolve(&[here.clone(), path[1..].to_vec()].concat(), known),
                    "super" => {
                        let ups = path.iter().take_while(|p| *p == "super").count();
                        let base = &here[..here.len().saturating_sub(ups)];
                        resolve(&[base.to_vec(), path[ups..].to_vec()].concat(), known)
                    }
                    // A child module by its bare name.
                    first => {
                        let child = [module.clone(), vec![first.to_string()]].concat();
                        if !known.contains_key(&child) {
                            continue;
                        }
                        resolve(&[module.clone(), path].concat(), known)
                    }
                };
                if &target != module {
                    out.insert(target);
                }
            }
        }
    }
    out
}

impl Graph {
    /// The graph of the crate whose sources are `(module, file name, text)`.
    fn of(sources: &[(Module, String, String)]) -> Graph {
        let files: BTreeMap<Module, String> = sources
            .iter()
            .map(|(module, file, _)| (module.clone(), file.clone()))
            .collect();
        let imports = sources
            .iter()
            .map(|(module, _, text)| (module.clone(), imports_of(module, text, &files)))
            .collect();
        Graph { files, imports }
    }

    /// The graph of `validator/src`.
    fn of_the_validator() -> Graph {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let src = crate_dir.join("src");
        let mut found = Vec::new();
        source_files(&src, &src, &mut found);
        assert!(found.len() > 40, "only {} source files found", found.len());
        let sources: Vec<_> = found
            .into_iter()
            .map(|(module, path)| {
                let text = std::fs::read_to_string(&path).unwrap();
                let file = Path::new("validator")
                    .join(path.strip_prefix(crate_dir).unwrap())
                    .display()
                    .to_string();
                (module, file, text)
            })
            .collect();
        Graph::of(&sources)
    }

    fn file(&self, module: &[String]) -> &str {
        self.files.get(module).map_or("?", String::as_str)
    }

    /// One import cycle, as its files in order (the first again at the end), if there is one.
    fn cycle(&self) -> Option<Vec<String>> {
        #[derive(Clone, Copy, PartialEq)]
        enum Seen {
            Open,
            Done,
        }
        fn visit(
            graph: &Graph,
            at: &Module,
            seen: &mut BTreeMap<Module, Seen>,
            path: &mut Vec<Module>,
        ) -> Option<Vec<String>> {
            seen.insert(at.clone(), Seen::Open);
            path.push(at.clone());
            for next in graph.imports.get(at).into_iter().flatten() {
                match seen.get(next) {
                    Some(Seen::Open) => {
                        let from = path.iter().position(|m| m == next).unwrap();
                        let mut cycle: Vec<String> = path[from..]
                            .iter()
                            .map(|m| graph.file(m).to_string())
                            .collect();
                        cycle.push(graph.file(next).to_string());
                        return Some(cycle);
                    }
                    Some(Seen::Done) => {}
                    None => {
                        if let Some(cycle) = visit(graph, next, seen, path) {
                            return Some(cycle);
                        }
                    }
                }
            }
            path.pop();
            seen.insert(at.clone(), Seen::Done);
            None
        }
        let mut seen = BTreeMap::new();
        for module in self.files.keys() {
            if !seen.contains_key(module) {
                if let Some(cycle) = visit(self, module, &mut seen, &mut Vec::new()) {
                    return Some(cycle);
                }
            }
        }
        None
    }

    /// Each import of the plan from outside it and the entry: "file imports module".
    fn imports_of_the_plan(&self) -> Vec<String> {
        let mut wrong = Vec::new();
        for (from, targets) in &self.imports {
            let entry = ENTRY.iter().any(|e| from == &module(e));
            if within(from, PLAN) || entry {
                continue;
            }
            for target in targets.iter().filter(|t| within(t, PLAN)) {
                wrong.push(format!("{} imports {}", self.file(from), name(target)));
            }
        }
        wrong
    }

    /// Each import of a check area by another area, the session API or the shared
    /// judgements.
    fn imports_between_areas(&self) -> Vec<String> {
        let below = |m: &Module| BELOW_AREAS.iter().any(|b| within(m, b));
        let is_area =
            |m: &Module| m.len() == 2 && m[0] == "checks" && !within(m, PLAN) && !below(m);
        let mut wrong = Vec::new();
        for (from, targets) in &self.imports {
            if !is_area(from) && !below(from) {
                continue;
            }
            for target in targets.iter().filter(|t| is_area(t)) {
                wrong.push(format!("{} imports {}", self.file(from), name(target)));
            }
        }
        wrong
    }
}

#[test]
fn no_module_of_the_validator_is_in_an_import_cycle() {
    let graph = Graph::of_the_validator();
    if let Some(cycle) = graph.cycle() {
        panic!("an import cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn only_the_entry_imports_the_plan() {
    let graph = Graph::of_the_validator();
    let wrong = graph.imports_of_the_plan();
    assert!(
        wrong.is_empty(),
        "only the plan's own files and the entry (job.rs, run.rs) may import the plan:\n{}",
        wrong.join("\n")
    );
    // The entry does import it (else the rule above would say nothing).
    assert!(graph.imports[&module(&["run"])]
        .iter()
        .any(|m| within(m, PLAN)));
}

#[test]
fn a_check_area_imports_only_the_session_api_and_the_shared_judgements() {
    let graph = Graph::of_the_validator();
    let wrong = graph.imports_between_areas();
    assert!(
        wrong.is_empty(),
        "a check area imports no other area (nor do the session API and the shared judgements):\n{}",
        wrong.join("\n")
    );
}

/// The reader on a made-up crate: a cycle through `super::` and a brace group, an upward
/// import of the plan, an import between areas, all named by file.
#[test]
fn the_reader_finds_cycles_and_upward_imports_in_a_made_up_crate() {
    let source = |parts: &[&str], text: &str| {
        let file = match parts {
            [] => "src/lib.rs".to_string(),
            _ => format!("src/{}.rs", parts.join("/")),
        };
        (module(parts), file, text.to_string())
    };
    let sources = vec![
        source(&[], "pub mod checks;\npub mod run;\npub mod log;\n"),
        source(&["log"], "use crate::outcome::excerpt;\n"),
        source(&["outcome"], "// crate::log in a comment does not count\n"),
        source(
            &["checks"],
            "pub mod plan;\npub mod tools;\npub mod ping;\npub mod session;\n",
        ),
        source(
            &["checks", "session"],
            "use crate::{log::SharedLog, outcome};\n",
        ),
        source(&["checks", "plan"], "use super::{session::{self, Rpc}};\n"),
        source(
            &["checks", "tools"],
            "use super::session::Rpc;\nfn f() { super::ping::ping(); }\n",
        ),
        source(
            &["checks", "ping"],
            "#[cfg(test)]\nmod tests {\n    use super::super::plan::ALL;\n}\n",
        ),
        source(&["run"], "use crate::checks::plan;\n"),
    ];
    let graph = Graph::of(&sources);
    assert_eq!(graph.cycle(), None);
    assert_eq!(
        graph.imports_of_the_plan(),
        ["src/checks/ping.rs imports checks::plan"]
    );
    assert_eq!(
        graph.imports_between_areas(),
        ["src/checks/tools.rs imports checks::ping"]
    );

    let mut cyclic = sources.clone();
    cyclic[2] = source(&["outcome"], "fn f() { crate::log::cut(); }\n");
    let cycle = Graph::of(&cyclic)
        .cycle()
        .expect("log and outcome import each other");
    assert_eq!(cycle, ["src/log.rs", "src/outcome.rs", "src/log.rs"]);
}
