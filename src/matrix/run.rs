//! Running the matrix: every row's driver over every scenario of its profile, several runs
//! at a time, each verdict held against the row's baseline.

use super::rows::{Placeholders, Row, Rows};
use crate::cut::driver::pool::PoolCounts;
use crate::cut::driver::{self, DriverPool};
use crate::cut::Described;
use crate::harness::{self, Baseline, RuleMark};
use crate::runner::{MockLauncher, RunOptions};
use crate::scenario::LoadedScenario;
use crate::verdict::{self, ScenarioResult, Verdict};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How one scenario fared with one row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// Every portable expectation held.
    Pass,
    /// An expectation did not hold, and the baseline does not list it.
    Fail,
    /// It failed, as the row's baseline says (with the rule and the evidence).
    Baselined,
    /// The baseline lists it, but it passes (or no longer applies): the entry is stale.
    Stale,
    /// The scenario needs what the client did not declare.
    NotApplicable,
    /// The harness failed; says nothing about the client.
    HarnessFault,
    /// Not a scenario of the row's profile: not run.
    NotInProfile,
}

impl Mark {
    /// The mark as the table prints it.
    pub fn short(self) -> &'static str {
        match self {
            Mark::Pass => "pass",
            Mark::Fail => "FAIL",
            Mark::Baselined => "known",
            Mark::Stale => "STALE",
            Mark::NotApplicable => "n/a",
            Mark::HarnessFault => "HARNESS",
            Mark::NotInProfile => "-",
        }
    }

    /// The worst of `marks`, from a failure down to not applicable; none when empty.
    pub fn worst(marks: impl IntoIterator<Item = Mark>) -> Option<Mark> {
        const ORDER: [Mark; 7] = [
            Mark::Fail,
            Mark::Stale,
            Mark::HarnessFault,
            Mark::Baselined,
            Mark::Pass,
            Mark::NotApplicable,
            Mark::NotInProfile,
        ];
        marks
            .into_iter()
            .min_by_key(|m| ORDER.iter().position(|o| o == m))
    }

    /// Whether the matrix fails for it.
    pub fn fails(self) -> bool {
        matches!(self, Mark::Fail | Mark::Stale | Mark::HarnessFault)
    }
}

/// One scenario × row.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// The scenario.
    pub scenario: String,
    /// The mark.
    pub mark: Mark,
    /// What the verdict said: the failures, why not applicable, the baseline's reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ScenarioResult>,
    /// Each rule of the scenario, held against the baseline on its own (a run that judged
    /// the client; empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RuleMark>,
    /// The baseline entries' rules, for a baselined or stale cell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The baseline entry's reason and evidence, for a baselined or stale cell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known: Option<String>,
}

/// One row's column.
#[derive(Clone, Debug, Serialize)]
pub struct Column {
    /// The row's name.
    pub row: String,
    /// The profile.
    pub profile: String,
    /// The driver's hello.
    pub client: Described,
    /// A cell per scenario, in the scenarios' order.
    pub cells: Vec<Cell>,
    /// How many driver processes the row started, reused and replaced.
    #[serde(skip)]
    pub drivers: PoolCounts,
}

/// The whole matrix.
#[derive(Clone, Debug, Serialize)]
pub struct Matrix {
    /// The scenarios, in order, with their rules.
    pub scenarios: Vec<ScenarioRules>,
    /// One column per row.
    pub columns: Vec<Column>,
    /// Wall time of the runs (builds excluded), in milliseconds.
    pub millis: u128,
}

/// A scenario's name and rules.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioRules {
    /// The scenario's name.
    pub name: String,
    /// The rules it checks.
    pub rules: Vec<String>,
}

/// Why the matrix cannot run.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    /// A row's build command failed.
    #[error("row `{row}`: the build `{command}` failed: {why}")]
    Build {
        /// The row.
        row: String,
        /// The command.
        command: String,
        /// Its exit status or why it could not start.
        why: String,
    },
    /// A row's driver did not say hello, or said the wrong thing.
    #[error("row `{row}`: {why}")]
    Driver {
        /// The row.
        row: String,
        /// What went wrong.
        why: String,
    },
    /// A row's baseline is not usable.
    #[error("row `{row}`: {why}")]
    Baseline {
        /// The row.
        row: String,
        /// What is wrong.
        why: String,
    },
}

