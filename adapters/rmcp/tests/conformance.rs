//! The scenarios against rmcp's client, its known failures in baseline.toml.

fn main() -> std::process::ExitCode {
    mcp_conformance::harness::main(mcp_adapter_rmcp::Adapter::default, "baseline.toml")
}
