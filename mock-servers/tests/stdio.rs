//! The `mcp-mock-stdio` binary, driven as a child process the way a client drives it.
//! Every wait is on the child's output or exit, with a bound; no sleeps.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use mcp_mock_servers::read_wire_log;
use mcp_mock_servers::wire_log::Record;
use serde_json::{json, Value};

const BOUND: Duration = Duration::from_secs(20);

/// A running mock with its pipes drained by threads.
struct Mock {
    pid: u32,
    stdin: Option<ChildStdin>,
    stdout: Receiver<String>,
    exit: Receiver<ExitStatus>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    log: PathBuf,
    dir: tempfile::TempDir,
    /// Other processes to kill when the test ends (background copies, children).
    leftovers: Vec<u32>,
}

impl Mock {
    fn start(script: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self::start_in(dir, script)
    }

    fn start_in(dir: tempfile::TempDir, script: &str) -> Self {
        let script_path = dir.path().join("script.toml");
        std::fs::write(&script_path, script).unwrap();
        let log = dir.path().join("wire.jsonl");
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-mock-stdio"))
            .arg("--script")
            .arg(&script_path)
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut stderr = child.stderr.take().unwrap();
        let (line_tx, line_rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                if line_tx.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = stderr.read_to_end(&mut all);
            all
        });
        let (exit_tx, exit_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = exit_tx.send(child.wait().unwrap());
        });
        Self {
            pid,
            stdin,
            stdout: line_rx,
            exit: exit_rx,
            stderr: Some(stderr),
            log,
            dir,
            leftovers: vec![],
        }
    }

    fn send(&mut self, message: Value) {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        self.stdin
            .as_mut()
            .expect("stdin is open")
            .write_all(&line)
            .unwrap();
    }

    fn recv(&self) -> Value {
        let line = self.stdout.recv_timeout(BOUND).expect("a line on stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not one JSON line ({e}): {line}"))
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    fn wait(&mut self) -> ExitStatus {
        self.exit.recv_timeout(BOUND).expect("the mock exits")
    }

    fn stderr(&mut self) -> String {
        let bytes = self.stderr.take().unwrap().join().unwrap();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn records(&self) -> Vec<Record> {
        read_wire_log(&self.log).unwrap()
    }

    fn handshake(&mut self) {
        self.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
        let reply = self.recv();
        assert_eq!(reply["id"], 0);
        assert_eq!(reply["result"]["protocolVersion"], "2024-11-05");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        for pid in self.leftovers.iter().copied().chain([self.pid]) {
            // SAFETY: kill(2) on pids this test started.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

const HANDSHAKE_LIST_CALL: &str = r#"
steps = [
  { handshake = {} },
  { expect = { method = "tools/list" } },
  { reply = {} },
  { expect = { method = "tools/call", params = { name = "echo" } } },
  { reply = {} },
]
"#;

#[test]
fn a_scripted_session_answers_handshake_list_and_call_then_exits_on_stdin_close() {
    let mut mock = Mock::start(HANDSHAKE_LIST_CALL);
    mock.handshake();
    mock.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let list = mock.recv();
    assert_eq!(list["id"], 1);
    assert_eq!(list["result"]["tools"][0]["name"], "echo");
    assert!(list["result"]["tools"][0]["inputSchema"].is_object());
    mock.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}));
    let call = mock.recv();
    assert_eq!(
        call,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "called echo"}], "isError": false}})
    );
    mock.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled"}));
    mock.close_stdin();
    assert_eq!(mock.wait().code(), Some(0));
    let records = mock.records();
    assert!(matches!(records[0], Record::Started { launch: 1, pid, .. } if pid == mock.pid));
    assert_eq!(records.last(), Some(&Record::Exiting { code: 0 }));
    let steps: Vec<&str> = records
        .iter()
        .filter_map(|r| match r {
            Record::Step { describe, .. } => Some(describe.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        steps,
        [
            "handshake",
            "expect tools/list",
            "reply",
            r#"expect tools/call with params {"name":"echo"}"#,
            "reply"
        ]
    );
    let received = records
        .iter()
        .filter(|r| matches!(r, Record::Received { .. }))
        .count();
    assert_eq!(
        received, 5,
        "every line the client sent is logged, the extra one too"
    );
}

#[test]
fn a_message_that_does_not_match_exits_3_with_the_mismatch_logged() {
    // `prompts/get` is outside the default incidental policy (`tools/list` would be answered).
    let mut mock = Mock::start("steps = [{ expect = { method = \"tools/call\" } }]");
    mock.send(json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get"}));
    assert_eq!(mock.wait().code(), Some(3));
    let stderr = mock.stderr();
    assert!(
        stderr.contains("step 0 expected `tools/call`, received {"),
        "{stderr}"
    );
    let mismatch = mock
        .records()
        .into_iter()
        .find(|r| matches!(r, Record::Mismatch { .. }));
    assert_eq!(
        mismatch,
        Some(Record::Mismatch {
            index: 0,
            expected: "tools/call".into(),
            received: json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get"}),
        })
    );
    assert_eq!(mock.records().last(), Some(&Record::Exiting { code: 3 }));
}

#[test]
fn stdin_closing_before_the_end_exits_4_naming_the_first_unreached_step() {
    let mut mock = Mock::start(HANDSHAKE_LIST_CALL);
    mock.handshake();
    mock.close_stdin();
    assert_eq!(mock.wait().code(), Some(4));
    assert!(mock.stderr().contains("expect tools/list"));
    let records = mock.records();
    assert!(records.contains(&Record::Unfinished {
        expected: "expect tools/list".into()
    }));
}

#[test]
fn background_leaves_a_live_copy_that_plays_the_rest_on_the_same_pipes() {
    let mut mock = Mock::start(
        "steps = [{ background = {} }, { handshake = {} }, { expect = { method = \"ping\" } }, { reply = {} }]",
    );
    assert_eq!(mock.wait().code(), Some(0), "the launcher exits at once");
    let records = mock.records();
    let copy = records
        .iter()
        .find_map(|r| match r {
            Record::Spawned { pid, parent } if *parent == mock.pid => Some(*pid),
            _ => None,
        })
        .expect("the copy's pid is logged");
    mock.leftovers.push(copy);
    assert!(alive(copy));
    mock.handshake();
    mock.send(json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}));
    assert_eq!(
        mock.recv(),
        json!({"jsonrpc": "2.0", "id": 9, "result": {}})
    );
    mock.close_stdin();
    assert_eq!(
        mock.stdout.recv_timeout(BOUND),
        Err(RecvTimeoutError::Disconnected),
        "the copy exits on stdin close"
    );
    let records = mock.records();
    let started: Vec<(u32, u32)> = records
        .iter()
        .filter_map(|r| match r {
            Record::Started { pid, launch, .. } => Some((*pid, *launch)),
            _ => None,
        })
        .collect();
    // The copy was announced by the launcher's `Spawned`; only the launcher logs `Started`.
    assert_eq!(started, [(mock.pid, 1)]);
    let handed_over = records
        .iter()
        .position(|r| matches!(r, Record::Spawned { .. }))
        .unwrap();
    let copy_received = records
        .iter()
        .position(|r| matches!(r, Record::Received { .. }))
        .unwrap();
    assert!(
        handed_over < copy_received,
        "the launcher's records come first: {records:?}"
    );
    assert_eq!(records.last(), Some(&Record::Exiting { code: 0 }));
}

