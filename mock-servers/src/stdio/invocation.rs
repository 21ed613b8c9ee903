//! How this server was started, so it can start copies of itself: a background copy that
//! resumes the script, or a sleeping descendant.
//!
//! The program may be `mcp-mock-stdio` or another binary with a subcommand
//! (`mcp-conformance mock-stdio ...`): the arguments before the ones [`crate::stdio_main`]
//! received are kept as a prefix.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The program, its argument prefix and the options a copy needs.
#[derive(Clone, Debug)]
pub struct Invocation {
    /// Arguments between the program and the mock's own (e.g. `mock-stdio`).
    pub prefix: Vec<OsString>,
    /// `--script`.
    pub script: PathBuf,
    /// `--log`.
    pub log: Option<PathBuf>,
    /// The state folder in use (given or defaulted).
    pub state_dir: PathBuf,
}

/// The arguments of this process between argv\[0\] and `args` (empty when `args` is not
/// the tail of this process's arguments).
pub fn prefix_of(args: &[OsString]) -> Vec<OsString> {
    let all: Vec<OsString> = std::env::args_os().skip(1).collect();
    if all.len() >= args.len() && all[all.len() - args.len()..] == *args {
        all[..all.len() - args.len()].to_vec()
    } else {
        Vec::new()
    }
}

impl Invocation {
    fn program(&self) -> std::io::Result<Command> {
        let mut command = Command::new(std::env::current_exe()?);
        command.args(&self.prefix);
        Ok(command)
    }

    /// A copy that plays the same launch from step `resume_at`, on inherited stdio.
    pub fn copy(
        &self,
        resume_at: usize,
        launch: u32,
        state: &std::path::Path,
    ) -> std::io::Result<Command> {
        let mut command = self.program()?;
        command.arg("--script").arg(&self.script);
        if let Some(log) = &self.log {
            command.arg("--log").arg(log);
        }
        command.arg("--state-dir").arg(&self.state_dir);
        command.arg("--resume-at").arg(resume_at.to_string());
        command.arg("--launch").arg(launch.to_string());
        command.arg("--resume-state").arg(state);
        command
            .arg("--launcher-pid")
            .arg(std::process::id().to_string());
        Ok(command)
    }

    /// A descendant that sleeps until killed, holding none of the client's pipes.
    pub fn sleeper(&self) -> std::io::Result<Command> {
        let mut command = self.program()?;
        command.arg("--sleeper");
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        Ok(command)
    }
}
