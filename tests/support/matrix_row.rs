//! One row of `adapters/matrix.toml` as the row tests (`tests/through_drivers/rows.rs`) run it.

use crate::support::conformance_bin;
use mcp_conformance::matrix::rows::{Placeholders, Rows};
use mcp_conformance::matrix::run::{self, Options};
use std::path::Path;
use std::time::Duration;

/// The row `name` of `adapters/matrix.toml`, alone, with the options the row tests run it
/// with (`reuse` on or off).
pub fn matrix_row(name: &str, reuse: bool) -> (Rows, Options) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rows_file = root.join("adapters/matrix.toml");
    let mut rows = Rows::load(&rows_file).expect("the rows load");
    rows.row.retain(|row| row.name == name);
    assert_eq!(rows.row.len(), 1, "adapters/matrix.toml has a row `{name}`");
    let options = Options {
        folder: run::folder_of(&rows_file),
        placeholders: Placeholders {
            program: conformance_bin().into(),
            target: root.join("target"),
        },
        build: false,
        build_timeout: run::DEFAULT_BUILD_TIMEOUT,
        // The runner's own step guard, as `matrix` has it; the hello gets more room: eight
        // interpreters start at once on a loaded 2-core machine, once per process when reused.
        step_guard: mcp_conformance::runner::RunOptions::default().step_guard,
        hello_within: Duration::from_secs(60),
        // As `matrix` on 2 cores: the runs mostly wait.
        workers: 8,
        reuse,
        every_scenario: Vec::new(),
    };
    (rows, options)
}
