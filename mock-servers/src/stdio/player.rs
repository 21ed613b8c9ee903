//! The player: runs a script's steps in order against stdin/stdout/stderr, logging every
//! message and write to the wire log.

use serde_json::Value;

use crate::describe::{describe_expect, describe_step};
use crate::matcher::matches;
use crate::responder::{default_result, message, response};
use crate::script::{Expect, Handshake, Reply, Script, Step};
use crate::stdio::exit_code;
use crate::stdio::flood::write_flood;
use crate::stdio::input::{Input, Line, MAX_LINE};
use crate::stdio::invocation::Invocation;
use crate::stdio::output::{close_stdin, Output};
use crate::stdio::resume::{self, PlayState};
use crate::wire_log::{summarize, LogWriter, Record};

/// How a play ends.
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    /// Exit the process with this code (already logged as [`Record::Exiting`]).
    Exit(i32),
    /// Live on, sleeping, until killed.
    Forever,
}

enum Flow {
    Next,
    Stop(End),
}

/// The steps a launch plays: `steps` for launch 1, `relaunch[launch - 2]` after (the last
/// entry past the end; `steps` again when there is none).
pub fn steps_for_launch(script: &Script, launch: u32) -> &[Step] {
    match (launch, script.relaunch.last()) {
        (0 | 1, _) | (_, None) => &script.steps,
        (n, Some(last)) => script.relaunch.get(n as usize - 2).unwrap_or(last),
    }
}

/// A script being played by this process.
pub struct Player<'a> {
    script: &'a Script,
    steps: &'a [Step],
    launch: u32,
    invocation: &'a Invocation,
    log: LogWriter,
    input: Input,
    output: Output,
    state: PlayState,
}

impl<'a> Player<'a> {
    /// A player for `launch`, starting with `state` (default, or handed over by a launcher).
    pub fn new(
        script: &'a Script,
        launch: u32,
        invocation: &'a Invocation,
        log: LogWriter,
        mut state: PlayState,
    ) -> Self {
        let mut input = Input::new(std::mem::take(&mut state.pending_input));
        if state.stdin_closed {
            input.close();
        }
        Self {
            script,
            steps: steps_for_launch(script, launch),
            launch,
            invocation,
            log,
            input,
            output: Output::new(state.stdout_closed),
            state,
        }
    }

    /// Plays from step `start` to the end; logs [`Record::Started`] first.
    pub fn play(&mut self, start: usize) -> End {
        let pid = std::process::id();
        // SAFETY: getpgrp has no preconditions.
        let pgid = unsafe { libc::getpgrp() } as u32;
        // A background copy (start > 0) was announced by its launcher's `Spawned`; logging
        // it again would race the launcher's own records.
        if start == 0 {
            self.log.append(&Record::Started {
                pid,
                pgid,
                launch: self.launch,
            });
        }
        let steps = self.steps;
        for (index, step) in steps.iter().enumerate().skip(start) {
            self.log.append(&Record::Step {
                index,
                describe: describe_step(step),
            });
            if let Flow::Stop(end) = self.play_step(index, step) {
                return end;
            }
        }
        self.finish()
    }

    fn play_step(&mut self, index: usize, step: &Step) -> Flow {
        match step {
            Step::Handshake(h) => self.handshake(index, step, h),
            Step::Discover(d) => self.discover(index, step, d),
            Step::Expect(e) => self.expect(index, step, e),
            Step::Reply(r) => self.reply(index, r),
            Step::Notify(n) => {
                let params = match &n.subscription {
                    None => n.params.clone(),
                    Some(name) => match self.state.named.get(name).and_then(|r| r.get("id")) {
                        Some(id) => Some(crate::responder::tagged(n.params.as_ref(), id)),
                        None => {
                            return self.script_error(&format!(
                                "step {index}: no request named `{name}` to tag with"
                            ))
                        }
                    },
                };
                self.send(message(None, &n.method, params.as_ref()), None);
                Flow::Next
            }
            Step::Request(r) => {
                for message in r.messages() {
                    self.send(message, None);
                }
                Flow::Next
            }
            Step::Banner(b) => {
                let id = self
                    .state
                    .latest_request
                    .as_ref()
                    .and_then(|r| r.get("id"))
                    .map(|id| id.to_string());
                for line in &b.lines {
                    let line = match &id {
                        Some(id) => line.replace("${id}", id),
                        None => line.clone(),
                    };
                    self.write_stdout(format!("{line}\n").into_bytes());
                }
                Flow::Next
            }
            Step::LongLine(l) => {
                self.long_line(l.bytes, !l.unterminated, l.lead.as_deref());
                Flow::Next
            }
            Step::Stderr(s) => {
                self.write_stderr(s.text.as_bytes());
                Flow::Next
            }
            Step::StderrFlood(f) => {
                let output = &mut self.output;
                let (head, total) = write_flood(f, |bytes| output.stderr(bytes));
                self.log.append(&Record::Wrote {
                    stream: "stderr".into(),
                    summary: summarize(&head, total),
                });
                Flow::Next
            }
            Step::Stall(s) => match s.ms {
                Some(ms) => {
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                    Flow::Next
                }
                None => Flow::Stop(End::Forever),
            },
            Step::Crash(c) => {
                if let Some(text) = &c.stderr {
                    self.write_stderr(format!("{text}\n").as_bytes());
                }
                self.exit(c.code)
            }
            Step::Exit(e) => self.exit(e.code),
            Step::IgnoreStdinClose(_) => {
                self.state.ignore_stdin_close = true;
                Flow::Next
            }
            Step::AwaitStdinClose(_) => {
                while self.read_message().is_some() {}
                Flow::Next
            }
            Step::SpawnChild(child) => self.spawn_child(child.ignore_sigterm),
            Step::Background(_) => self.background(index),
            Step::NewProcessGroup(_) => self.new_process_group(),
            Step::CloseStdout(_) => {
                self.output.close_stdout();
                self.state.stdout_closed = true;
                Flow::Next
            }
            Step::CloseStderr(_) => {
                self.output.close_stderr();
                Flow::Next
            }
            Step::StopReading(_) => {
                close_stdin();
                self.input.close();
                self.state.stdin_closed = true;
                Flow::Next
            }
            // HTTP steps, refused when the script loads (see `load::http_only`).
            other => self.script_error(&format!(
                "step {index}: {}",
                crate::load::wrong_transport(other)
            )),
        }
    }