#[test]
fn spawn_child_leaves_a_descendant_in_the_same_process_group() {
    let mut mock =
        Mock::start("steps = [{ spawn_child = {} }, { expect = { method = \"ping\" } }]");
    mock.send(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    mock.close_stdin();
    assert_eq!(mock.wait().code(), Some(0));
    let records = mock.records();
    let Some(Record::Started { pgid, .. }) = records.first().cloned() else {
        panic!("{records:?}")
    };
    let child = records
        .iter()
        .find_map(|r| match r {
            Record::Spawned { pid, .. } => Some(*pid),
            _ => None,
        })
        .expect("the child's pid is logged");
    mock.leftovers.push(child);
    assert!(alive(child));
    // SAFETY: getpgid on a pid this test started.
    assert_eq!(unsafe { libc::getpgid(child as i32) } as u32, pgid);
}

#[test]
fn a_reply_split_across_writes_arrives_as_one_valid_line() {
    let mut mock = Mock::start(
        "steps = [{ expect = { method = \"tools/call\" } }, { reply = { split_writes = 7, result = { content = [{ type = \"text\", text = \"a fairly long text so the line has something to split\" }] } } }]",
    );
    mock.send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo"}}),
    );
    let reply = mock.recv();
    assert_eq!(reply["id"], 3);
    assert_eq!(reply["result"]["content"][0]["type"], "text");
    mock.close_stdin();
    assert_eq!(mock.wait().code(), Some(0));
}

