//! Short texts for steps and matchers, used in the wire log and in error messages.

use crate::script::{Expect, Step};

/// Describes a step in a few words: `expect tools/call`, `reply to call1`, `banner (2 lines)`.
pub fn describe_step(step: &Step) -> String {
    match step {
        Step::Handshake(_) => "handshake".into(),
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
        Step::SpawnChild(_) => "spawn_child".into(),
        Step::Background(_) => "background".into(),
        Step::CloseStdout(_) => "close_stdout".into(),
        Step::StopReading(_) => "stop_reading".into(),
    }
}

/// Describes what a matcher expects: `tools/call`, `response to 7 with error -32601`,
/// `notifications/initialized (notification)`.
pub fn describe_expect(expect: &Expect) -> String {
    let mut text = match (&expect.method, &expect.response_to) {
        (Some(method), _) => method.clone(),
        (None, Some(id)) => format!("response to {id}"),
        (None, None) => "any message".into(),
    };
    match expect.has_id {
        Some(true) => text.push_str(" (request)"),
        Some(false) => text.push_str(" (notification)"),
        None => {}
    }
    if let Some(params) = &expect.params {
        text.push_str(&format!(" with params {params}"));
    }
    if let Some(result) = &expect.result {
        text.push_str(&format!(" with result {result}"));
    }
    if let Some(code) = expect.error_code {
        text.push_str(&format!(" with error {code}"));
    }
    text
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