impl MatrixError {
    /// Whether the fault is in the input files (a usage error) rather than a build or a driver.
    pub fn is_usage(&self) -> bool {
        matches!(self, MatrixError::Baseline { .. })
    }
}

/// How to run the matrix.
#[derive(Clone, Debug)]
pub struct Options {
    /// The rows' folder: commands run there, baselines are found there.
    pub folder: PathBuf,
    /// What `{mcp-conformance}` and `{target}` stand for.
    pub placeholders: Placeholders,
    /// Run the rows' build commands first.
    pub build: bool,
    /// The longest one row's build command may take before its process group is killed.
    pub build_timeout: Duration,
    /// The runner's bound on one step of a driver.
    pub step_guard: Duration,
    /// How long a driver process may take to say hello (paid once per process when reused).
    pub hello_within: Duration,
    /// How many scenario runs at once.
    pub workers: usize,
    /// Reuse the driver processes of the rows whose driver declares `reusable` (false: one
    /// process per scenario).
    pub reuse: bool,
    /// Every scenario of the folder, when the run is a prefix of it: a baseline names
    /// scenarios outside the prefix too, checked against these (empty: the run's own).
    pub every_scenario: Vec<LoadedScenario>,
}

/// A row ready to run: its driver's command line, its hello, its baseline.
struct Ready {
    row: Row,
    argv: Vec<String>,
    described: Described,
    baseline: Baseline,
}

/// The default of [`Options::build_timeout`] (`matrix --build-timeout-s`): a cold build of
/// every Rust adapter on a loaded two-core machine fits well within it.
pub const DEFAULT_BUILD_TIMEOUT: Duration = Duration::from_secs(1800);

/// How often a build is looked at while it runs.
const BUILD_POLL: Duration = Duration::from_millis(50);

/// Reads every row's baseline before anything is built or started: a baseline that is a
/// FIFO, a device or too large (or names an unknown scenario) is a usage error at once.
pub fn check_baselines(
    rows: &Rows,
    scenarios: &[LoadedScenario],
    options: &Options,
) -> Result<(), MatrixError> {
    let known = if options.every_scenario.is_empty() {
        scenarios
    } else {
        &options.every_scenario
    };
    for row in &rows.row {
        let path = row.baseline_path(&options.folder);
        Baseline::load(&path, known).map_err(|why| MatrixError::Baseline {
            row: row.name.clone(),
            why,
        })?;
    }
    Ok(())
}

/// Runs each row's build command, in the rows' folder; the build's output goes to stderr.
/// A build past [`Options::build_timeout`] is killed with its process group.
pub fn build(rows: &Rows, options: &Options) -> Result<(), MatrixError> {
    if !options.build {
        return Ok(());
    }
    for row in &rows.row {
        let Some(command) = &row.build else { continue };
        let command = options.placeholders.expand(command);
        let failed = |why: String| MatrixError::Build {
            row: row.name.clone(),
            command: command.clone(),
            why,
        };
        let argv = driver::split_command(&command).map_err(|e| failed(e.to_string()))?;
        crate::terminal::eprint(&format!("matrix: building {}: {command}", row.name));
        let status = run_bounded(&argv, &options.folder, options.build_timeout).map_err(failed)?;
        if !status.success() {
            return Err(failed(status.to_string()));
        }
    }
    Ok(())
}

