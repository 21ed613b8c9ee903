//! Loading a script file: a bare script (`transport`, `tools`, `steps`, `relaunch`) or a whole
//! scenario file whose top-level `server` table is the script (its other keys are ignored).
//! TOML by default, JSON when the name ends in `.json`.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

use crate::error::LoadError;
use crate::script::{Framing, Script, Step, Transport};

/// The most values (array elements, table members) a script or scenario file may hold: the
/// largest bundled scenario holds under 200, and each costs about a kilobyte once parsed,
/// so a file under the 4 MiB cap cannot expand to hundreds of megabytes.
pub const MAX_SCRIPT_VALUES: usize = 20_000;

/// The deepest nesting of arrays and tables in a script or scenario file (the bundled ones
/// nest at most 8 deep).
pub const MAX_SCRIPT_DEPTH: usize = 64;

/// The most steps in one step list (a script's `steps`, each `relaunch`, a client's `steps`).
pub const MAX_STEPS: usize = 2_000;

/// The largest size a script may ask a server to produce or a client to accept, in bytes
/// (`long_line.bytes`, `stderr_flood.bytes`, `fill`; a client's `max_body_bytes` and
/// `pad_bytes`): the bundled scenarios ask for at most a little over 16 MiB.
pub const MAX_SIZE_SETTING: usize = 64 << 20;

/// The largest repeat count in a script (`repeat`, `times`, `split_writes`).
pub const MAX_COUNT_SETTING: usize = 10_000;

/// Refuses a text too heavy to parse, naming the bound.
fn weighed(weight: Result<(), crate::weight::Heavy>, origin: &Path) -> Result<(), LoadError> {
    weight.map_err(|heavy| LoadError::Invalid {
        path: origin.to_owned(),
        message: format!(
            "too large to load: {heavy} (the bounds on a script are {MAX_SCRIPT_VALUES} values \
             and {MAX_SCRIPT_DEPTH} levels)"
        ),
    })
}

/// Checks a size setting against [`MAX_SIZE_SETTING`].
pub fn check_size(place: &str, field: &str, value: usize) -> Result<(), String> {
    match value > MAX_SIZE_SETTING {
        true => Err(format!(
            "{place}: {field} = {value} is over the maximum, {MAX_SIZE_SETTING} bytes"
        )),
        false => Ok(()),
    }
}

fn check_count(place: &str, field: &str, value: usize) -> Result<(), String> {
    match value > MAX_COUNT_SETTING {
        true => Err(format!(
            "{place}: {field} = {value} is over the maximum, {MAX_COUNT_SETTING}"
        )),
        false => Ok(()),
    }
}

/// A scenario file seen from the server's side: only `server` matters.
#[derive(Deserialize)]
struct ScenarioFile {
    server: Script,
}

/// Reads and checks the script in `path`.
pub fn load_script(path: &Path) -> Result<Script, LoadError> {
    let text = crate::files::read_text(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })?;
    if path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("json"))
    {
        parse_json(&text, path)
    } else {
        parse_toml(&text, path)
    }
}

/// Parses and checks a TOML script; `origin` names it in errors.
///
/// ```
/// let script = mcp_mock_servers::load::parse_toml(
///     "steps = [{ handshake = {} }, { expect = { method = \"tools/list\" } }, { reply = {} }]",
///     "example.toml".as_ref(),
/// )
/// .unwrap();
/// assert_eq!(script.steps.len(), 3);
/// ```
pub fn parse_toml(text: &str, origin: &Path) -> Result<Script, LoadError> {
    weighed(
        crate::weight::check_toml(text, MAX_SCRIPT_VALUES, MAX_SCRIPT_DEPTH),
        origin,
    )?;
    let syntax = |error: toml::de::Error| {
        let (line, column) = error
            .span()
            .map_or((0, 0), |span| line_column(text, span.start));
        LoadError::Syntax {
            path: origin.to_owned(),
            line,
            column,
            message: error.message().trim().to_owned(),
        }
    };
    let table: toml::Table = toml::from_str(text).map_err(syntax)?;
    let script = if is_scenario(table.contains_key("server"), table.contains_key("steps")) {
        toml::from_str::<ScenarioFile>(text).map_err(syntax)?.server
    } else {
        toml::from_str::<Script>(text).map_err(syntax)?
    };
    validate(&script).map_err(|message| LoadError::Invalid {
        path: origin.to_owned(),
        message,
    })?;
    Ok(script)
}

