//! `cargo bench --bench validate_load`: whether `mcp-conformance validate` gives every real
//! server the validator's tests install the same verdicts on a quiet machine and beside a
//! CPU hog on every core, at the default `--timeout`.
//!
//! Installs the servers first if needed (`tests/validate/install-servers.sh`, npm and PyPI).
//! Each server is validated with its checked-in baseline (`tests/validate/baseline/`), once
//! with nothing else running and once beside a busy loop on each core (`timeout`-bounded and
//! killed after the loaded runs). The servers over Streamable HTTP are started on
//! 127.0.0.1 before their run (their start-up is not timed) and killed after it.
//!
//! Prints one row a server: the verdict counts quiet and loaded, whether every check's
//! verdict is the same (else which checks differ, quiet → loaded), the exit codes and the
//! wall time of each run; and the load average before and after each half.

#[path = "../tests/support/cpu_hog.rs"]
mod cpu_hog;
#[path = "../tests/validate/servers.rs"]
#[allow(dead_code)]
mod servers;

use cpu_hog::CpuHog;
use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The longest the busy loops may run, whatever happens to the bench: `timeout` ends them.
const HOG_BOUND: u32 = 900;
/// How long an HTTP server may take to listen.
const LISTEN_BOUND: Duration = Duration::from_secs(30);

/// How a server is reached.
enum Reach {
    /// A command validated over stdio.
    Stdio(Vec<String>),
    /// A command that serves Streamable HTTP on the port it is given: `(command, env)` with
    /// the port's place marked `{port}`.
    Http(Vec<String>, Vec<(String, String)>),
}

/// One real server: its name, how to reach it and its baseline file.
struct Server {
    name: &'static str,
    reach: Reach,
    baseline: &'static str,
}

/// What one run gave.
struct Outcome {
    code: i32,
    wall: Duration,
    /// `(check, revision)` → status.
    verdicts: BTreeMap<(String, String), String>,
    /// `(check, revision)` → the finding's note, where it has one.
    notes: BTreeMap<(String, String), String>,
    /// The end of the terminal output when no report was written.
    said: String,
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let installed = servers::installed(root);
    let scratch = tempfile::tempdir().unwrap();
    let list = real_servers(root, &installed, scratch.path());
    let bin = Path::new(env!("CARGO_BIN_EXE_mcp-conformance"));

    let before_quiet = load();
    let quiet: Vec<Outcome> = list.iter().map(|s| run(bin, root, s)).collect();
    let after_quiet = load();
    let hog = CpuHog::start(HOG_BOUND);
    let before_loaded = load();
    let loaded: Vec<Outcome> = list.iter().map(|s| run(bin, root, s)).collect();
    let after_loaded = load();
    let cores = hog.cores();
    drop(hog);

    println!(
        "validate at the default --timeout, quiet (load {before_quiet} → {after_quiet}) and beside {cores} busy loop(s) (load {before_loaded} → {after_loaded})"
    );
    println!();
    println!("| server | quiet | loaded | verdicts | exit quiet / loaded | wall quiet / loaded |");
    println!("| --- | --- | --- | --- | --- | ---: |");
    let mut differing = 0;
    for ((server, q), l) in list.iter().zip(&quiet).zip(&loaded) {
        let same = if q.verdicts == l.verdicts && !q.verdicts.is_empty() {
            "identical".to_string()
        } else {
            differing += 1;
            differences(q, l)
        };
        println!(
            "| {} | {} | {} | {} | {} / {} | {:.1} s / {:.1} s |",
            server.name,
            counts(q),
            counts(l),
            same,
            q.code,
            l.code,
            q.wall.as_secs_f64(),
            l.wall.as_secs_f64()
        );
    }
    println!();
    // Why a verdict differs: the notes of the checks judged in both runs, and of those judged
    // in one run only, `server.discover` (whether the revision was spoken).
    for ((server, q), l) in list.iter().zip(&quiet).zip(&loaded) {
        for (key, status) in &q.verdicts {
            let other = l.verdicts.get(key);
            if other == Some(status) || (other.is_none() && key.0 != "server.discover") {
                continue;
            }
            for (when, outcome) in [("quiet", q), ("loaded", l)] {
                println!(
                    "{} {}@{} {when}: {} ({})",
                    server.name,
                    key.0,
                    key.1,
                    outcome.verdicts.get(key).map_or("none", String::as_str),
                    outcome.notes.get(key).map_or("", String::as_str)
                );
            }
        }
    }
    println!(
        "{} of {} servers with identical verdicts",
        list.len() - differing,
        list.len()
    );
}

