//! `cargo bench --bench drivers`: each driver row of adapters/matrix.toml over its profile's
//! scenarios, started once per scenario (`run --client … --fresh-drivers`) and reused
//! (`run --client …`), side by side in one run.
//!
//! Needs the rows' drivers: `bash tests/validate/install-servers.sh` (the SDK rows) and
//! `cargo build -p mcp-adapter-rmcp -p mcp-adapter-yoagent -p mcp-adapter-kova` (the Rust
//! rows' debug binaries, as the matrix builds them). `BENCH_ROWS=python-sdk,typescript-sdk`
//! runs only those rows. For each row, one run of each way in turn; it prints the wall
//! time, the CPU (user + system of the run's whole process tree), the driver processes
//! started, and the verdict counts of each (the same for both, or the bench says so), then
//! the load average before and after.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// One way of running a row's driver.
struct Way {
    name: &'static str,
    args: &'static [&'static str],
}

const WAYS: [Way; 2] = [
    Way {
        name: "one per scenario",
        args: &["--fresh-drivers"],
    },
    Way {
        name: "reused",
        args: &[],
    },
];

/// What one run measured.
struct Measured {
    wall: Duration,
    cpu: Duration,
    /// Driver processes started (for one per scenario: the scenario runs).
    starts: usize,
    /// The last line of the table: `N passed, M failed[, K not applicable]`.
    verdicts: String,
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rows_file = root.join("adapters/matrix.toml");
    let rows = mcp_conformance::matrix::rows::Rows::load(&rows_file).expect("the rows load");
    let only: Option<Vec<String>> = std::env::var("BENCH_ROWS")
        .ok()
        .map(|rows| rows.split(',').map(str::to_string).collect());
    let program = env!("CARGO_BIN_EXE_mcp-conformance");
    let target = root.join("target");
    let load_before = load();
    println!(
        "{:<18} {:<17} {:>9} {:>9} {:>8}  verdicts",
        "row", "driver", "wall", "cpu", "starts"
    );
    for row in &rows.row {
        if only.as_ref().is_some_and(|only| !only.contains(&row.name)) {
            continue;
        }
        let driver = row
            .driver
            .replace("{mcp-conformance}", program)
            .replace("{target}", &target.display().to_string());
        let measured: Vec<Measured> = WAYS.iter().map(|way| run(root, &driver, way)).collect();
        for (way, m) in WAYS.iter().zip(&measured) {
            println!(
                "{:<18} {:<17} {:>9} {:>9} {:>8}  {}",
                row.name,
                way.name,
                secs(m.wall),
                secs(m.cpu),
                m.starts,
                m.verdicts
            );
        }
        if measured[0].verdicts != measured[1].verdicts {
            println!(
                "{:<18} the verdict counts differ between the two ways",
                row.name
            );
        }
    }
    println!(
        "load average (1, 5, 15 min) before: {load_before}, after: {}; {} cores",
        load(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
}

/// Runs the row's driver over its profile's scenarios one way, from the rows' folder.
fn run(root: &Path, driver: &str, way: &Way) -> Measured {
    let cpu_before = children_cpu();
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-conformance"))
        .current_dir(root.join("adapters"))
        .args(["run", "--scenarios"])
        .arg(root.join("scenarios"))
        .args(["--client", driver])
        .args(way.args)
        .output()
        .expect("mcp-conformance runs");
    let wall = started.elapsed();
    let cpu = children_cpu() - cpu_before;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Exit 1 is a failed scenario (a row's known failures); anything else stops the bench.
    if !matches!(output.status.code(), Some(0 | 1)) {
        eprintln!("{stdout}\n{stderr}");
        panic!("`run --client {driver}` ended with {}", output.status);
    }
    let verdicts = stdout
        .lines()
        .rev()
        .find(|line| line.contains(" passed"))
        .unwrap_or_default()
        .to_string();
    let summary = stderr
        .lines()
        .find(|line| line.starts_with("driver: "))
        .unwrap_or_default();
    // `driver: N process start(s) for M scenario run(s)…`: one per scenario starts M.
    let number = |after: &str| -> usize {
        summary
            .split(after)
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let starts = match way.args.is_empty() {
        true => number("driver: "),
        false => number(" for "),
    };
    Measured {
        wall,
        cpu,
        starts,
        verdicts,
    }
}

fn children_cpu() -> Duration {
    mcp_conformance::validate::timeline::cpu_time(libc::RUSAGE_CHILDREN)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}
