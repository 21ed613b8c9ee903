//! The matrix's rows for the official TypeScript and Python SDK clients: each driver
//! (adapters/typescript/, adapters/python/) over every scenario of its profile, held against
//! its baseline (a failure not listed, or a listed scenario that passes, fails the test), and
//! the basic scenarios (connect, list, call, close over each transport) passing.
//!
//! The SDKs are installed on first use by the validator's installer
//! (tests/validate/install-servers.sh, pinned versions, into target/validate-servers/).

#[path = "support/matrix_row.rs"]
mod matrix_row;
#[path = "validate/servers.rs"]
mod servers;
#[path = "integration/support.rs"]
#[allow(dead_code)]
mod support;

use matrix_row::matrix_row;
use mcp_conformance::matrix::run::{self, Mark};
use std::path::Path;
use std::time::Instant;
use support::*;

/// Connect, list, call and close over each transport the SDK clients speak: these pass, or
/// the driver or the harness is wrong.
const BASIC: &[&str] = &[
    "stdio/framing-one-line-per-message",
    "http/protocol-version-header",
    "legacy-sse/strict-handshake-then-call",
];

/// The fewest passes a working row has (37 and 43 today, of the strict scenarios whose every
/// rule the specification states).
const PASS_FLOOR: usize = 32;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn assert_row_holds_its_baseline(name: &str) {
    let (_one, rows, options) = matrix_row(name, true);
    servers::installed(root());
    let started = Instant::now();
    let matrix = run::run(&rows, &all_scenarios(), &launcher(), &options).expect("the row runs");
    eprintln!("{name}: {} s", started.elapsed().as_secs());
    let column = &matrix.columns[0];
    let wrong: Vec<String> = column
        .cells
        .iter()
        .filter(|cell| cell.mark.fails())
        .map(|cell| {
            let what = serde_json::to_string(&cell.result).unwrap_or_default();
            format!(
                "{} {:?}: {}",
                cell.scenario,
                cell.mark,
                what.chars().take(600).collect::<String>()
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{name}: {} cell(s) off the baseline:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    for basic in BASIC {
        let cell = column
            .cells
            .iter()
            .find(|c| c.scenario == *basic)
            .unwrap_or_else(|| panic!("{basic} exists"));
        assert_eq!(cell.mark, Mark::Pass, "{name}: {basic}");
    }
    // A strict third-party row is held to the specification's rules only (most rules are the
    // seed docs' promises): a floor that still catches a row that stopped working.
    let passes = column.cells.iter().filter(|c| c.mark == Mark::Pass).count();
    assert!(
        passes >= PASS_FLOOR,
        "{name}: {passes} passes, fewer than {PASS_FLOOR}"
    );
}

#[test]
fn the_typescript_sdk_client_holds_its_baseline() {
    assert_row_holds_its_baseline("typescript-sdk");
}

#[test]
fn the_python_sdk_client_holds_its_baseline() {
    assert_row_holds_its_baseline("python-sdk");
}
