//! The command line of `mcp-mock-stdio` (also `mcp-conformance mock-stdio`), and
//! [`stdio_main`], which both call.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

use crate::error::one_line;
use crate::load::load_script;
use crate::stdio::exit_code;
use crate::stdio::invocation::{prefix_of, Invocation};
use crate::stdio::launches::next_launch;
use crate::stdio::player::{End, Player};
use crate::stdio::resume::{self, PlayState};
use crate::wire_log::LogWriter;

/// The options of the scripted stdio server.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-mock-stdio",
    version,
    override_usage = "mcp-mock-stdio --script FILE [--log FILE] [--state-dir DIR]",
    about = "A scripted MCP server on stdin/stdout that misbehaves on purpose",
    after_help = "Exit codes: 0 script done and stdin closed, 2 bad arguments or script, \
                  3 a message did not match, 4 stdin closed before the script's end; \
                  `crash` and `exit` steps choose their own."
)]
pub struct StdioArgs {
    /// The script: TOML (a bare script, or a scenario file whose `[server]` table is used),
    /// or JSON when the name ends in `.json`.
    #[arg(long, value_name = "FILE", required_unless_present = "sleeper")]
    pub script: Option<PathBuf>,
    /// Append the wire log (JSON lines) to this file; without it, nothing is logged.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Where the launch counter lives (default: the log file's folder, else a folder under
    /// the system temp folder named after the script).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Internal: a background copy resumes the script at this step.
    #[arg(long, hide = true, value_name = "N", requires = "launch")]
    pub resume_at: Option<usize>,
    /// Internal: a background copy plays this launch (no new launch is counted).
    #[arg(long, hide = true, value_name = "N", requires = "resume_at")]
    pub launch: Option<u32>,
    /// Internal: the state a launcher handed to its background copy.
    #[arg(long, hide = true, value_name = "FILE", requires = "resume_at")]
    pub resume_state: Option<PathBuf>,
    /// Internal: the launcher's pid, which a background copy waits to see gone.
    #[arg(long, hide = true, value_name = "PID", requires = "resume_at")]
    pub launcher_pid: Option<u32>,
    /// Internal: sleep until killed (the descendant of `spawn_child`).
    #[arg(long, hide = true, exclusive = true)]
    pub sleeper: bool,
}

/// Runs the scripted stdio server with `args` (without the program name). Returns the exit
/// code; a script that lives on forever (`stall`, `ignore_stdin_close`, …) never returns.
pub fn stdio_main(args: Vec<OsString>) -> ExitCode {
    let prefix = prefix_of(&args);
    let cli: StdioArgs = match crate::args::parse("mcp-mock-stdio", args) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    if cli.sleeper {
        sleep_forever();
    }
    match run(cli, prefix) {
        Ok(End::Exit(code)) => ExitCode::from(code as u8),
        Ok(End::Forever) => sleep_forever(),
        Err(message) => {
            crate::args::report_error("mcp-mock-stdio", &message);
            ExitCode::from(exit_code::USAGE)
        }
    }
}

fn run(cli: StdioArgs, prefix: Vec<OsString>) -> Result<End, String> {
    let script_path = cli.script.unwrap_or_default();
    let script = load_script(&script_path).map_err(|e| one_line(&e))?;
    if script.transport.is_http() {
        return Err(format!(
            "{}: the script's transport is not stdio: use the HTTP mock (mcp-mock-http)",
            script_path.display()
        ));
    }
    let log = match &cli.log {
        Some(path) => LogWriter::open(path)
            .map_err(|e| format!("cannot open wire log {}: {e}", path.display()))?,
        None => LogWriter::none(),
    };
    let state_dir = cli
        .state_dir
        .clone()
        .unwrap_or_else(|| default_state_dir(cli.log.as_deref(), &script_path));
    let (launch, start) = match (cli.launch, cli.resume_at) {
        (Some(launch), Some(start)) => (launch, start),
        _ => {
            let launch = next_launch(&state_dir)
                .map_err(|e| format!("cannot count launches in {}: {e}", state_dir.display()))?;
            (launch, 0)
        }
    };
    if let Some(launcher) = cli.launcher_pid {
        await_launcher_exit(launcher);
    }
    let state = match &cli.resume_state {
        Some(path) => resume::take(path)
            .map_err(|e| format!("cannot read the resume state {}: {e}", path.display()))?,
        None => PlayState::default(),
    };
    let invocation = Invocation {
        prefix,
        script: script_path,
        log: cli.log,
        state_dir,
    };
    Ok(Player::new(&script, launch, &invocation, log, state).play(start))
}

/// A background copy starts once its launcher has gone, so the wire log reads in one
/// order every run: the launcher's hand-over and exit, then the copy. Bounded: a launcher
/// that lingers past it does not hold the copy back for long.
fn await_launcher_exit(launcher: u32) {
    // The launcher is told by pid, not taken from the first getppid: a launcher gone before
    // the copy's first look would otherwise hold it for the whole bound.
    let Ok(launcher) = libc::pid_t::try_from(launcher) else {
        return;
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    // SAFETY: getppid has no preconditions.
    while unsafe { libc::getppid() } == launcher && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// The log file's folder, else `<temp>/mcp-mock-stdio/<hash of the script's path>`.
fn default_state_dir(log: Option<&Path>, script: &Path) -> PathBuf {
    if let Some(log) = log {
        return match log.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            _ => PathBuf::from("."),
        };
    }
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::fs::canonicalize(script)
        .unwrap_or_else(|_| script.to_owned())
        .hash(&mut hasher);
    std::env::temp_dir()
        .join("mcp-mock-stdio")
        .join(format!("{:016x}", hasher.finish()))
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        StdioArgs::command().debug_assert();
    }
}
