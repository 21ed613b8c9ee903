//! Command-line parsing shared by the mock binaries.

use crate::stdio::exit_code;
use std::ffi::OsString;
use std::process::ExitCode;

/// Parses `args` (without the program name) as `program`'s options. `--help` and
/// `--version` print and end with success; a usage error prints and ends with
/// [`exit_code::USAGE`].
pub(crate) fn parse<T: clap::Parser>(program: &str, args: Vec<OsString>) -> Result<T, ExitCode> {
    let argv = std::iter::once(OsString::from(program)).chain(args);
    T::try_parse_from(argv).map_err(|error| {
        let _ = error.print();
        if error.use_stderr() {
            ExitCode::from(exit_code::USAGE)
        } else {
            ExitCode::SUCCESS
        }
    })
}

/// Writes `program: message` on stderr, control characters escaped (a script path may hold
/// them); a stderr that cannot be written is no panic (the exit code still says it failed).
pub(crate) fn report_error(program: &str, message: &str) {
    use std::io::Write;
    let shown: String = message
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    let _ = writeln!(std::io::stderr().lock(), "{program}: {shown}");
}