/// Runs `argv` in `folder`, in a process group of its own, within `bound`: past it the
/// group (the build and every compiler it started) is killed.
fn run_bounded(
    argv: &[String],
    folder: &Path,
    bound: Duration,
) -> Result<std::process::ExitStatus, String> {
    use std::os::unix::process::CommandExt;
    let mut child = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(folder)
        .stdin(std::process::Stdio::null())
        .stdout(std::io::stderr())
        .process_group(0)
        .spawn()
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + bound;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(BUILD_POLL),
            Ok(None) => break,
            Err(e) => return Err(format!("cannot wait for it: {e}")),
        }
    }
    if let Ok(group) = i32::try_from(child.id()) {
        // SAFETY: killpg with the group the build leads (process_group(0)); no memory is touched.
        unsafe {
            libc::killpg(group, libc::SIGKILL);
        }
    }
    let _ = child.wait();
    Err(format!(
        "it took longer than {} s (--build-timeout-s) and was killed",
        bound.as_secs()
    ))
}

fn ready(row: &Row, scenarios: &[LoadedScenario], options: &Options) -> Result<Ready, MatrixError> {
    let driver_fault = |why: String| MatrixError::Driver {
        row: row.name.clone(),
        why,
    };
    let argv = driver::split_command(&options.placeholders.expand(&row.driver))
        .map_err(|e| driver_fault(e.to_string()))?;
    let described = driver::probe_in(&argv, Some(&options.folder), options.hello_within)
        .map_err(|e| driver_fault(crate::error_chain(&e)))?;
    if described.profile != row.profile {
        return Err(driver_fault(format!(
            "the driver claims the profile `{}`, the row says `{}`",
            described.profile, row.profile
        )));
    }
    let path = row.baseline_path(&options.folder);
    let bad = |why: String| MatrixError::Baseline {
        row: row.name.clone(),
        why,
    };
    let known = if options.every_scenario.is_empty() {
        scenarios
    } else {
        &options.every_scenario
    };
    let baseline = Baseline::load(&path, known).map_err(bad)?;
    baseline.require_evidence(&path).map_err(bad)?;
    Ok(Ready {
        row: row.clone(),
        argv,
        described,
        baseline,
    })
}

/// Runs every row over `scenarios`; progress goes to stderr.
pub fn run(
    rows: &Rows,
    scenarios: &[LoadedScenario],
    launcher: &MockLauncher,
    options: &Options,
) -> Result<Matrix, MatrixError> {
    let ready: Vec<Ready> = rows
        .row
        .iter()
        .map(|row| ready(row, scenarios, options))
        .collect::<Result<_, _>>()?;
    let started = Instant::now();
    let jobs: Vec<(usize, usize)> = ready
        .iter()
        .enumerate()
        .flat_map(|(r, row)| {
            let profile = mcp_refclient::Profile::from_name(&row.row.profile).unwrap_or_default();
            scenarios
                .iter()
                .enumerate()
                .filter(move |(_, s)| s.profiles().contains(&profile))
                .map(move |(s, _)| (r, s))
        })
        .collect();
    let run_options = |reference: bool| RunOptions {
        step_guard: options.step_guard,
        workers: options.workers,
        every_rule: reference,
        ..RunOptions::portable()
    };
    let progress = Progress::new(&ready, &jobs);
    let pools: Vec<Arc<DriverPool>> = ready
        .iter()
        .map(|row| {
            DriverPool::in_dir(
                row.argv.clone(),
                row.described.clone(),
                options.hello_within,
                options.reuse,
                Some(options.folder.clone()),
            )
        })
        .collect();
    let results = verdict::in_parallel(&jobs, options.workers, |&(r, s)| {
        let row = &ready[r];
        let run_options = run_options(row.row.reference);
        let result = match verdict::applicable(&row.described, &scenarios[s], run_options) {
            Err(reason) => not_held(&scenarios[s], &row.described, reason),
            Ok(_) => {
                let client = pools[r].client(&scenarios[s].scenario);
                verdict::run_client_one(&scenarios[s], client, launcher, run_options).0
            }
        };
        progress.done(r, &result);
        result
    });
    let mut columns: Vec<Column> = ready
        .iter()
        .zip(&pools)
        .map(|(row, pool)| Column {
            drivers: pool.counts(),
            row: row.row.name.clone(),
            profile: row.row.profile.clone(),
            client: row.described.clone(),
            cells: scenarios
                .iter()
                .map(|s| Cell {
                    scenario: s.name.clone(),
                    mark: Mark::NotInProfile,
                    rules: Vec::new(),
                    result: None,
                    rule: None,
                    known: None,
                })
                .collect(),
        })
        .collect();
    for (&(r, s), result) in jobs.iter().zip(results) {
        columns[r].cells[s] = cell(result, &ready[r].baseline);
    }
    Ok(Matrix {
        scenarios: scenarios
            .iter()
            .map(|s| ScenarioRules {
                name: s.name.clone(),
                rules: s.scenario.rules.clone(),
            })
            .collect(),
        columns,
        millis: started.elapsed().as_millis(),
    })
}

