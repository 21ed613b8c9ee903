//! The hostile suite's runner: starts the validator with a mark in its environment, reads
//! its output, its peak memory (wait4) and wall time, and checks the promises.

use assert_cmd::assert::Assert;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `--timeout` of a case whose header states none (`# timeout: N`, in seconds): a case
/// whose promise is what happens when time runs out. A case whose promise is not (a verdict,
/// a limit, a sweep) states 5 s: its Python server must answer `initialize` within
/// `--timeout`, and beside a busy loop on each core at load 22 it took 1.1 s.
pub const TIMEOUT: Duration = Duration::from_secs(1);
/// A whole run: the probe's handshake, then the checks' sessions concurrently, each at most
/// two waits and a handshake, the exit wait and the final sweep: 6 × --timeout, plus 4 s for
/// starting Python servers on a loaded 2-core machine.
pub fn run_bound(timeout: Duration) -> Duration {
    6 * timeout + Duration::from_secs(4)
}
/// One check's own time (its JSON `millis`): a launch's handshake, which waits up to twice
/// `--timeout` on a slow start-up (`validator/src/patience.rs`), and one more wait, plus 2 s
/// of margin (garbage-flood's before-initialize: 12.7 s at `--timeout 5s`, load 24).
pub fn check_bound(timeout: Duration) -> Duration {
    3 * timeout + Duration::from_secs(2)
}
/// Peak RSS of the validator process: ru_maxrss of wait4, which also covers what it reaped
/// and, on Linux, the test process's own peak at the spawn (exec keeps the larger of the two):
/// an upper bound, never an under-count.
pub const RSS_BOUND_MIB: i64 = 200;

/// The secrets given to the validator; none may appear in anything it prints or writes.
pub const ENV_SECRET: &str = "env-secret-7c1f9a2b";
pub const HEADER_SECRET: &str = "hdr-secret-4e8d0c6a";
pub const URL_USER: &str = "urluser91";
pub const URL_PASSWORD: &str = "urlpass-5b7e3f";
pub const URL_TOKEN: &str = "urltoken-2a9c4d8e";
const SECRETS: &[&str] = &[ENV_SECRET, HEADER_SECRET, URL_USER, URL_PASSWORD, URL_TOKEN];

/// The Python interpreter itself (not a version manager's shim, which costs a quarter
/// second a start).
pub fn python() -> &'static str {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PYTHON.get_or_init(|| {
        let output = Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    })
}

/// What a case file states about itself.
pub struct Case {
    pub name: String,
    pub exit: i32,
    pub says: Vec<String>,
    /// Texts that must appear nowhere on stdout or stderr (`# never-says: TEXT`).
    pub never_says: Vec<String>,
    /// More arguments for `validate`, before the target (`# args: A B …`, split at spaces).
    pub args: Vec<String>,
    /// The `--timeout` it is run with ([`TIMEOUT`] unless `# timeout: N` says).
    pub timeout: Duration,
}

impl Case {
    /// Reads the `# exit: N`, `# says: TEXT` (on stdout or stderr), `# never-says: TEXT`,
    /// `# args: A B …` and `# timeout: N` (in seconds) header lines.
    pub fn read(path: &Path) -> Case {
        let text = std::fs::read_to_string(path).unwrap();
        let header = |key: &str| -> Vec<String> {
            text.lines()
                .take_while(|l| l.starts_with('#'))
                .filter_map(|l| l.strip_prefix(&format!("# {key}: ")).map(str::to_string))
                .collect()
        };
        let exit = header("exit")
            .first()
            .and_then(|e| e.parse().ok())
            .unwrap_or_else(|| {
                panic!("{} has no `# exit: N` header", path.display());
            });
        let timeout = header("timeout").first().map_or(TIMEOUT, |t| {
            Duration::from_secs(t.parse().unwrap_or_else(|_| {
                panic!("{}: `# timeout: {t}` is not whole seconds", path.display())
            }))
        });
        Case {
            name: path.file_stem().unwrap().to_string_lossy().into(),
            exit,
            says: header("says"),
            never_says: header("never-says"),
            args: header("args")
                .iter()
                .flat_map(|a| a.split_whitespace().map(str::to_string))
                .collect(),
            timeout,
        }
    }
}

