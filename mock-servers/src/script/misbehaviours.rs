//! The stdio misbehaviours: banners, long lines, stderr text and floods, stalls, crashes,
//! exits.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Non-JSON lines on stdout.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Banner {
    /// The lines, written each with a trailing newline; `${id}` in a line stands for the id
    /// of the last request received, as JSON (`2`, `"req-2"`), so a line can carry the id
    /// of the call it pretends to answer whatever id the client chose.
    pub lines: Vec<String>,
}

/// One very long line on stdout.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LongLine {
    /// Its length in bytes, newline excluded (the line is `x` repeated, not JSON).
    pub bytes: usize,
    /// Leave it without its newline: the last thing a server writes before its output ends
    /// (an `exit` next), a line the end of output cuts off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unterminated: bool,
    /// A short line (its newline added) written before it in the same write, so the long
    /// line begins part-way into the client's first read of it rather than at a read's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lead: Option<String>,
}

/// Text on stderr.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StderrText {
    /// The text, written as given (add `\n` for a line).
    pub text: String,
}

/// A stderr flood.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StderrFlood {
    /// How many bytes to write, in lines of 100 bytes (the last one shorter), besides
    /// `first_line` and `last_line`.
    pub bytes: usize,
    /// Mix invalid UTF-8 bytes into the lines.
    #[serde(default)]
    pub invalid_utf8: bool,
    /// A line written first, before the flood.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_line: Option<String>,
    /// A line written last, after the flood.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_line: Option<String>,
}

/// A pause.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Stall {
    /// How long, in milliseconds; forever (until killed) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
}

/// A crash.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Crash {
    /// The exit code.
    pub code: i32,
    /// Written on stderr (with a trailing newline) before exiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
}

/// A clean exit.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Exit {
    /// The exit code.
    #[serde(default)]
    pub code: i32,
}
