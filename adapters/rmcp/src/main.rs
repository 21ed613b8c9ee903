//! rmcp's client served as a driver (the matrix's `rmcp` row starts it once and resets it between scenarios).

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(mcp_conformance::cut::driver::serve::serve(
        mcp_adapter_rmcp::Adapter::default,
    ))
}