/// The servers the validator's tests run (`tests/validate.rs`), launched as they do.
fn real_servers(root: &Path, installed: &Path, scratch: &Path) -> Vec<Server> {
    let shown = |p: PathBuf| p.display().to_string();
    let npm = |name: &str| {
        shown(installed.join(format!(
            "node/node_modules/@modelcontextprotocol/{name}/dist/index.js"
        )))
    };
    let files = scratch.join("files");
    std::fs::create_dir_all(files.join("sub")).unwrap();
    std::fs::write(files.join("notes.txt"), "kept as it is\n").unwrap();
    let repo = scratch.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    servers::git_repo_with_one_commit(&repo);
    let python = shown(installed.join("venv/bin/python"));
    let python_server = shown(root.join("tests/validate/python_server.py"));
    let ts_server = shown(root.join("tests/validate/ts_server.cjs"));
    let loopback = shown(root.join("tests/validate/loopback.js"));
    let strings = |items: &[&str]| items.iter().map(ToString::to_string).collect::<Vec<_>>();
    vec![
        Server {
            name: "server-everything",
            reach: Reach::Stdio(strings(&["node", &npm("server-everything"), "stdio"])),
            baseline: "server-everything.toml",
        },
        Server {
            name: "server-filesystem",
            reach: Reach::Stdio(strings(&[
                "node",
                &npm("server-filesystem"),
                &shown(files.clone()),
            ])),
            baseline: "server-filesystem.toml",
        },
        Server {
            name: "server-memory",
            reach: Reach::Stdio(strings(&[
                "env",
                &format!("MEMORY_FILE_PATH={}", shown(scratch.join("memory.jsonl"))),
                "node",
                &npm("server-memory"),
            ])),
            baseline: "server-memory.toml",
        },
        Server {
            name: "mcp-server-time",
            reach: Reach::Stdio(strings(&[
                &shown(installed.join("venv-time/bin/mcp-server-time")),
                "--local-timezone",
                "UTC",
            ])),
            baseline: "mcp-server-time.toml",
        },
        Server {
            name: "mcp-server-git",
            reach: Reach::Stdio(strings(&[
                &shown(installed.join("venv-time/bin/mcp-server-git")),
                "--repository",
                &shown(repo.clone()),
            ])),
            baseline: "mcp-server-git.toml",
        },
        Server {
            name: "Python SDK",
            reach: Reach::Stdio(strings(&[&python, &python_server])),
            baseline: "python-sdk.toml",
        },
        Server {
            name: "TypeScript SDK",
            reach: Reach::Stdio(strings(&["node", &ts_server])),
            baseline: "ts-sdk.toml",
        },
        Server {
            name: "server-everything (HTTP)",
            reach: Reach::Http(
                strings(&[
                    "node",
                    "--require",
                    &loopback,
                    &npm("server-everything"),
                    "streamableHttp",
                ]),
                vec![("PORT".into(), "{port}".into())],
            ),
            baseline: "server-everything-http.toml",
        },
        Server {
            name: "Python SDK (HTTP)",
            reach: Reach::Http(
                strings(&[&python, &python_server, "streamable-http", "{port}"]),
                vec![],
            ),
            baseline: "python-sdk-http.toml",
        },
        Server {
            name: "TypeScript SDK (HTTP)",
            reach: Reach::Http(
                strings(&["node", &ts_server, "streamable-http", "{port}"]),
                vec![],
            ),
            baseline: "ts-sdk-http.toml",
        },
    ]
}

