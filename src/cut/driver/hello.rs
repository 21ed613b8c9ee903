//! A driver's hello: probing a driver for it (start it once, read the hello within a bound,
//! stop it), and reading and checking a hello line.

use std::io::{BufRead, Read};
use std::path::Path;
use std::time::Duration;

use crate::cut::Described;

use super::protocol::Hello;
use super::{
    kill_group, spawn, DriverError, MAX_LABEL, MAX_LINE, MAX_REPLY_DEPTH, MAX_REPLY_VALUES,
};

/// Starts the driver once, reads its hello (bounded by `within`) and stops it: what it says
/// about itself decides which scenarios apply.
pub fn probe(argv: &[String], within: Duration) -> Result<Described, DriverError> {
    probe_in(argv, None, within)
}

/// [`probe`], the driver started in `dir` (a matrix row's folder).
pub fn probe_in(
    argv: &[String],
    dir: Option<&Path>,
    within: Duration,
) -> Result<Described, DriverError> {
    let mut child = spawn(argv, dir)?;
    let stdout = child.stdout.take();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = Vec::new();
        if let Some(stdout) = stdout {
            // One past the bound, so that a longer hello is told from one of exactly it.
            let mut stdout = std::io::BufReader::new(stdout.take(MAX_LINE as u64 + 1));
            let _ = stdout.read_until(b'\n', &mut line);
            if line.last() == Some(&b'\n') {
                line.pop();
            }
        }
        let _ = send.send(line);
    });
    let line = receive.recv_timeout(within);
    kill_group(&mut child);
    let line =
        line.map_err(|_| DriverError::Hello(format!("nothing within {} ms", within.as_millis())))?;
    parse_hello(&line).map_err(|why| DriverError::Hello(format!("{}: {why}", argv.join(" "))))
}

pub(super) fn parse_hello(line: &[u8]) -> Result<Described, String> {
    if line.is_empty() {
        return Err("it exited or closed its stdout first".into());
    }
    bounded(line)?;
    let mut described = serde_json::from_slice::<Hello>(line)
        .map(|h| h.hello)
        .map_err(|e| format!("{e} in {}", shown(line)))?;
    described.name = crate::text::cut(&described.name, MAX_LABEL);
    described.version = crate::text::cut(&described.version, MAX_LABEL);
    Ok(described)
}

/// Refuses a line from a driver that is too long or too heavy to parse, naming the bound.
pub(super) fn bounded(line: &[u8]) -> Result<(), String> {
    if line.len() > MAX_LINE {
        return Err(format!(
            "a line longer than {MAX_LINE} bytes (the bound on one line from a driver)"
        ));
    }
    mcp_mock_servers::weight::check_json(line, MAX_REPLY_VALUES, MAX_REPLY_DEPTH).map_err(|e| {
        format!(
            "a line too heavy to parse: {e} (the bound on one line from a driver is \
             {MAX_REPLY_VALUES} values, {MAX_REPLY_DEPTH} levels)"
        )
    })
}

/// A line from the driver as an error may show it: cut, control characters escaped.
pub(super) fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let cut = crate::text::cut(&text, 200);
    format!("{:?}", cut)
}