    /// The script's end: wait for stdin to close (logging what arrives), then exit 0.
    fn finish(&mut self) -> End {
        self.log.append(&Record::Completed {});
        if self.input.is_closed() {
            return End::Forever;
        }
        while let Some(message) = self.read_message() {
            if self.is_incidental(&message) {
                self.answer_incidental(&message);
            }
        }
        if self.state.ignore_stdin_close {
            return End::Forever;
        }
        match self.exit(0) {
            Flow::Stop(end) => end,
            Flow::Next => End::Exit(0),
        }
    }

    fn handshake(&mut self, index: usize, step: &Step, handshake: &Handshake) -> Flow {
        let initialize = Expect {
            method: Some("initialize".into()),
            has_id: Some(true),
            ..Expect::default()
        };
        let Some(request) = self.read_expected(&initialize) else {
            return self.unfinished(index, step);
        };
        if !matches(&initialize, &request) {
            return self.mismatch(index, &describe_expect(&initialize), request);
        }
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        let result = default_result(&request, &self.script.tools, handshake);
        self.send(response(id, result), None);
        let initialized = Expect {
            method: Some("notifications/initialized".into()),
            has_id: Some(false),
            ..Expect::default()
        };
        let Some(notification) = self.read_expected(&initialized) else {
            return self.unfinished(index, step);
        };
        if !matches(&initialized, &notification) {
            return self.mismatch(index, &describe_expect(&initialized), notification);
        }
        Flow::Next
    }

    fn discover(&mut self, index: usize, step: &Step, discover: &crate::script::Discover) -> Flow {
        let expect = Expect {
            method: Some("server/discover".into()),
            has_id: Some(true),
            meta: discover.meta.clone(),
            ..Expect::default()
        };
        if let Flow::Stop(end) = self.expect(index, step, &expect) {
            return Flow::Stop(end);
        }
        let id = self
            .state
            .latest_request
            .as_ref()
            .and_then(|r| r.get("id"))
            .cloned()
            .unwrap_or(Value::Null);
        self.send(
            response(id, Ok(crate::responder::discover_result(discover))),
            None,
        );
        Flow::Next
    }

    fn expect(&mut self, index: usize, step: &Step, expect: &Expect) -> Flow {
        let Some(received) = self.read_expected(expect) else {
            return self.unfinished(index, step);
        };
        if !matches(expect, &received) {
            return self.mismatch(index, &describe_expect(expect), received);
        }
        let is_request =
            received.get("method").is_some() && received.get("id").is_some_and(|id| !id.is_null());
        if let Some(name) = &expect.name {
            self.state.named.insert(name.clone(), received.clone());
        }
        if is_request {
            self.state.latest_request = Some(received);
        }
        Flow::Next
    }

