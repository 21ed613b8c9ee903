//! How many server processes `mcp-conformance validate` starts over stdio: on two cores a
//! Node server's start-up is what a run's wall time is made of, so the launches are an
//! invariant of their own (`cargo bench --bench validate` has the times). Each launch of
//! server-everything goes through a shell that first appends a line to a file.

use serde_json::Value;
use std::path::Path;

#[path = "validate/servers.rs"]
mod servers;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-conformance");

/// Validates server-everything with `args`; the launches counted and the report's
/// `(id, revision, status)` of every check.
fn launches(args: &[&str]) -> (usize, Vec<(String, String, String)>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let entry = servers::installed(root)
        .join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("launches");
    let json = dir.path().join("report.json");
    let script = format!(
        "echo launched >> '{}'; exec node '{}' stdio",
        count.display(),
        entry.display()
    );
    let baseline = root.join("tests/validate/baseline/server-everything.toml");
    let output = std::process::Command::new(BIN)
        .args(["validate", "--strict", "--timeout", "30s", "--baseline"])
        .arg(&baseline)
        .arg("--json")
        .arg(&json)
        .args(args)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(0), "{shown}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let checks = report["targets"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let field = |name: &str| c[name].as_str().unwrap_or_default().to_string();
            (field("id"), field("revision"), field("status"))
        })
        .collect();
    (
        std::fs::read_to_string(&count).unwrap().lines().count(),
        checks,
    )
}

fn status<'a>(checks: &'a [(String, String, String)], id: &str) -> &'a str {
    checks
        .iter()
        .find(|(i, _, _)| i == id)
        .map_or("absent", |(_, _, s)| s.as_str())
}

/// By default: the probe (which serves the feature checks after its queries), the
/// 2026-07-28 session's server (refused `server/discover`, then taken over by the negotiation
/// session offering 2024-11-05, which first sends a request before `initialize` and is
/// closed for exits-on-close once every offer has answered), three more negotiation sessions
/// (the one answered at the probe's revision taken over by the parse-error check) — five, not eight
/// (six before the negotiation sessions served before-initialize and exits-on-close: the
/// feature checks then had a server of their own).
#[test]
fn every_check_by_default_starts_five_servers() {
    let (count, checks) = launches(&[]);
    assert_eq!(count, 5, "{checks:?}");
    for id in [
        "server.lifecycle.before-initialize",
        "server.initialize.negotiates",
        "server.stdio.exits-on-close",
        "server.tools.call",
    ] {
        assert_eq!(status(&checks, id), "pass", "{id}: {checks:?}");
    }
    // The TypeScript SDK sends no -32700 (a baseline entry): the check ran, on a taken-over session.
    assert_eq!(
        status(&checks, "server.jsonrpc.parse-error"),
        "expected_failure",
        "{checks:?}"
    );
}

/// At one revision, no 2026-07-28 server to take over: the probe and four negotiation
/// sessions, which serve before-initialize, exits-on-close and the parse-error check (six
/// before: the feature checks had a server of their own).
#[test]
fn every_check_at_one_revision_starts_five_servers() {
    let (count, checks) = launches(&["--revision", "2025-11-25"]);
    assert_eq!(count, 5, "{checks:?}");
    for id in [
        "server.lifecycle.before-initialize",
        "server.initialize.negotiates",
        "server.stdio.exits-on-close",
        "server.tools.call",
    ] {
        assert_eq!(status(&checks, id), "pass", "{id}: {checks:?}");
    }
}

/// The negotiation and parse-error checks at one revision: the probe and four negotiation
/// sessions; the parse-error check needs none of its own.
#[test]
fn the_parse_error_check_takes_over_a_negotiation_session() {
    let args = [
        "--revision",
        "2025-11-25",
        "--only",
        "server.initialize.negotiates",
        "--only",
        "server.jsonrpc.parse-error",
    ];
    let (count, checks) = launches(&args);
    assert_eq!(count, 5, "{checks:?}");
    assert_eq!(
        status(&checks, "server.initialize.negotiates"),
        "pass",
        "{checks:?}"
    );
    assert_eq!(
        status(&checks, "server.jsonrpc.parse-error"),
        "expected_failure",
        "{checks:?}"
    );
}

/// Without the feature checks, the 2026-07-28 session's server is taken over by a
/// negotiation session: the probe and four negotiation sessions by default too.
#[test]
fn without_the_feature_checks_a_negotiation_session_takes_over_the_discover_server() {
    let args = [
        "--only",
        "server.initialize",
        "--only",
        "server.jsonrpc.parse-error",
        "--only",
        "server.discover",
    ];
    let (count, checks) = launches(&args);
    assert_eq!(count, 5, "{checks:?}");
    assert_eq!(
        status(&checks, "server.initialize.negotiates"),
        "pass",
        "{checks:?}"
    );
    assert_eq!(status(&checks, "server.discover"), "skip", "{checks:?}");
}

/// The negotiation session offered an unknown revision (answered at the probe's, it serves
/// the parse-error check and the declared side of server requests, whose wait for
/// server-everything's `roots/list`, 350 ms after `initialized`, would otherwise end the run)
/// starts beside the probe and the 2026-07-28 server, while both start-up slots are held:
/// before any server has written a byte and before the 2026-07-28 server's slot is freed
/// unanswered (`slot-freed`, after 2 s: node took 4.3 s to write a byte beside a busy loop on
/// each core); the other offers still wait for a start-up slot (`MCP_CONFORMANCE_TIMELINE`).
#[test]
fn the_unknown_offer_starts_beside_the_probe() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let entry = servers::installed(root)
        .join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("timeline");
    let output = std::process::Command::new(BIN)
        .env("MCP_CONFORMANCE_TIMELINE", &timeline)
        .args(["validate", "--timeout", "30s", "--", "node"])
        .arg(&entry)
        .arg("stdio")
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&timeline).unwrap();
    let events: Vec<(&str, String)> = text
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace().skip(2);
            Some((words.next()?, words.collect::<Vec<_>>().join(" ")))
        })
        .collect();
    let slots_held = events
        .iter()
        .position(|(e, _)| *e == "first-byte" || *e == "slot-freed")
        .expect("a server wrote");
    let mut spawned_before: Vec<&str> = events[..slots_held]
        .iter()
        .filter(|(e, _)| *e == "spawn")
        .map(|(_, s)| s.as_str())
        .collect();
    spawned_before.sort_unstable();
    let shown = format!("{text}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        spawned_before,
        ["2026-07-28", "negotiates 1999-01-01", "probe"],
        "{shown}"
    );
}
