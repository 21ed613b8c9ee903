//! `mcp-mock-stdio --script FILE [--log FILE] [--state-dir DIR]`: the scripted stdio MCP
//! server, standalone.

fn main() -> std::process::ExitCode {
    mcp_mock_servers::stdio_main(std::env::args_os().skip(1).collect())
}
