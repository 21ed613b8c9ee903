//! The scenarios of the yoagent profile against yoagent's MCP client, its known failures in
//! baseline.toml.

fn main() -> std::process::ExitCode {
    mcp_conformance::harness::main(mcp_adapter_yoagent::Adapter::default, "baseline.toml")
}
