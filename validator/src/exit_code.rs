//! The documented exit codes of `mcp-conformance`, in one place.

/// Everything checked passed.
pub const SUCCESS: u8 = 0;
/// At least one scenario or check failed.
pub const FAILURES: u8 = 1;
/// The command line or an input file is wrong.
pub const USAGE: u8 = 2;
/// The harness itself failed (not the implementation under test).
pub const HARNESS_FAULT: u8 = 3;
/// The target could not be reached (validate).
pub const UNREACHABLE: u8 = 4;
/// No check failed, but at least one is inconclusive: it only ran out of time (validate).
pub const INCONCLUSIVE: u8 = 5;
/// Interrupted by a signal (SIGINT, SIGTERM, SIGHUP): this plus the signal's number, as
/// shells report it (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP), after every server
/// the run started was ended.
pub const SIGNALLED: u8 = 128;