/// Parses and checks a JSON script; `origin` names it in errors.
pub fn parse_json(text: &str, origin: &Path) -> Result<Script, LoadError> {
    weighed(
        crate::weight::check_json(text.as_bytes(), MAX_SCRIPT_VALUES, MAX_SCRIPT_DEPTH),
        origin,
    )?;
    let syntax = |error: serde_json::Error| {
        let text = error.to_string();
        let place = format!(" at line {} column {}", error.line(), error.column());
        LoadError::Syntax {
            path: origin.to_owned(),
            line: error.line(),
            column: error.column(),
            message: text.strip_suffix(&place).unwrap_or(&text).to_owned(),
        }
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(syntax)?;
    let script = if is_scenario(value.get("server").is_some(), value.get("steps").is_some()) {
        serde_json::from_str::<ScenarioFile>(text)
            .map_err(syntax)?
            .server
    } else {
        serde_json::from_str::<Script>(text).map_err(syntax)?
    };
    validate(&script).map_err(|message| LoadError::Invalid {
        path: origin.to_owned(),
        message,
    })?;
    Ok(script)
}

fn is_scenario(has_server: bool, has_steps: bool) -> bool {
    has_server && !has_steps
}

/// Checks what serde cannot: an `expect` gives at most one of `method` and `response_to`; a
/// `reply` gives at most one of `result` and `error`, and its `to` names an earlier `expect`
/// of the same step list; `split_writes` is at least 1; each step (and field) suits the
/// transport (no `banner` over HTTP, no `respond` over stdio, `endpoint` only over
/// `legacy-sse`, `${plain}` only over https); no frame goes ahead of a JSON-framed reply.
pub fn validate(script: &Script) -> Result<(), String> {
    if script.transport.is_http() && !script.relaunch.is_empty() {
        return Err("relaunch is for the stdio transport".into());
    }
    check_steps("steps", &script.steps, script.transport)?;
    for (i, steps) in script.relaunch.iter().enumerate() {
        check_steps(&format!("relaunch[{i}]"), steps, script.transport)?;
    }
    Ok(())
}

/// Why a player stops at a step of the other transport (refused when the script loads; a
/// script built in code may still get there).
pub(crate) fn wrong_transport(step: &Step) -> String {
    let transport = if http_only(step) == Some(true) {
        "the HTTP transports"
    } else {
        "the stdio transport"
    };
    format!("`{}` is for {transport}", crate::describe_step(step))
}

/// Whether a step only makes sense on one kind of transport: `Some(true)` HTTP only,
/// `Some(false)` stdio only.
pub(crate) fn http_only(step: &Step) -> Option<bool> {
    match step {
        Step::Respond(_)
        | Step::Redirect(_)
        | Step::Hang(_)
        | Step::Disconnect(_)
        | Step::OpenSse(_)
        | Step::Write(_)
        | Step::CloseStream(_)
        | Step::AwaitClose(_)
        | Step::ExpireSession(_)
        | Step::Endpoint(_)
        | Step::Refuse(_) => Some(true),
        Step::Expect(e) if e.http.is_some() => Some(true),
        Step::Reply(r) if r.has_http_fields() => Some(true),
        Step::Handshake(h) if h.session_id.is_some() => Some(true),
        Step::Reply(r) if r.split_writes.is_some() => Some(false),
        Step::Banner(_)
        | Step::LongLine(_)
        | Step::Stderr(_)
        | Step::StderrFlood(_)
        | Step::IgnoreStdinClose(_)
        | Step::AwaitStdinClose(_)
        | Step::SpawnChild(_)
        | Step::Background(_)
        | Step::NewProcessGroup(_)
        | Step::CloseStdout(_)
        | Step::CloseStderr(_)
        | Step::StopReading(_) => Some(false),
        _ => None,
    }
}

fn check_transport(place: &str, step: &Step, transport: Transport) -> Result<(), String> {
    let what = crate::describe::describe_step(step);
    match (http_only(step), transport.is_http()) {
        (Some(true), false) => {
            return Err(format!(
                "{place}: `{what}` is for the HTTP transports, not stdio"
            ))
        }
        (Some(false), true) => return Err(format!("{place}: `{what}` is for the stdio transport")),
        _ => {}
    }
    match step {
        Step::Endpoint(_) if transport != Transport::LegacySse => Err(format!(
            "{place}: `endpoint` is for the legacy-sse transport"
        )),
        Step::Redirect(r) if r.location.contains("${plain}") && transport != Transport::Https => {
            Err(format!("{place}: `${{plain}}` exists over https only"))
        }
        Step::Redirect(r) if !matches!(r.status, 301 | 302 | 303 | 307 | 308) => Err(format!(
            "{place}: a redirect status is 301, 302, 303, 307 or 308, not {}",
            r.status
        )),
        Step::Redirect(r) if r.repeat == 0 => Err(format!("{place}: repeat must be at least 1")),
        Step::Request(r) if r.times == 0 => Err(format!("{place}: times must be at least 1")),
        Step::Request(r) if r.times > 1 && !r.id.is_string() => Err(format!(
            "{place}: a request sent {} times needs a string id (`-2`, `-3`, … is appended to it)",
            r.times
        )),
        _ => Ok(()),
    }
}

fn check_steps(list: &str, steps: &[Step], transport: Transport) -> Result<(), String> {
    let mut names = HashSet::new();
    // Whether frames went out on the latest exchange (so its reply cannot be plain JSON).
    let mut framed = false;
    if steps.len() > MAX_STEPS {
        return Err(format!(
            "{list}: {} steps, over the maximum of {MAX_STEPS}",
            steps.len()
        ));
    }
    for (i, step) in steps.iter().enumerate() {
        let place = format!("{list}[{i}]");
        check_transport(&place, step, transport)?;
        check_settings(&place, step)?;
        match step {
            Step::Expect(_) | Step::Handshake(_) | Step::Discover(_) => framed = false,
            Step::Notify(_) | Step::Request(_) | Step::OpenSse(_) | Step::Write(_) => framed = true,
            Step::Reply(r)
                if transport != Transport::LegacySse
                    && framed
                    && r.framing == Some(Framing::Json) =>
            {
                return Err(format!(
                    "{place}: a JSON reply after frames on the same response; use framing = \"sse\""
                ));
            }
            _ => {}
        }
        match step {
            Step::Expect(e) => {
                if e.method.is_some() && e.response_to.is_some() {
                    return Err(format!(
                        "{place}: expect gives both `method` and `response_to`"
                    ));
                }
                if let Some(name) = &e.name {
                    names.insert(name.as_str());
                }
            }
            Step::Reply(r) => {
                if r.result.is_some() && r.error.is_some() {
                    return Err(format!("{place}: reply gives both `result` and `error`"));
                }
                if let Some(to) = &r.to {
                    if !names.contains(to.as_str()) {
                        return Err(format!(
                            "{place}: reply to `{to}`, which no earlier expect names"
                        ));
                    }
                }
                if r.split_writes == Some(0) {
                    return Err(format!("{place}: split_writes must be at least 1"));
                }
            }
            Step::Crash(crate::script::Crash { code, .. })
            | Step::Exit(crate::script::Exit { code })
                if !(0..=255).contains(code) =>
            {
                // A process exit status is one byte: 256 would exit 0.
                return Err(format!("{place}: exit code {code} is outside 0-255"));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Checks a step's sizes and counts against [`MAX_SIZE_SETTING`] and [`MAX_COUNT_SETTING`].
fn check_settings(place: &str, step: &Step) -> Result<(), String> {
    match step {
        Step::LongLine(l) => check_size(place, "bytes", l.bytes),
        Step::StderrFlood(f) => check_size(place, "bytes", f.bytes),
        Step::Respond(r) => check_size(place, "fill", r.fill.unwrap_or(0)),
        Step::Write(w) => check_size(place, "fill", w.fill.unwrap_or(0)),
        Step::Redirect(r) => check_count(place, "repeat", r.repeat),
        Step::Request(r) => check_count(place, "times", r.times),
        Step::Reply(r) => check_count(place, "split_writes", r.split_writes.unwrap_or(1)),
        _ => Ok(()),
    }
}

/// A TOML parser's error as one short line: `line L, column C: message`, the message cut
/// to 200 characters (the parser's own rendering quotes the whole line, which may be
/// megabytes long).
pub fn toml_error(text: &str, error: &toml::de::Error) -> String {
    let (line, column) = error
        .span()
        .map_or((1, 1), |span| line_column(text, span.start));
    let message = error.message().trim().replace('\n', " ");
    let message = match message.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &message[..at]),
        None => message,
    };
    format!("line {line}, column {column}: {message}")
}

/// The 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> &'static Path {
        Path::new("s.toml")
    }

    #[test]
    fn a_scenario_file_gives_its_server_table() {
        let text = "rules = [\"stdio.ping.answered\"]\n[server]\nsteps = [{ handshake = {} }]\n[client]\nanything = 1\n";
        assert_eq!(parse_toml(text, origin()).unwrap().steps.len(), 1);
    }

    #[test]
    fn an_unknown_step_names_its_line() {
        let text = "steps = [\n  { handshake = {} },\n  { dance = {} },\n]\n";
        let error = parse_toml(text, origin()).unwrap_err().to_string();
        assert!(error.starts_with("s.toml:3:"), "{error}");
        assert!(error.contains("dance"), "{error}");
    }

    #[test]
    fn an_unknown_step_in_a_scenario_names_its_line() {
        let text = "rules = []\n\n[server]\nsteps = [\n  { dance = {} },\n]\n";
        let error = parse_toml(text, origin()).unwrap_err().to_string();
        assert!(error.starts_with("s.toml:5:"), "{error}");
    }

    #[test]
    fn a_reply_to_an_unknown_name_is_refused() {
        let text = "steps = [{ reply = { to = \"nope\" } }]";
        let error = parse_toml(text, origin()).unwrap_err().to_string();
        assert_eq!(
            error,
            "s.toml: steps[0]: reply to `nope`, which no earlier expect names"
        );
    }

    #[test]
    fn steps_must_suit_the_transport() {
        let error = parse_toml("steps = [{ respond = { status = 202 } }]", origin()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "s.toml: steps[0]: `respond 202` is for the HTTP transports, not stdio"
        );
        let text = "transport = \"http\"\nsteps = [{ banner = { lines = [\"x\"] } }]";
        let error = parse_toml(text, origin()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "s.toml: steps[0]: `banner (1 line)` is for the stdio transport"
        );
        let text = "transport = \"http\"\nsteps = [{ expect = { http = { method = \"DELETE\" } } }, { respond = { status = 405 } }]";
        assert_eq!(parse_toml(text, origin()).unwrap().steps.len(), 2);
    }

    #[test]
    fn a_request_flood_has_a_count_and_ids_of_its_own() {
        let text = "steps = [{ request = { id = \"f\", method = \"ping\", times = 3 } }]";
        let script = parse_toml(text, origin()).unwrap();
        let Step::Request(flood) = &script.steps[0] else {
            panic!("{:?}", script.steps)
        };
        let ids: Vec<_> = flood.messages().iter().map(|m| m["id"].clone()).collect();
        assert_eq!(ids, ["f", "f-2", "f-3"]);
        let error = parse_toml(
            "steps = [{ request = { id = 7, method = \"ping\", times = 2 } }]",
            origin(),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "s.toml: steps[0]: a request sent 2 times needs a string id (`-2`, `-3`, … is appended to it)"
        );
        let error = parse_toml(
            "steps = [{ request = { id = \"f\", method = \"ping\", times = 0 } }]",
            origin(),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "s.toml: steps[0]: times must be at least 1"
        );
    }

    #[test]
    fn json_scripts_load_too() {
        let text = r#"{"steps": [{"expect": {"method": "ping"}}, {"reply": {}}]}"#;
        assert_eq!(
            parse_json(text, Path::new("s.json")).unwrap().steps.len(),
            2
        );
        let error = parse_json("{\n\"steps\": [{\"nope\": {}}]}", Path::new("s.json")).unwrap_err();
        assert!(error.to_string().starts_with("s.json:2:"), "{error}");
    }
}
