//! Short texts for steps and matchers, used in the wire log and in error messages.

use crate::script::{Expect, Step};

/// Describes a step in a few words: `expect tools/call`, `reply to call1`, `banner (2 lines)`.
pub fn describe_step(step: &Step) -> String {
    match step {
        Step::Handshake(_) => "handshake".into(),
        Step::Discover(d) => match d.versions.is_empty() {
            true => "discover".into(),
            false => format!("discover ({})", d.versions.join(", ")),
        },
        Step::Expect(e) => format!("expect {}", describe_expect(e)),
        Step::Reply(r) => {
            let mut text = String::from("reply");
            if let Some(to) = &r.to {
                text.push_str(&format!(" to {to}"));
            }
            if let Some(error) = &r.error {
                text.push_str(&format!(" with error {}", error.code));
            }
            if let Some(id) = &r.id {
                text.push_str(&format!(" with id {id}"));
            }
            if let Some(n) = r.split_writes {
                text.push_str(&format!(" in {n} writes"));
            }
            text
        }
        Step::Notify(n) => format!("notify {}", n.method),
        Step::Request(r) if r.times > 1 => {
            format!("request {} ×{} (ids {} …)", r.method, r.times, r.id)
        }
        Step::Request(r) => format!("request {} (id {})", r.method, r.id),
        Step::Banner(b) => format!("banner ({})", plural(b.lines.len(), "line")),
        Step::LongLine(l) => format!("long_line ({})", plural(l.bytes, "byte")),
        Step::Stderr(s) => format!("stderr ({})", plural(s.text.len(), "byte")),
        Step::StderrFlood(f) => format!(
            "stderr_flood ({}{})",
            plural(f.bytes, "byte"),
            if f.invalid_utf8 {
                ", invalid UTF-8"
            } else {
                ""
            }
        ),
        Step::Stall(s) => match s.ms {
            Some(ms) => format!("stall {ms} ms"),
            None => "stall forever".into(),
        },
        Step::Crash(c) => format!("crash (code {})", c.code),
        Step::Exit(e) => format!("exit (code {})", e.code),
        Step::IgnoreStdinClose(_) => "ignore_stdin_close".into(),
        Step::AwaitStdinClose(_) => "await_stdin_close".into(),
        Step::SpawnChild(c) if c.ignore_sigterm => "spawn_child (ignoring SIGTERM)".into(),
        Step::SpawnChild(_) => "spawn_child".into(),
        Step::Background(_) => "background".into(),
        Step::NewProcessGroup(_) => "new_process_group".into(),
        Step::CloseStdout(_) => "close_stdout".into(),
        Step::CloseStderr(_) => "close_stderr".into(),
        Step::StopReading(_) => "stop_reading".into(),
        Step::Respond(r) => {
            let mut text = format!("respond {}", r.status.unwrap_or(200));
            if let Some(to) = &r.to {
                text.push_str(&format!(" to {to}"));
            }
            if let Some(n) = r.fill {
                text.push_str(&format!(" with {}", plural(n, "byte")));
            }
            if r.hold_open {
                text.push_str(", held open");
            }
            text
        }
        Step::Redirect(r) => match r.repeat {
            1 => format!("redirect {} to {}", r.status, r.location),
            n => format!("redirect {} to {} ({n} times)", r.status, r.location),
        },
        Step::Hang(t) => with_target("hang", t),
        Step::Disconnect(t) => with_target("disconnect", t),
        Step::OpenSse(o) => match &o.to {
            Some(to) => format!("open_sse to {to}"),
            None => "open_sse".into(),
        },
        Step::Write(w) => {
            let text = w.text.as_deref().unwrap_or("");
            let mut out = format!("write ({})", plural(text.len(), "byte"));
            if let Some(n) = w.fill {
                out = format!(
                    "write ({} then {} of x)",
                    plural(text.len(), "byte"),
                    plural(n, "byte")
                );
            }
            out
        }
        Step::CloseStream(c) => match c.abort {
            true => "close_stream (abort)".into(),
            false => "close_stream".into(),
        },
        Step::AwaitClose(a) => match &a.to {
            Some(to) => format!("await_close of {to} within {} ms", a.within_ms),
            None => format!("await_close within {} ms", a.within_ms),
        },
        Step::ExpireSession(e) => match &e.id {
            Some(id) => format!("expire_session {id}"),
            None => "expire_session".into(),
        },
        Step::Endpoint(e) => format!("endpoint {}", e.path),
        Step::Refuse(r) => format!("refuse connections for {} ms", r.ms),
    }
}

