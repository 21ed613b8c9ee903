//! Text as reports and errors show it: cut to a number of characters, marking the cut (one
//! implementation, the validator's, shared by every report).

pub use mcp_validator::text::cut_chars as cut;
