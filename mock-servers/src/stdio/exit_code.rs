//! The exit codes of `mcp-mock-stdio`, besides the codes a script's `crash` and `exit`
//! steps choose.

/// The script ended and stdin closed (or a `background` launcher handed over).
pub const SUCCESS: u8 = 0;
/// Bad arguments, or a script that cannot be loaded or played (unreadable, TOML error,
/// unknown step, a `reply` with no request to answer, a copy that cannot be started).
pub const USAGE: u8 = 2;
/// A message from the client did not match the `expect` step.
pub const MISMATCH: u8 = 3;
/// stdin closed before the script's end.
pub const UNFINISHED: u8 = 4;
