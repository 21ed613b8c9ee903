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

/// Parses a line from a driver that [`bounded`] let through, without serde_json's recursion
/// limit (the line's nesting is bounded already, by [`MAX_REPLY_DEPTH`]).
pub(super) fn parse_bounded<T: serde::de::DeserializeOwned>(
    line: &[u8],
) -> Result<T, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_slice(line);
    deserializer.disable_recursion_limit();
    let parsed = T::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(parsed)
}

/// A line from the driver as an error may show it: cut, control characters escaped.
pub(super) fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let cut = crate::text::cut(&text, 200);
    format!("{:?}", cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cut::driver::protocol::Reply;
    use crate::cut::driver::READER_STACK;

    fn nested(levels: usize) -> Vec<u8> {
        let mut line = br#"{"id": 7, "ok": true, "value": "#.to_vec();
        line.extend(std::iter::repeat_n(b'[', levels));
        line.extend(std::iter::repeat_n(b']', levels));
        line.push(b'}');
        line
    }

    fn depth(value: &serde_json::Value) -> usize {
        let mut depth = 0;
        let mut at = value;
        while let Some(inner) = at.as_array().and_then(|a| a.first()) {
            (depth, at) = (depth + 1, inner);
        }
        depth + usize::from(at.is_array())
    }

    #[test]
    fn a_reply_as_deep_as_the_bound_is_carried_and_one_deeper_is_refused_naming_it() {
        // 200 levels is what `stdio/response-nested-too-deep-skipped` sends; the bound (the
        // reply's own object is a level) is the most a reply may carry, parsed on the
        // reader's stack.
        for levels in [200, MAX_REPLY_DEPTH - 1] {
            let line = nested(levels);
            assert_eq!(bounded(&line), Ok(()), "{levels} levels");
            let reply = std::thread::Builder::new()
                .stack_size(READER_STACK)
                .spawn(move || parse_bounded::<Reply>(&line).unwrap())
                .unwrap()
                .join()
                .unwrap();
            let value = reply.value.unwrap();
            assert_eq!(depth(&value), levels);
            // The runner's threads (default stacks) show and drop it.
            std::thread::spawn(move || serde_json::to_string(&value).unwrap().len())
                .join()
                .unwrap();
        }
        let why = bounded(&nested(MAX_REPLY_DEPTH)).unwrap_err();
        assert!(why.contains("deeper than 1000 levels"), "{why}");
    }
}