/// Validates `server` with its baseline at the default `--timeout`.
fn run(bin: &Path, root: &Path, server: &Server) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let baseline = root.join("tests/validate/baseline").join(server.baseline);
    let mut command = Command::new(bin);
    command
        .arg("validate")
        .arg("--json")
        .arg(&json)
        .arg("--baseline")
        .arg(&baseline)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let _served = match &server.reach {
        Reach::Stdio(argv) => {
            command.arg("--").args(argv);
            None
        }
        Reach::Http(argv, env) => {
            let port = servers::server_port();
            let fill = |s: &String| s.replace("{port}", &port.to_string());
            let mut serve = Command::new(&argv[0]);
            serve
                .args(argv[1..].iter().map(fill))
                .envs(env.iter().map(|(k, v)| (k.clone(), fill(v))))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0);
            let served = Served(serve.spawn().expect("start an HTTP server"));
            let deadline = Instant::now() + LISTEN_BOUND;
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                assert!(
                    Instant::now() < deadline,
                    "{} is not listening after {LISTEN_BOUND:?}",
                    server.name
                );
                std::thread::sleep(Duration::from_millis(50));
            }
            command
                .arg("--url")
                .arg(format!("http://127.0.0.1:{port}/mcp"));
            Some(served)
        }
    };
    let started = Instant::now();
    let output = command.output().expect("run mcp-conformance validate");
    let wall = started.elapsed();
    let report: Value = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let checks = report["targets"][0]["checks"].as_array().cloned();
    let field = |c: &Value, name: &str| c[name].as_str().unwrap_or_default().to_string();
    let key = |c: &Value| (field(c, "id"), field(c, "revision"));
    let verdicts = checks
        .iter()
        .flatten()
        .map(|c| (key(c), field(c, "status")))
        .collect();
    let notes = checks
        .iter()
        .flatten()
        .filter(|c| c["note"].is_string())
        .map(|c| (key(c), field(c, "note")))
        .collect();
    let said = String::from_utf8_lossy(&output.stderr);
    Outcome {
        code: output.status.code().unwrap_or(-1),
        wall,
        verdicts,
        notes,
        said: said
            .lines()
            .last()
            .unwrap_or_default()
            .chars()
            .take(160)
            .collect(),
    }
}

/// `12 pass, 3 skip, …`, or what the validator said when it wrote no report.
fn counts(outcome: &Outcome) -> String {
    if outcome.verdicts.is_empty() {
        return format!("no report: {}", outcome.said);
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for status in outcome.verdicts.values() {
        *counts.entry(status).or_default() += 1;
    }
    counts
        .iter()
        .map(|(status, n)| format!("{n} {status}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The checks whose verdict differs, `id@revision quiet → loaded`.
fn differences(quiet: &Outcome, loaded: &Outcome) -> String {
    let mut keys: Vec<&(String, String)> = quiet.verdicts.keys().collect();
    keys.extend(loaded.verdicts.keys());
    keys.sort();
    keys.dedup();
    let none = String::from("none");
    keys.into_iter()
        .filter(|k| quiet.verdicts.get(*k) != loaded.verdicts.get(*k))
        .map(|k| {
            format!(
                "{}@{} {} → {}",
                k.0,
                k.1,
                quiet.verdicts.get(k).unwrap_or(&none),
                loaded.verdicts.get(k).unwrap_or(&none)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
        .chars()
        .take(600)
        .collect::<String>()
        + if quiet.verdicts.is_empty() || loaded.verdicts.is_empty() {
            " (a run wrote no report)"
        } else {
            ""
        }
}

/// The 1-minute load average.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// A server process, its whole process group killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            // SAFETY: killpg only sends a signal, to the group spawn() created for this child.
            unsafe { libc::killpg(pid, libc::SIGKILL) };
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