#[test]
fn the_second_launch_plays_the_relaunch_steps() {
    let dir = tempfile::tempdir().unwrap();
    let script = "steps = [{ crash = { code = 7, stderr = \"first launch\" } }]\nrelaunch = [[{ exit = { code = 5 } }]]\n";
    let mut first = Mock::start_in(dir, script);
    assert_eq!(first.wait().code(), Some(7));
    assert_eq!(first.stderr(), "first launch\n");
    let dir = std::mem::replace(&mut first.dir, tempfile::tempdir().unwrap());
    let mut second = Mock::start_in(dir, script);
    assert_eq!(second.wait().code(), Some(5));
    assert!(second.records().contains(&Record::Started {
        pid: second.pid,
        pgid: pgid_of(&second),
        launch: 2
    }));
}

fn pgid_of(mock: &Mock) -> u32 {
    mock.records()
        .iter()
        .find_map(|r| match r {
            Record::Started { pid, pgid, .. } if *pid == mock.pid => Some(*pgid),
            _ => None,
        })
        .unwrap()
}

#[test]
fn a_stderr_flood_of_50_mb_is_written_quickly_when_drained() {
    let mut mock = Mock::start(
        "steps = [{ stderr_flood = { bytes = 50_000_000, invalid_utf8 = true, first_line = \"FIRST\", last_line = \"LAST\" } }]",
    );
    mock.close_stdin();
    assert_eq!(mock.wait().code(), Some(0));
    let stderr = mock.stderr.take().unwrap().join().unwrap();
    assert_eq!(stderr.len(), 50_000_000 + 6 + 5);
    assert!(stderr.ends_with(b"\nLAST\n"));
}

#[test]
fn a_script_error_names_the_file_and_line_and_exits_2() {
    let mut mock = Mock::start("steps = [\n  { handshake = {} },\n  { dance = {} },\n]\n");
    assert_eq!(mock.wait().code(), Some(2));
    let stderr = mock.stderr();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("mcp-mock-stdio: "), "{stderr}");
    assert!(stderr.contains("script.toml:3:"), "{stderr}");
    assert!(stderr.contains("dance"), "{stderr}");
}

#[test]
fn a_missing_script_file_exits_2_naming_it() {
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_mcp-mock-stdio"))
        .args(["--script", "/nonexistent/script.toml"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "cannot read /nonexistent/script.toml: ",
        ));
}

#[test]
fn banners_and_long_lines_are_written_on_stdout_and_summarized_in_the_log() {
    let mut mock = Mock::start("steps = [{ banner = { lines = [\"hello\", \"world\"] } }, { long_line = { bytes = 300000 } }]");
    assert_eq!(mock.stdout.recv_timeout(BOUND).unwrap(), "hello");
    assert_eq!(mock.stdout.recv_timeout(BOUND).unwrap(), "world");
    assert_eq!(mock.stdout.recv_timeout(BOUND).unwrap().len(), 300000);
    mock.close_stdin();
    assert_eq!(mock.wait().code(), Some(0));
    let wrote: Vec<String> = mock
        .records()
        .into_iter()
        .filter_map(|r| match r {
            Record::Wrote { summary, .. } => Some(summary),
            _ => None,
        })
        .collect();
    assert_eq!(wrote[..2], ["hello", "world"]);
    assert!(wrote[2].ends_with(" … (300000 bytes)"));
}

#[test]
fn stop_reading_makes_the_clients_next_write_fail() {
    let mut mock = Mock::start(
        "steps = [{ stop_reading = {} }, { notify = { method = \"notifications/message\" } }]",
    );
    let note = mock.recv();
    assert_eq!(note["method"], "notifications/message");
    let error = mock
        .stdin
        .as_mut()
        .unwrap()
        .write_all(b"{}\n")
        .expect_err("the pipe's read end is closed");
    assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe);
    assert!(mock.exit.try_recv().is_err(), "the process lives on");
}

#[test]
fn a_server_discover_probe_before_initialize_is_method_not_found_and_incidental() {
    // The 2026-07-28 clients probe first; an older server says it has no such method.
    let mut mock = Mock::start(HANDSHAKE_LIST_CALL);
    mock.send(json!({"jsonrpc": "2.0", "id": "probe", "method": "server/discover", "params": {}}));
    let reply = mock.recv();
    assert_eq!(
        (&reply["id"], &reply["error"]["code"]),
        (&json!("probe"), &json!(-32601)),
        "{reply}"
    );
    mock.handshake();
    assert!(mock.records().contains(&Record::Incidental {
        method: "server/discover".into()
    }));
}
