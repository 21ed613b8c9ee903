//! The host subprocess: the reference client living in a process of its own, so a scenario
//! can interrupt the host (SIGINT to its process group, as a Ctrl+C in its terminal does)
//! and see what reaches the server.
//!
//! `mcp-conformance host-client [--profile P] [--revision R] [--own-process-group] -- COMMAND [ARGS...]`
//! connects, prints `ready <server pid>`, then holds the connection until its stdin closes.

use mcp_refclient::{ClientConfig, McpClient, Profile, StdioServer};
use std::io::Write;
use tokio::io::AsyncReadExt;

/// The host's options.
#[derive(Debug, clap::Args)]
pub struct HostArgs {
    /// The client's profile.
    #[arg(long, default_value = "strict")]
    pub profile: String,
    /// The newest protocol revision the client offers (the client's default when absent).
    #[arg(long)]
    pub revision: Option<String>,
    /// Run the server in a process group of its own.
    #[arg(long)]
    pub own_process_group: bool,
    /// The server command and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// Runs the host; returns the process exit code.
pub fn host_main(args: HostArgs) -> u8 {
    let Some(profile) = Profile::from_name(&args.profile) else {
        eprintln!("error: unknown profile `{}`", args.profile);
        return crate::exit_code::USAGE;
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start a runtime: {e}");
            return crate::exit_code::HARNESS_FAULT;
        }
    };
    runtime.block_on(async move {
        let (command, rest) = args.command.split_first().expect("clap requires a command");
        let server = StdioServer {
            command: command.clone(),
            args: rest.to_vec(),
            own_process_group: args.own_process_group,
            ..Default::default()
        };
        let config = ClientConfig {
            revision: args.revision.clone(),
            ..ClientConfig::new(profile)
        };
        let client = match McpClient::connect_stdio(server, config).await {
            Ok(client) => client,
            Err(e) => {
                eprintln!("error: {}", e.full_text());
                return crate::exit_code::FAILURES;
            }
        };
        println!("ready {}", client.server_pid().unwrap_or(0));
        let _ = std::io::stdout().flush();
        let mut sink = Vec::new();
        let _ = tokio::io::stdin().read_to_end(&mut sink).await;
        let _ = client.close().await;
        crate::exit_code::SUCCESS
    })
}