    fn reply(&mut self, index: usize, reply: &Reply) -> Flow {
        let request = match &reply.to {
            Some(name) => self.state.named.get(name).cloned(),
            None => self.state.latest_request.clone(),
        };
        let request_id = request
            .as_ref()
            .and_then(|r| r.get("id"))
            .filter(|id| !id.is_null())
            .cloned();
        let id = match reply.id.clone() {
            Some(Value::String(text)) if text == "${id}" => request_id.map(|id| match id {
                Value::String(id) => Value::String(id),
                other => Value::String(other.to_string()),
            }),
            // The request's number written as a float (`2` → `2.0`), whatever id the client chose.
            Some(Value::String(text)) if text == "${id}.0" => {
                request_id.map(|id| match id.as_i64() {
                    Some(n) => Value::from(n as f64),
                    None => id,
                })
            }
            other => other.or(request_id),
        };
        let Some(id) = id else {
            let text = match &reply.to {
                Some(name) => {
                    format!("step {index}: reply to `{name}`, which has no id (a notification)")
                }
                None => format!("step {index}: reply, but no earlier expect received a request"),
            };
            return self.script_error(&text);
        };
        let outcome = match (&reply.error, &reply.result, &request) {
            (Some(error), _, _) => Err(error.clone()),
            (None, Some(result), _) => Ok(crate::responder::expand_env(result)),
            (None, None, Some(request)) => {
                default_result(request, &self.script.tools, &Handshake::default())
            }
            (None, None, None) => Ok(Value::Object(serde_json::Map::new())),
        };
        self.send(response(id, outcome), reply.split_writes);
        Flow::Next
    }

    fn long_line(&mut self, bytes: usize, newline: bool, lead: Option<&str>) {
        const CHUNK: usize = 1 << 20;
        if let Some(lead) = lead {
            self.log.append(&Record::Wrote {
                stream: "stdout".into(),
                summary: summarize(lead.as_bytes(), lead.len()),
            });
        }
        let head = vec![b'x'; bytes.min(1024)];
        self.log.append(&Record::Wrote {
            stream: "stdout".into(),
            summary: summarize(&head, bytes),
        });
        let chunk = vec![b'x'; bytes.min(CHUNK)];
        // The leading line and the first chunk go out in one write.
        let mut first = lead
            .map(|l| format!("{l}\n").into_bytes())
            .unwrap_or_default();
        let n = bytes.min(CHUNK);
        first.extend_from_slice(&chunk[..n]);
        if !self.output.stdout(&first) {
            return;
        }
        let mut left = bytes - n;
        while left > 0 {
            let n = left.min(CHUNK);
            if !self.output.stdout(&chunk[..n]) {
                return;
            }
            left -= n;
        }
        if newline {
            self.output.stdout(b"\n");
        }
    }

    fn spawn_child(&mut self, ignore_sigterm: bool) -> Flow {
        let started = self.invocation.sleeper().and_then(|mut command| {
            if ignore_sigterm {
                use std::os::unix::process::CommandExt;
                // SAFETY: between fork and exec only signal(2), which is async-signal-safe.
                // An ignored signal stays ignored across exec, so the sleeper ignores SIGTERM
                // from its first instruction: no window where it would still die of one.
                unsafe {
                    command.pre_exec(|| {
                        libc::signal(libc::SIGTERM, libc::SIG_IGN);
                        Ok(())
                    });
                }
            }
            command.spawn()
        });
        match started {
            Ok(child) => {
                self.log.append(&Record::Spawned {
                    pid: child.id(),
                    parent: std::process::id(),
                });
                Flow::Next
            }
            Err(e) => self.script_error(&format!("cannot start a child process: {e}")),
        }
    }

    fn new_process_group(&mut self) -> Flow {
        // SAFETY: setpgid(2) on this process only changes its process group; no memory is
        // touched. (0, 0): this process, a group named by its own pid.
        if unsafe { libc::setpgid(0, 0) } != 0 {
            let e = std::io::Error::last_os_error();
            // A client that started this server as a session leader (Python's
            // `start_new_session`) made it lead a group of its own already, and a session
            // leader may not move: that is the group the step asks for.
            // SAFETY: getpgrp(2) and getpid(2) only read this process's ids.
            let leads = unsafe { libc::getpgrp() == libc::getpid() };
            if !leads {
                return self.script_error(&format!("cannot lead a process group of its own: {e}"));
            }
        }
        Flow::Next
    }

    fn background(&mut self, index: usize) -> Flow {
        self.state.pending_input = self.input.pending().to_vec();
        let started = resume::save(&self.invocation.state_dir, &self.state).and_then(|state| {
            self.invocation
                .copy(index + 1, self.launch, &state)?
                .spawn()
        });
        self.state.pending_input.clear();
        match started {
            Ok(child) => {
                self.log.append(&Record::Spawned {
                    pid: child.id(),
                    parent: std::process::id(),
                });
                self.exit(0)
            }
            Err(e) => self.script_error(&format!("cannot start the background copy: {e}")),
        }
    }