fn with_target(name: &str, target: &crate::script::Target) -> String {
    match &target.to {
        Some(to) => format!("{name} {to}"),
        None => name.into(),
    }
}

/// Describes what a matcher expects: `tools/call`, `response to 7 with error -32601`,
/// `notifications/initialized (notification)`.
pub fn describe_expect(expect: &Expect) -> String {
    let mut text = match (&expect.method, &expect.response_to, &expect.http) {
        (Some(method), _, _) => method.clone(),
        (None, Some(id), _) => format!("response to {id}"),
        (None, None, Some(_)) if !expect.has_rpc_fields() => "any request".into(),
        (None, None, _) => "any message".into(),
    };
    match expect.has_id {
        Some(true) => text.push_str(" (request)"),
        Some(false) => text.push_str(" (notification)"),
        None => {}
    }
    if let Some(params) = &expect.params {
        text.push_str(&format!(" with params {params}"));
    }
    if !expect.absent_params.is_empty() {
        text.push_str(&format!(" without params {:?}", expect.absent_params));
    }
    if let Some(result) = &expect.result {
        text.push_str(&format!(" with result {result}"));
    }
    if let Some(code) = expect.error_code {
        text.push_str(&format!(" with error {code}"));
    }
    if let Some(version) = &expect.meta {
        text.push_str(&format!(" with _meta at {version}"));
    }
    if let Some(http) = &expect.http {
        text.push_str(&describe_http_match(http));
    }
    text
}

/// Describes an HTTP matcher as a suffix: ` (HTTP DELETE /mcp on second, with
/// authorization: Bearer t1, without mcp-session-id)`.
fn describe_http_match(http: &crate::script::HttpMatch) -> String {
    let mut parts = Vec::new();
    let mut line = String::from("HTTP");
    if let Some(method) = &http.method {
        line.push(' ');
        line.push_str(&method.to_ascii_uppercase());
    }
    if let Some(path) = &http.path {
        line.push(' ');
        line.push_str(path);
    }
    if let Some(origin) = http.origin {
        line.push_str(" on ");
        line.push_str(origin.name());
    }
    parts.push(line);
    for (name, value) in &http.headers {
        parts.push(format!("with {}: {value}", name.to_ascii_lowercase()));
    }
    for name in &http.absent_headers {
        parts.push(format!("without {}", name.to_ascii_lowercase()));
    }
    format!(" ({})", parts.join(", "))
}

fn plural(n: usize, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::{Banner, Reply};

    #[test]
    fn a_plain_expect_reads_as_its_method() {
        let step = Step::Expect(Expect {
            method: Some("tools/call".into()),
            ..Expect::default()
        });
        assert_eq!(describe_step(&step), "expect tools/call");
    }

    #[test]
    fn a_banner_counts_its_lines() {
        let step = Step::Banner(Banner {
            lines: vec!["a".into(), "b".into()],
        });
        assert_eq!(describe_step(&step), "banner (2 lines)");
    }

    #[test]
    fn a_named_reply_names_its_request() {
        let step = Step::Reply(Reply {
            to: Some("call1".into()),
            ..Reply::default()
        });
        assert_eq!(describe_step(&step), "reply to call1");
    }
}
