//! The command line of `mcp-mock-http`, and [`http_main`], which it calls.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

use crate::error::one_line;
use crate::http::mock::HttpMock;
use crate::http::player::PlayEnd;
use crate::load::load_script;
use crate::stdio::exit_code;

/// The options of the scripted HTTP server.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-mock-http",
    version,
    override_usage = "mcp-mock-http --script FILE [--log FILE] [--state-dir DIR]",
    about = "A scripted MCP server over HTTP(S) that misbehaves on purpose",
    after_help = "Prints the URL on the first line of stdout, then `second: URL` (the second \
                  origin), `plain: URL` and `ca: FILE` (https). Serves until killed, or until \
                  the script ended and stdin closed. Exit codes: 0 script done, 2 bad \
                  arguments or script, 3 a request did not match; `crash` and `exit` steps \
                  choose their own."
)]
pub struct HttpArgs {
    /// The script: TOML (a bare script, or a scenario file whose `[server]` table is used),
    /// or JSON when the name ends in `.json`. Its transport is `http`, `https` or
    /// `legacy-sse`.
    #[arg(long, value_name = "FILE")]
    pub script: PathBuf,
    /// Append the wire log (JSON lines) to this file; without it, nothing is logged.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Where the https CA certificate is written (default: the log file's folder, else the
    /// system temp folder).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

/// Runs the scripted HTTP server with `args` (without the program name). Returns the exit
/// code.
pub fn http_main(args: Vec<OsString>) -> ExitCode {
    let cli: HttpArgs = match crate::args::parse("mcp-mock-http", args) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            crate::args::report_error("mcp-mock-http", &message);
            ExitCode::from(exit_code::USAGE)
        }
    }
}

fn run(cli: HttpArgs) -> Result<u8, String> {
    let script = load_script(&cli.script).map_err(|e| one_line(&e))?;
    let state_dir = cli
        .state_dir
        .clone()
        .unwrap_or_else(|| default_state_dir(cli.log.as_deref()));
    let mock = HttpMock::start(script, cli.log, state_dir).map_err(|e| match e {
        // A script that cannot be served: name the file it came from.
        crate::HttpStartError::Script(why) => format!("{}: {why}", cli.script.display()),
        other => one_line(&other),
    })?;
    let mut out = format!("{}\nsecond: {}\n", mock.url(), mock.second_origin_url());
    if let Some(plain) = mock.plain_url() {
        out.push_str(&format!("plain: {plain}\n"));
    }
    if let Some(ca) = mock.ca_certificate_path() {
        out.push_str(&format!("ca: {}\n", ca.display()));
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    drop(stdout);

    let watch = mock.watch().clone();
    let stdin_watch = watch.clone();
    std::thread::spawn(move || {
        let mut sink = [0u8; 4096];
        let mut stdin = std::io::stdin().lock();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
        stdin_watch.update(|p| p.stdin_closed = true);
    });
    let progress = watch.progress.lock().unwrap_or_else(|e| e.into_inner());
    let progress = watch
        .changed
        .wait_while(progress, |p| match p.end {
            Some(PlayEnd::Exited(_)) => false,
            Some(_) => !p.stdin_closed,
            None => true,
        })
        .unwrap_or_else(|e| e.into_inner());
    let end = progress.end;
    drop(progress);
    mock.shutdown();
    Ok(match end {
        Some(PlayEnd::Completed) | None => 0,
        Some(PlayEnd::Mismatch) => exit_code::MISMATCH,
        Some(PlayEnd::ScriptError) => exit_code::USAGE,
        Some(PlayEnd::Exited(code)) => code as u8,
    })
}

fn default_state_dir(log: Option<&Path>) -> PathBuf {
    match log.and_then(Path::parent) {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        Some(_) => PathBuf::from("."),
        None => std::env::temp_dir(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        HttpArgs::command().debug_assert();
    }
}