    /// The next message from stdin, logged; `None` when stdin closed.
    /// The next message that matches `expect` or is not incidental; incidental ones on the
    /// way are answered with a default and recorded.
    fn read_expected(&mut self, expect: &Expect) -> Option<Value> {
        loop {
            let message = self.read_message()?;
            if matches(expect, &message) || !self.is_incidental(&message) {
                return Some(message);
            }
            self.answer_incidental(&message);
        }
    }

    fn is_incidental(&self, message: &Value) -> bool {
        let method = message.get("method").and_then(Value::as_str);
        method.is_some_and(|m| self.script.incidental.iter().any(|i| i == m))
    }

    fn answer_incidental(&mut self, message: &Value) {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.log.append(&Record::Incidental { method });
        if let Some(id) = message.get("id").filter(|id| !id.is_null()) {
            let result = crate::responder::incidental_result(message, &self.script.tools);
            self.send(response(id.clone(), result), None);
        }
    }

    fn read_message(&mut self) -> Option<Value> {
        loop {
            match self.input.next_line() {
                Line::Eof => return None,
                Line::Discarded(n) => {
                    let note =
                        format!("[a line of {n} bytes, over the {MAX_LINE}-byte limit, discarded]");
                    self.log.append(&Record::Received {
                        message: Value::String(note),
                    });
                }
                Line::Text(mut bytes) => {
                    if bytes.last() == Some(&b'\r') {
                        bytes.pop();
                    }
                    let message = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
                        Value::String(String::from_utf8_lossy(&bytes).into_owned())
                    });
                    self.log.append(&Record::Received {
                        message: message.clone(),
                    });
                    if bytes.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    return Some(message);
                }
            }
        }
    }

    fn send(&mut self, message: Value, split_writes: Option<usize>) {
        let mut line = serde_json::to_vec(&message).unwrap_or_default();
        line.push(b'\n');
        self.log.append(&Record::Sent { message });
        match split_writes {
            Some(parts) if parts > 1 => self.output.stdout_split(&line, parts),
            _ => self.output.stdout(&line),
        };
    }

    fn write_stdout(&mut self, bytes: Vec<u8>) {
        let text = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        self.log.append(&Record::Wrote {
            stream: "stdout".into(),
            summary: summarize(text, text.len()),
        });
        self.output.stdout(&bytes);
    }

    fn write_stderr(&mut self, bytes: &[u8]) {
        self.log.append(&Record::Wrote {
            stream: "stderr".into(),
            summary: summarize(bytes, bytes.len()),
        });
        self.output.stderr(bytes);
    }

    fn mismatch(&mut self, index: usize, expected: &str, received: Value) -> Flow {
        let text = received.to_string();
        let shown = summarize(text.as_bytes(), text.len());
        self.output.stderr(
            format!("mcp-mock-stdio: step {index} expected `{expected}`, received {shown}\n")
                .as_bytes(),
        );
        self.log.append(&Record::Mismatch {
            index,
            expected: expected.to_owned(),
            received,
        });
        self.exit(exit_code::MISMATCH.into())
    }

    fn unfinished(&mut self, index: usize, step: &Step) -> Flow {
        if self.state.ignore_stdin_close {
            return Flow::Stop(End::Forever);
        }
        let expected = describe_step(step);
        self.output
            .stderr(format!("mcp-mock-stdio: stdin closed before the script's end, at step {index} `{expected}`\n").as_bytes());
        self.log.append(&Record::Unfinished { expected });
        self.exit(exit_code::UNFINISHED.into())
    }

    fn script_error(&mut self, text: &str) -> Flow {
        self.output
            .stderr(format!("mcp-mock-stdio: {text}\n").as_bytes());
        self.exit(exit_code::USAGE.into())
    }

    fn exit(&mut self, code: i32) -> Flow {
        self.log.append(&Record::Exiting { code });
        Flow::Stop(End::Exit(code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(relaunch: usize) -> Script {
        let step = |ms| Step::Stall(crate::script::Stall { ms: Some(ms) });
        Script {
            transport: Default::default(),
            tools: vec![],
            steps: vec![step(0)],
            relaunch: (1..=relaunch as u64).map(|i| vec![step(i)]).collect(),
            incidental: Vec::new(),
            http: Default::default(),
            auth: None,
        }
    }

    #[test]
    fn later_launches_play_relaunch_entries_then_the_last() {
        let s = script(2);
        assert_eq!(steps_for_launch(&s, 1), &s.steps[..]);
        assert_eq!(steps_for_launch(&s, 2), &s.relaunch[0][..]);
        assert_eq!(steps_for_launch(&s, 3), &s.relaunch[1][..]);
        assert_eq!(steps_for_launch(&s, 9), &s.relaunch[1][..]);
    }

    #[test]
    fn without_relaunch_every_launch_plays_steps() {
        let s = script(0);
        assert_eq!(steps_for_launch(&s, 5), &s.steps[..]);
    }
}
