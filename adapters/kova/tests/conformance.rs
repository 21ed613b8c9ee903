//! The scenarios of the kova profile against kova-sdk's MCP client, its known failures in
//! baseline.toml.

fn main() -> std::process::ExitCode {
    mcp_conformance::harness::main(mcp_adapter_kova::Adapter::default, "baseline.toml")
}
