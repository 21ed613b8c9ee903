//! rmcp's client served as a driver (the matrix's `rmcp` row starts it once and resets it between scenarios).

fn main() -> std::process::ExitCode {
    // rmcp's log (its `tracing` events) is the client's log: on stderr, which the runner
    // reads as the driver's log, at DEBUG as `mcp-conformance driver` writes the reference
    // client's, so the matrix sees what the in-process run (`harness::main`) captures.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(tracing_subscriber::filter::LevelFilter::DEBUG)
        .try_init();
    std::process::ExitCode::from(mcp_conformance::cut::driver::serve::serve(
        mcp_adapter_rmcp::Adapter::default,
    ))
}
