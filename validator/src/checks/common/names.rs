//! Names no server has, asked for to see the error come back.

/// The tool called by [`crate::checks::tools::unknown`] and named in a 2026-07-28 header
/// mismatch ([`crate::checks::stateless`]): no server has it.
pub const NO_SUCH_TOOL: &str = "mcp-conformance-no-such-tool";
