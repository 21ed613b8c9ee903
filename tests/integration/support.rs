//! Shared helpers of the integration tests.

use mcp_conformance::runner::MockLauncher;
use mcp_conformance::scenario::{self, LoadedScenario};
use std::path::{Path, PathBuf};

/// The bundled `scenarios/` folder.
pub fn scenarios_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// The bundled `snapshots/` folder.
pub fn snapshots_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots")
}

/// Every bundled scenario.
pub fn all_scenarios() -> Vec<LoadedScenario> {
    scenario::load_all(&scenarios_root()).expect("the bundled scenarios load")
}

/// One bundled scenario by name (`stdio/banner-before-initialize`).
pub fn scenario(name: &str) -> LoadedScenario {
    let root = scenarios_root();
    scenario::load(&root, &root.join(format!("{name}.toml"))).expect("the scenario loads")
}

/// The `mcp-conformance` binary.
pub fn conformance_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-conformance")
}

/// The scripted stdio server, served by the `mcp-conformance` binary.
pub fn launcher() -> MockLauncher {
    MockLauncher::conformance_binary(conformance_bin())
}