/// A hostile HTTP server started by the test (it prints its port first).
pub struct HttpServer {
    child: Child,
    pub port: u16,
}

impl HttpServer {
    pub fn start(script: &Path) -> HttpServer {
        let mut child = Command::new(python())
            .arg("-S")
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{}: no port, got {line:?}", script.display()));
        HttpServer { child, port }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One finished run of the validator.
pub struct Run {
    pub output: Output,
    pub wall: Duration,
    pub peak_mib: i64,
    pub json: String,
    pub junit: String,
    pub mark: String,
    _dir: tempfile::TempDir,
}

impl Run {
    /// `validate --timeout T --json --junit ARGS… SCRIPT` (the script last, for stdio), T
    /// the case's timeout.
    pub fn validate(case: &Case, args: &[&str], script: &Path, http: Option<&HttpServer>) -> Run {
        Run::measure("mcp-hostile", |command, json, junit| {
            command
                .args([
                    "validate",
                    "--timeout",
                    &format!("{}s", case.timeout.as_secs()),
                ])
                .arg("--json")
                .arg(json)
                .arg("--junit")
                .arg(junit)
                .args(&case.args)
                .args(args);
            if http.is_none() {
                command.arg(script);
            }
        })
    }

    /// `run --client 'python3 -S DRIVER' --json --junit PREFIX`: a hostile driver over the
    /// scenarios of `prefix`.
    pub fn client(driver: &Path, prefix: &str) -> Run {
        Run::measure("mcp-hostile-driver", |command, json, junit| {
            command
                .args(["run", "--client"])
                .arg(format!("{} -S {}", python(), driver.display()))
                .args(["--step-guard-ms", "5000", "--json"])
                .arg(json)
                .arg("--junit")
                .arg(junit)
                .arg(prefix);
        })
    }

    /// Runs `mcp-conformance` with the arguments `set` gives it (the JSON and JUnit report
    /// paths handed in), its environment marked so what it leaves can be found, and measures
    /// it.
    fn measure(mark_prefix: &str, set: impl FnOnce(&mut Command, &Path, &Path)) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let (json, junit) = (dir.path().join("r.json"), dir.path().join("r.xml"));
        let mark = format!(
            "{mark_prefix}-{}-{}",
            std::process::id(),
            dir.path().file_name().unwrap().to_string_lossy()
        );
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-conformance"));
        set(&mut command, &json, &junit);
        command
            .env("MCP_HOSTILE_MARK", &mark)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let (output, wall, peak_mib) = run_measured(command);
        let read = |p: &PathBuf| std::fs::read_to_string(p).unwrap_or_default();
        Run {
            output,
            wall,
            peak_mib,
            json: read(&json),
            junit: read(&junit),
            mark,
            _dir: dir,
        }
    }

    /// No line of the terminal or the reports is one a client or server wrote: a text it
    /// controls that holds `marker` (or a summary of its own) shows its newline escaped
    /// (`\n`) before it, on a line the report started; the JSON parses and the JUnit holds
    /// no character XML 1.0 cannot carry.
    pub fn assert_no_forged_line(&self, case: &Case, markers: &[&str]) {
        let stdout = String::from_utf8_lossy(&self.output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&self.output.stderr).into_owned();
        let shown = format!("{}: stdout:\n{stdout}\nstderr:\n{stderr}", case.name);
        for (what, text) in [
            ("stdout", &stdout),
            ("stderr", &stderr),
            ("junit", &self.junit),
        ] {
            for line in text.lines() {
                for marker in markers {
                    if let Some(at) = line.find(marker) {
                        assert!(
                            line[..at].contains("\\n"),
                            "{}: a forged line on the {what}: {line:?}\n{shown}",
                            case.name
                        );
                    }
                }
            }
        }
        if !self.json.is_empty() {
            serde_json::from_str::<serde_json::Value>(&self.json)
                .unwrap_or_else(|e| panic!("{}: the JSON report does not parse: {e}", case.name));
        }
        let raw = self
            .junit
            .chars()
            .find(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'));
        assert!(
            raw.is_none(),
            "{}: the JUnit report holds {raw:?}, which XML 1.0 cannot carry",
            case.name
        );
    }

    /// Every promise of the suite (see the module documentation).
    pub fn assert_promises(&self, case: &Case) {
        self.assert_promises_within(case, run_bound(case.timeout));
    }

    /// Every promise of the suite, the whole run within `bound`.
    pub fn assert_promises_within(&self, case: &Case, bound: Duration) {
        let stdout = String::from_utf8_lossy(&self.output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&self.output.stderr).into_owned();
        let shown = format!("{}: stdout:\n{stdout}\nstderr:\n{stderr}", case.name);
        Assert::new(self.output.clone())
            .append_context("case", case.name.clone())
            .code(case.exit);
        for text in &case.says {
            assert!(
                stdout.contains(text.as_str()) || stderr.contains(text.as_str()),
                "{}: `{text}` is not said:\n{shown}",
                case.name
            );
        }
        for text in &case.never_says {
            assert!(
                !stdout.contains(text.as_str()) && !stderr.contains(text.as_str()),
                "{}: `{text}` is said:\n{shown}",
                case.name
            );
        }
        for secret in SECRETS {
            for (what, text) in [
                ("stdout", &stdout),
                ("stderr", &stderr),
                ("json", &self.json),
                ("junit", &self.junit),
            ] {
                assert!(
                    !text.contains(secret),
                    "{}: the secret {secret} is in the {what}:\n{shown}",
                    case.name
                );
            }
        }
        for (what, text) in [("stdout", &stdout), ("stderr", &stderr)] {
            let raw = text.chars().find(|c| c.is_control() && *c != '\n');
            assert!(
                raw.is_none(),
                "{}: a raw control character {raw:?} on the {what}:\n{shown}",
                case.name
            );
        }
        assert!(
            self.wall <= bound,
            "{}: took {:?} (bound {bound:?}):\n{shown}",
            case.name,
            self.wall
        );
        if let Ok(report) = serde_json::from_str::<serde_json::Value>(&self.json) {
            for check in report["targets"][0]["checks"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let millis = check["millis"].as_u64().unwrap_or(0);
                let bound = check_bound(case.timeout);
                assert!(
                    Duration::from_millis(millis) <= bound,
                    "{}: {} took {millis} ms (bound {bound:?}):\n{shown}",
                    case.name,
                    check["id"]
                );
            }
        }
        assert!(
            self.peak_mib < RSS_BOUND_MIB,
            "{}: peak RSS {} MiB:\n{shown}",
            case.name,
            self.peak_mib
        );
        let left = processes_marked(&self.mark);
        assert!(
            left.is_empty(),
            "{}: processes left: {left:?}\n{shown}",
            case.name
        );
        eprintln!(
            "{}: exit {:?}, {:?}, peak {} MiB",
            case.name,
            self.output.status.code(),
            self.wall,
            self.peak_mib
        );
    }
}

/// Runs `command` to its end: its output, wall time and peak RSS in MiB (wait4).
pub fn run_measured(mut command: Command) -> (Output, Duration, i64) {
    let started = Instant::now();
    // Waited on below with wait4, which also gives the peak memory.
    #[allow(clippy::zombie_processes)]
    let mut child = command.spawn().unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let pid = i32::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills in; the pid is our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    let wall = started.elapsed();
    let output = Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    (output, wall, usage.ru_maxrss / 1024)
}

/// Live processes whose environment holds `mark` (waits up to 2 s for the dying to go).
pub fn processes_marked(mark: &str) -> Vec<(u32, String)> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let found = scan(mark);
        if found.is_empty() || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn scan(mark: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !environ.windows(mark.len()).any(|w| w == mark.as_bytes()) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .unwrap_or("");
        if state != "Z" && !state.is_empty() {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
        }
    }
    found
}
