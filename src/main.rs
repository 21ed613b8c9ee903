//! The `mcp-conformance` command line: a thin layer over the library.

mod cli {
    pub mod driver_run;
    pub mod matrix;
    pub mod signals;
}

use clap::{Parser, Subcommand};
use mcp_conformance::{
    error_chain, exit_code, report, rules, runner::MockLauncher, scenario, terminal, verdict,
};
use mcp_refclient::Profile;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use cli::driver_run::{run_driver, DriverRun};
use cli::matrix::matrix;
use cli::signals::{end_escaped_descendants, watch_signals, INTERRUPTED};

/// Conformance suite and test harness for the Model Context Protocol.
#[derive(Parser)]
#[command(name = "mcp-conformance", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the bundled scenarios against the reference client and print a report.
    Run(RunArgs),
    /// List the rules and the scenarios that cover them.
    List(ListArgs),
    /// Run every row of adapters/matrix.toml (a client under test each) over the scenarios:
    /// scenario × client, a summary per client and per rule group.
    Matrix(MatrixArgs),
    /// Validate a third-party MCP server against the server checks.
    Validate {
        #[command(flatten)]
        args: Box<mcp_conformance::validate::ValidateArgs>,
        /// Also write the HTML report into this folder: `index.html` (check × target and
        /// revision, coloured by verdict, filtered by area, verdict and check id) and a page
        /// per cell with the quoted rule, the finding and the exchange behind a failure.
        #[arg(long, value_name = "DIR")]
        html: Option<PathBuf>,
    },
    /// Show a profile's settings, with what each means (`profile show kova`).
    Profile {
        /// `show`.
        #[arg(value_parser = ["show"])]
        action: String,
        /// The profile: strict, yoagent or kova.
        name: String,
    },
    /// Serve a profile of the reference client over the driver protocol (on stdin/stdout).
    Driver {
        /// The profile: strict, yoagent or kova.
        #[arg(long, default_value = "strict")]
        profile: String,
    },
    /// Hold a reference client in this process, for interrupting it (scenarios use it).
    #[command(hide = true)]
    HostClient(mcp_conformance::host::HostArgs),
    /// Play a scripted stdio server on stdin/stdout (the same as `mcp-mock-stdio`).
    #[command(hide = true, disable_help_flag = true)]
    MockStdio {
        /// Everything after `mock-stdio`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Play a scripted HTTP(S) server and print its URL (the same as `mcp-mock-http`).
    #[command(hide = true, disable_help_flag = true)]
    MockHttp {
        /// Everything after `mock-http`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Run only the scenarios whose name or rule ids start with this prefix.
    prefix: Option<String>,
    /// The profile: strict, yoagent, kova, or all.
    #[arg(long, default_value = "strict")]
    profile: String,
    /// Write a JSON report to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write a JUnit XML report to this file.
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Write the HTML report into this folder: `index.html` (the grid, coloured by verdict,
    /// with filters) and a page per scenario run; it opens from `file://`.
    #[arg(long)]
    html: Option<PathBuf>,
    /// The scenario folder.
    #[arg(long, default_value_os_t = default_scenarios())]
    scenarios: PathBuf,
    /// Test another client through a driver: a command that speaks the driver protocol on
    /// its stdin/stdout (`--client 'node driver.mjs'`), started once per scenario, or once
    /// per job when it declares `reusable`. It is judged on its own profile and on the
    /// portable expectations.
    #[arg(long)]
    client: Option<String>,
    /// The runner's bound on one step of a driver, in milliseconds: past it, the step is
    /// the client's failure.
    #[arg(long, default_value_t = 20_000)]
    step_guard_ms: u64,
    /// How many scenarios of a driver run at once, each on a driver process of the pool
    /// (default: four per core available: runs mostly wait); the scenarios that mostly wait
    /// get one beside them.
    #[arg(long)]
    jobs: Option<usize>,
    /// Start the driver afresh for every scenario even when it declares `reusable`.
    #[arg(long)]
    fresh_drivers: bool,
    /// Run only the scenarios whose every rule applies at this protocol revision (at
    /// 2026-07-28 the handshake, `ping` and session scenarios are neither run nor counted).
    #[arg(long, value_parser = revision_arg)]
    revision: Option<String>,
}

/// A protocol revision the rule registry knows.
fn revision_arg(text: &str) -> Result<String, String> {
    match rules::REVISIONS.contains(&text) {
        true => Ok(text.to_string()),
        false => Err(format!(
            "unknown revision `{text}` (expected one of {})",
            rules::REVISIONS.join(", ")
        )),
    }
}

#[derive(clap::Args)]
struct MatrixArgs {
    /// Run only the scenarios whose name or rule ids start with this prefix.
    prefix: Option<String>,
    /// The rows file (commands run, and baselines are found, in its folder).
    #[arg(long, default_value_os_t = default_rows())]
    rows: PathBuf,
    /// Run only this row (repeatable).
    #[arg(long = "row")]
    only: Vec<String>,
    /// Do not run the rows' build commands (the drivers are built already).
    #[arg(long)]
    no_build: bool,
    /// The longest one row's build command may take, in seconds (default 1800): past it
    /// the build and every process it started are killed and the matrix stops.
    #[arg(long, default_value_t = mcp_conformance::matrix::run::DEFAULT_BUILD_TIMEOUT.as_secs())]
    build_timeout_s: u64,
    /// Also write the matrix as JSON to this file (`-`: stdout, instead of the table).
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write the matrix as Markdown to this file (`-`: stdout, instead of the table).
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Also write the HTML report into this folder: `index.html` (scenario × row, coloured
    /// by verdict, with filters) and a page per cell; it opens from `file://`.
    #[arg(long)]
    html: Option<PathBuf>,
    /// The scenario folder.
    #[arg(long, default_value_os_t = default_scenarios())]
    scenarios: PathBuf,
    /// The runner's bound on one step of a driver, and on its hello, in milliseconds.
    #[arg(long, default_value_t = 20_000)]
    step_guard_ms: u64,
    /// How many scenario runs at once over every row (default: four per core available).
    #[arg(long)]
    jobs: Option<usize>,
    /// Start each row's driver afresh for every scenario even when it declares `reusable`.
    #[arg(long)]
    fresh_drivers: bool,
}

/// `adapters/matrix.toml` in the working directory, else the one this binary was built from.
fn default_rows() -> PathBuf {
    let local = PathBuf::from("adapters/matrix.toml");
    if local.is_file() {
        return local;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("adapters/matrix.toml")
}

#[derive(clap::Args)]
struct ListArgs {
    /// The scenario folder.
    #[arg(long, default_value_os_t = default_scenarios())]
    scenarios: PathBuf,
    /// List and count only the rules that apply at this protocol revision, and the
    /// scenarios whose every rule does.
    #[arg(long, value_parser = revision_arg)]
    revision: Option<String>,
}

/// `scenarios/` in the working directory, else the one this binary was built from.
fn default_scenarios() -> PathBuf {
    let local = PathBuf::from("scenarios");
    if local.is_dir() {
        return local;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// The buffers the runner and the validator read a hostile peer's lines into (up to 8 MiB a
/// line, several peers at once) are freed as soon as the line is judged; glibc's allocator
/// would otherwise raise its mmap threshold after the first such free and keep every later one
/// in its heaps, so a flood of large lines held hundreds of MiB no longer in use. A fixed
/// threshold of 1 MiB makes each large buffer its own mapping, given back when freed.
fn return_large_buffers_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

fn main() -> ExitCode {
    return_large_buffers_to_the_system();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            if let Err(why) = e.print() {
                fail(&format!(
                    "cannot write to {}: {why}",
                    if e.use_stderr() { "stderr" } else { "stdout" }
                ));
                return ExitCode::from(exit_code::HARNESS_FAULT);
            }
            return ExitCode::from(if e.use_stderr() {
                exit_code::USAGE
            } else {
                exit_code::SUCCESS
            });
        }
    };
    let code = dispatch(cli);
    if terminal::stderr_failed() && code == ExitCode::from(exit_code::SUCCESS) {
        return ExitCode::from(exit_code::HARNESS_FAULT);
    }
    code
}

/// An error line on stderr, control characters escaped.
fn fail(message: &str) {
    terminal::eprint(&format!("error: {message}"));
}

/// Writes `text` to stdout; a write error (a full disk, a closed pipe) is reported on stderr
/// and becomes the harness-fault exit code.
fn emit(text: &str) -> Result<(), ExitCode> {
    terminal::print(text).map_err(|why| {
        fail(&why);
        ExitCode::from(exit_code::HARNESS_FAULT)
    })
}

fn dispatch(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Run(args) => run(args),
        Command::List(args) => list(args),
        Command::Matrix(args) => matrix(args),
        Command::Validate { args, html } => ExitCode::from(mcp_conformance::validate::main_with(
            *args,
            |reports| match html {
                Some(dir) => write_html(&dir, &report::html::fill_validate::from_validate(reports)),
                None => Ok(()),
            },
        )),
        Command::Profile { name, .. } => match Profile::from_name(&name) {
            Some(profile) => match emit(&mcp_conformance::profiles::section(profile)) {
                Ok(()) => ExitCode::from(exit_code::SUCCESS),
                Err(code) => code,
            },
            None => {
                fail(&format!(
                    "unknown profile `{name}` (expected strict, yoagent or kova)"
                ));
                ExitCode::from(exit_code::USAGE)
            }
        },
        Command::MockStdio { args } => mcp_mock_servers::stdio_main(args),
        Command::MockHttp { args } => mcp_mock_servers::http_main(args),
        Command::Driver { profile } => match Profile::from_name(&profile) {
            Some(profile) => {
                let _ = tracing_subscriber::fmt()
                    .with_writer(std::io::stderr)
                    .with_ansi(false)
                    .with_max_level(tracing::Level::DEBUG)
                    .try_init();
                let program = std::env::current_exe().unwrap_or_default();
                let adapter = move || {
                    mcp_conformance::cut::reference::ReferenceClient::new(
                        profile,
                        Default::default(),
                        program.clone(),
                    )
                };
                ExitCode::from(mcp_conformance::cut::driver::serve::serve(adapter))
            }
            None => {
                fail(&format!(
                    "unknown profile `{profile}` (expected strict, yoagent or kova)"
                ));
                ExitCode::from(exit_code::USAGE)
            }
        },
        Command::HostClient(args) => ExitCode::from(mcp_conformance::host::host_main(args)),
    }
}

fn parse_profiles(name: &str) -> Option<Vec<Profile>> {
    if name == "all" {
        return Some(Profile::ALL.to_vec());
    }
    Profile::from_name(name).map(|p| vec![p])
}

fn load(folder: &Path) -> Result<Vec<scenario::LoadedScenario>, ExitCode> {
    scenario::load_all(folder).map_err(|e| {
        fail(&error_chain(&e));
        ExitCode::from(exit_code::USAGE)
    })
}

fn run(args: RunArgs) -> ExitCode {
    let Some(profiles) = parse_profiles(&args.profile) else {
        fail(&format!(
            "unknown profile `{}` (expected strict, yoagent, kova or all)",
            args.profile
        ));
        return ExitCode::from(exit_code::USAGE);
    };
    let (selected, launcher) = match prepare(
        &args.scenarios,
        args.prefix.as_deref(),
        args.revision.as_deref(),
    ) {
        Ok(prepared) => prepared,
        Err(code) => return code,
    };
    let results = match &args.client {
        None => Ok(verdict::run_all(&selected, &profiles, &launcher)),
        Some(command) => run_driver(
            command,
            &selected,
            &launcher,
            DriverRun {
                step_guard: Duration::from_millis(args.step_guard_ms),
                // Runs mostly wait (on timeouts, on servers): several per core, as for the
                // reference client.
                jobs: args
                    .jobs
                    .unwrap_or(mcp_conformance::runner::RunOptions::default().workers),
                reuse: !args.fresh_drivers,
            },
        ),
    };
    end_escaped_descendants();
    let results = match results {
        Ok(results) => results,
        Err(code) => return code,
    };
    while INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::park();
    }
    let mut table = report::table::render(&results);
    if profiles.len() > 1 {
        table.push('\n');
        table.push_str(&report::table::render_matrix(&results));
    }
    if let Err(code) = emit(&table) {
        return code;
    }
    for (path, text) in [
        (&args.json, report::json::render(&results)),
        (&args.junit, report::junit::render(&results)),
    ] {
        if let Some(path) = path {
            if let Err(e) = std::fs::write(path, text) {
                fail(&format!("cannot write {}: {e}", path.display()));
                return ExitCode::from(exit_code::HARNESS_FAULT);
            }
        }
    }
    if let Some(dir) = &args.html {
        let title = format!(
            "mcp-conformance run: {}",
            report::clients(&results).join(", ")
        );
        let html = report::html::fill::from_run(&title, &results, &selected);
        if let Err(why) = write_html(dir, &html) {
            fail(&why);
            return ExitCode::from(exit_code::HARNESS_FAULT);
        }
    }
    let summary = report::Summary::of(&results);
    ExitCode::from(if summary.harness_faults > 0 {
        exit_code::HARNESS_FAULT
    } else if summary.failed > 0 {
        exit_code::FAILURES
    } else {
        exit_code::SUCCESS
    })
}

/// Writes the HTML report into `dir` and says on stderr where, how big and how fast; the
/// error, with its causes, when it cannot.
fn write_html(dir: &Path, html: &report::html::model::Report) -> Result<(), String> {
    let started = std::time::Instant::now();
    let written = report::html::write(dir, html).map_err(|e| error_chain(&e))?;
    terminal::eprint(&format!(
        "html report: {} ({} files, {:.1} MB, written in {} ms)",
        dir.join("index.html").display(),
        written.files,
        written.bytes as f64 / 1_000_000.0,
        started.elapsed().as_millis()
    ));
    Ok(())
}

/// The scenarios whose name or one of whose rules starts with `prefix` (all without one).
/// What `run` and `matrix` share before they run: the scenarios of `folder` that `prefix`
/// (and `revision`, when given) select, a launcher for their scripted servers, and the
/// signals watched.
fn prepare(
    folder: &Path,
    prefix: Option<&str>,
    revision: Option<&str>,
) -> Result<(Vec<scenario::LoadedScenario>, MockLauncher), ExitCode> {
    let selected: Vec<_> = select(load(folder)?, prefix)
        .into_iter()
        .filter(|s| revision.is_none_or(|revision| s.applies_at(revision)))
        .collect();
    if selected.is_empty() {
        fail(&format!(
            "no scenario matches `{}` in {}",
            prefix.unwrap_or_default(),
            folder.display()
        ));
        return Err(ExitCode::from(exit_code::USAGE));
    }
    let launcher = MockLauncher::this_binary().map_err(|e| {
        fail(&format!(
            "cannot find this program to launch the scripted servers: {e}"
        ));
        ExitCode::from(exit_code::HARNESS_FAULT)
    })?;
    watch_signals().map_err(|e| {
        fail(&format!("cannot watch for signals: {e}"));
        ExitCode::from(exit_code::HARNESS_FAULT)
    })?;
    Ok((selected, launcher))
}

fn select(
    scenarios: Vec<scenario::LoadedScenario>,
    prefix: Option<&str>,
) -> Vec<scenario::LoadedScenario> {
    scenarios
        .into_iter()
        .filter(|s| match prefix {
            None => true,
            Some(prefix) => {
                s.name.starts_with(prefix) || s.scenario.rules.iter().any(|r| r.starts_with(prefix))
            }
        })
        .collect()
}

fn list(args: ListArgs) -> ExitCode {
    let scenarios = match load(&args.scenarios) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let revision = args.revision.as_deref();
    let scenarios: Vec<_> = scenarios
        .into_iter()
        .filter(|s| revision.is_none_or(|r| s.applies_at(r)))
        .collect();
    let listed: Vec<&rules::Rule> = rules::all()
        .iter()
        .filter(|r| revision.is_none_or(|rev| r.applies_at(rev)))
        .collect();
    let mut out = String::from("rules:\n");
    let mut uncovered = 0;
    for rule in listed.iter().copied() {
        let covering: Vec<&str> = scenarios
            .iter()
            .filter(|s| s.scenario.rules.contains(&rule.id))
            .map(|s| s.name.as_str())
            .collect();
        if covering.is_empty() && rule.kind == rules::RuleKind::Client {
            uncovered += 1;
        }
        let kind = match rule.kind {
            rules::RuleKind::Client => "client",
            rules::RuleKind::Server => "server",
        };
        let _ = writeln!(
            out,
            "  {:<45} {:<6} {:<6} {} scenario(s)",
            rule.id,
            rule.level.name(),
            kind,
            covering.len()
        );
    }
    out.push_str("\nscenarios:\n");
    for s in &scenarios {
        let profiles: Vec<&str> = s.profiles().iter().map(|p| p.name()).collect();
        let _ = writeln!(
            out,
            "  {:<50} [{}] {}",
            terminal::line(&s.name),
            profiles.join(","),
            s.scenario.rules.join(", ")
        );
    }
    let at = revision.map(|r| format!(" at {r}")).unwrap_or_default();
    let _ = writeln!(
        out,
        "\n{} rules{at}, {} scenarios, {} client rules without a scenario",
        listed.len(),
        scenarios.len(),
        uncovered
    );
    match emit(&out) {
        Ok(()) => ExitCode::from(exit_code::SUCCESS),
        Err(code) => code,
    }
}