/// A scenario the row's client cannot express, or naming a rule that does not bind its
/// profile: not applicable, not run.
fn not_held(scenario: &LoadedScenario, described: &Described, reason: String) -> ScenarioResult {
    ScenarioResult {
        scenario: scenario.name.clone(),
        client: described.label(),
        profile: mcp_refclient::Profile::from_name(&described.profile)
            .map(mcp_refclient::Profile::name)
            .unwrap_or("strict"),
        rules: scenario.scenario.rules.clone(),
        not_held: Vec::new(),
        verdict: Verdict::NotApplicable { reason },
        millis: 0,
        waited_ms: 0,
        note: None,
        evidence: None,
    }
}

/// A verdict held against the baseline, one rule at a time ([`harness::held_against`]).
fn cell(result: ScenarioResult, baseline: &Baseline) -> Cell {
    let known = baseline.entries(&result.scenario);
    let (mark, rules) =
        harness::held_against(&result.rules, &result.verdict, &result.not_held, &known);
    let joined = |parts: Vec<String>| (!parts.is_empty()).then(|| parts.join("; "));
    Cell {
        scenario: result.scenario.clone(),
        mark,
        rules,
        rule: joined(known.iter().filter_map(|k| k.rule.clone()).collect()),
        known: joined(
            known
                .iter()
                .map(|k| {
                    format!(
                        "{} (evidence: {})",
                        k.reason,
                        k.evidence.as_deref().unwrap_or("none")
                    )
                })
                .collect(),
        ),
        result: Some(result),
    }
}

/// Progress on stderr: a line at every tenth of the runs, and one as each row finishes.
struct Progress<'a> {
    ready: &'a [Ready],
    total: usize,
    done: AtomicUsize,
    per_row: Mutex<Vec<(usize, usize, usize)>>,
}

impl<'a> Progress<'a> {
    fn new(ready: &'a [Ready], jobs: &[(usize, usize)]) -> Self {
        let mut per_row = vec![(0, 0, 0); ready.len()];
        for &(r, _) in jobs {
            per_row[r].1 += 1;
        }
        Progress {
            ready,
            total: jobs.len(),
            done: AtomicUsize::new(0),
            per_row: Mutex::new(per_row),
        }
    }

    fn done(&self, r: usize, result: &ScenarioResult) {
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        let mut per_row = self.per_row.lock().unwrap_or_else(|e| e.into_inner());
        let (finished, total, failed) = &mut per_row[r];
        *finished += 1;
        if matches!(
            result.verdict,
            Verdict::Fail { .. } | Verdict::HarnessFault { .. }
        ) {
            *failed += 1;
        }
        if finished == total {
            crate::terminal::eprint(&format!(
                "matrix: {} done: {total} scenario(s), {failed} failed before the baseline",
                self.ready[r].row.name
            ));
        }
        let step = (self.total / 10).max(1);
        if done % step == 0 && done < self.total {
            crate::terminal::eprint(&format!("matrix: {done}/{} runs", self.total));
        }
    }
}

/// The rows' folder of a rows file.
pub fn folder_of(rows_file: &Path) -> PathBuf {
    let folder = rows_file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let folder = if folder.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        folder
    };
    std::fs::canonicalize(&folder).unwrap_or(folder)
}
