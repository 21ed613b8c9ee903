//! `mcp-mock-http --script FILE [--log FILE] [--state-dir DIR]`: the scripted HTTP(S) MCP
//! server, standalone; prints its URL.

fn main() -> std::process::ExitCode {
    mcp_mock_servers::http_main(std::env::args_os().skip(1).collect())
}
