//! The runner: plays a scenario's server, drives a client under test through its steps
//! (the reference client or any other, through one seam) and gathers the outcome.

pub(crate) mod auth_flow;
pub mod bound;
pub mod check;
pub mod estimate;
mod http_target;
pub mod logs;
pub mod outcome;
mod steps;
pub mod transcript;

pub use outcome::{ErrorRecord, GivenSecret, Outcome, ProcessFact, StepRecord};

use crate::cut::{spawn_lock, ClientUnderTest, Described, Settings, StdioTarget, Target};
use crate::probe::procs;
use crate::scenario::LoadedScenario;
use mcp_mock_servers::wire_log;
use mcp_refclient::{Profile, TestHooks};
use std::path::PathBuf;
use std::time::Duration;

/// How to launch the scripted stdio server: a program and the arguments before `--script`.
#[derive(Clone, Debug)]
pub struct MockLauncher {
    /// The program (`mcp-conformance`, whose hidden `mock-stdio` command is the server).
    pub program: PathBuf,
    /// Arguments before the script's (`["mock-stdio"]`).
    pub prefix_args: Vec<String>,
}

impl MockLauncher {
    /// The mock served by this very binary's hidden `mock-stdio` command.
    pub fn this_binary() -> std::io::Result<Self> {
        Ok(MockLauncher {
            program: std::env::current_exe()?,
            prefix_args: vec!["mock-stdio".into()],
        })
    }

    /// The mock served by the `mcp-conformance` binary at `program`.
    pub fn conformance_binary(program: impl Into<PathBuf>) -> Self {
        MockLauncher {
            program: program.into(),
            prefix_args: vec!["mock-stdio".into()],
        }
    }
}

/// How long the runner waits for killed processes to be gone before recording the facts.
pub(crate) const PROCESS_SETTLE: Duration = Duration::from_secs(5);

/// How a client is judged: the reference client on every expectation, any other client on
/// the portable ones (see [`crate::scenario::EXPECTATION_FIELDS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Judged {
    /// Every expectation, the snapshot included: the reference client.
    #[default]
    Everything,
    /// The portable expectations only: any other client.
    Portable,
}

/// How to run one client: how it is judged, and the runner's bound on one step.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// How the client is judged.
    pub judged: Judged,
    /// The bound on one step; past it a step is the client's failure (a harness fault for
    /// the reference client, whose scenarios must bound every wait themselves).
    pub step_guard: Duration,
    /// How many scenarios run at once (several per core: runs mostly wait).
    pub workers: usize,
    /// Whether the client is held to every rule of its profile's scenarios (the reference
    /// client), or only to the rules that bind its profile by their tier (any other client,
    /// see [`crate::cut::sources`]): a scenario naming another profile's promise is then
    /// not applicable.
    pub every_rule: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        let workers = std::thread::available_parallelism()
            .map(|n| n.get() * 4)
            .unwrap_or(8);
        RunOptions {
            judged: Judged::Everything,
            step_guard: steps::STEP_GUARD,
            workers,
            every_rule: true,
        }
    }
}

impl RunOptions {
    /// A client other than the reference one: judged on the portable expectations.
    pub fn portable() -> Self {
        RunOptions {
            judged: Judged::Portable,
            every_rule: false,
            ..Default::default()
        }
    }
}

/// How a scenario runs beside the others (see [`spawn_lock`]): exclusively when its server
/// stops reading its input or starts refusing connections and that descriptor is this
/// process's (the HTTP mock runs here; a stdio server's pipe is ours when our client starts
/// it, the driver's when a driver does), as one that starts processes when its client
/// starts processes from this process (`forks_here`) and has a stdio server or is other
/// than the reference one (an SDK in this process: its starts cannot be seen), and
/// unhindered otherwise (the reference client over HTTP starts nothing; a driver's starts
/// are its own process's, and its own start takes the lock for the moment of the fork).
fn spawn_guard(
    script: &mcp_mock_servers::script::Script,
    judged: Judged,
    forks_here: bool,
) -> Option<spawn_lock::SpawnGuard> {
    use mcp_mock_servers::script::Step;
    let closes_a_descriptor = std::iter::once(&script.steps)
        .chain(&script.relaunch)
        .flatten()
        .any(|step| matches!(step, Step::StopReading(_) | Step::Refuse(_)));
    let descriptor_here = script.transport.is_http() || forks_here;
    let starts_processes =
        forks_here && (!script.transport.is_http() || judged == Judged::Portable);
    match (closes_a_descriptor && descriptor_here, starts_processes) {
        (true, _) => Some(spawn_lock::exclusive()),
        (false, true) => Some(spawn_lock::spawning()),
        (false, false) => None,
    }
}

/// Runs one scenario with the reference client under one profile. Never panics on what the
/// client or server does; a fault of the harness itself is recorded in `harness_fault`.
pub fn run(
    scenario: &LoadedScenario,
    profile: Profile,
    launcher: &MockLauncher,
    hooks: &TestHooks,
) -> Outcome {
    let adapter = crate::cut::reference::ReferenceClient::new(
        profile,
        hooks.clone(),
        launcher.program.clone(),
    );
    run_client(scenario, adapter, launcher, RunOptions::default())
}

/// Runs one scenario with any client under test.
pub fn run_client<A: ClientUnderTest + 'static>(
    scenario: &LoadedScenario,
    adapter: A,
    launcher: &MockLauncher,
    options: RunOptions,
) -> Outcome {
    let described = adapter.describe();
    let profile = Profile::from_name(&described.profile).unwrap_or_default();
    // A driver process is started (or taken from its pool) before the scenario's place
    // beside the others is: its start takes the lock for the moment of the fork only.
    let arrived = std::time::Instant::now();
    adapter.prepare();
    let _spawns = spawn_guard(
        &scenario.scenario.server,
        options.judged,
        adapter.forks_here(),
    );
    let waited = arrived.elapsed();
    let fault = |fault: String| Outcome {
        waited,
        ..Outcome::fault(profile, described.clone(), options.judged, fault)
    };
    let temp = match tempfile::Builder::new()
        .prefix("mcp-conformance-")
        .tempdir()
    {
        Ok(temp) => temp,
        Err(e) => return fault(format!("cannot create a temp folder: {e}")),
    };
    let script_path = temp.path().join("script.json");
    let log_path = temp.path().join("wire.jsonl");
    // The incidental-traffic policy never covers what the scenario is about.
    let mut server = scenario.scenario.server.clone();
    let named = scenario.scenario.named_messages();
    server.incidental.retain(|method| !named.contains(method));
    let script = match serde_json::to_vec_pretty(&server) {
        Ok(script) => script,
        Err(e) => return fault(format!("cannot serialize the script: {e}")),
    };
    if let Err(e) = std::fs::write(&script_path, script) {
        return fault(format!("cannot write {}: {e}", script_path.display()));
    }
    let mut args = launcher.prefix_args.clone();
    args.extend([
        "--script".into(),
        script_path.display().to_string(),
        "--log".into(),
        log_path.display().to_string(),
    ]);
    let script = &server;
    let http_mock = if script.transport.is_http() {
        match mcp_mock_servers::HttpMock::start(
            script.clone(),
            Some(log_path.clone()),
            temp.path().to_path_buf(),
        ) {
            Ok(mock) => Some(mock),
            Err(e) => {
                return fault(format!(
                    "cannot start the HTTP mock: {}",
                    crate::error_chain(&e)
                ))
            }
        }
    } else {
        None
    };
    let http = http_mock
        .as_ref()
        .map(|mock| http_target::HttpTarget::of(mock, script.transport));
    let part = &scenario.scenario.client;
    let target = match &http {
        Some(http) => Target::Http(http.client_target(&part.http)),
        None => Target::Stdio(StdioTarget {
            command: part
                .command
                .clone()
                .unwrap_or_else(|| launcher.program.display().to_string()),
            args: if part.command.is_some() {
                Vec::new()
            } else {
                args
            },
            env: part.env.clone(),
            own_process_group: part.own_process_group,
        }),
    };
    let plan = steps::Plan {
        scenario: &scenario.scenario,
        target,
        settings: Settings {
            timeouts: part.timeouts.clone(),
            faults: part.faults.clone(),
            revision: part.revision.clone(),
        },
        log_path: log_path.clone(),
        step_guard: options.step_guard,
        stop_at_hang: options.judged == Judged::Portable,
    };

    let buffer = logs::LogBuffer::default();
    let adapter = std::rc::Rc::new(adapter);
    let played = {
        let _guard = buffer.install();
        steps::play(plan, adapter.clone())
    };
    let (steps, harness_fault, client_gone, guard_expired) = match played {
        Ok(played) => (played.steps, None, played.client_gone, played.guard_expired),
        Err(fault) => (Vec::new(), Some(fault), true, None),
    };

    // The mock logs what it never got to (unfinished steps) as it stops.
    if let Some(mock) = http_mock {
        mock.shutdown();
    }
    let wire = wire_log::read_wire_log(&log_path).unwrap_or_default();
    let harness_fault = harness_fault.or_else(|| mock_fault(&wire));
    let reported = procs::reported(&wire);
    let pids: Vec<u32> = reported.iter().map(|(pid, _)| *pid).collect();
    // A client other than the reference one that outlived the step guard has hung: its
    // failure in this scenario, not the harness's.
    let hung_at = guard_expired.filter(|_| options.judged == Judged::Portable);
    // Facts are taken only where the scenario asks for them: a process that should be gone
    // gets a bounded wait to go; one that should live is looked at once. A client that hung
    // has failed already and is stopped with what it started: no wait on its processes.
    let asked = scenario
        .scenario
        .expect
        .processes_gone_asked()
        .filter(|_| hung_at.is_none());
    let processes = match asked {
        None => Vec::new(),
        Some(should_be_gone) => {
            let alive = if should_be_gone {
                procs::wait_all_gone(&pids, PROCESS_SETTLE)
            } else {
                // The command itself goes on close and drop whatever else lives on: let it.
                let servers: Vec<u32> = reported
                    .iter()
                    .filter(|(_, role)| *role == "server")
                    .map(|(p, _)| *p)
                    .collect();
                if client_gone {
                    procs::wait_all_gone(&servers, PROCESS_SETTLE);
                }
                pids.iter()
                    .copied()
                    .filter(|&p| procs::is_alive(p))
                    .collect()
            };
            reported
                .iter()
                .map(|&(pid, role)| ProcessFact {
                    pid,
                    role,
                    alive_after_steps: alive.contains(&pid),
                })
                .collect()
        }
    };
    let reported_fault = adapter.client_fault();

    let (logs, logs_dropped) = buffer.take();
    let mut redactions = vec![(temp.path().display().to_string(), "[TMP]".to_string())];
    redactions.push((
        launcher.program.display().to_string(),
        "mcp-mock-stdio".to_string(),
    ));
    redactions.extend(http.iter().flat_map(|target| target.redactions()));
    let http_url = http.as_ref().map(|target| target.client_url(&part.http));
    let mut secrets = given_secrets(&part.http, http_url.as_deref());
    let (flow_secrets, flow_redactions) =
        auth_flow::credentials(&wire, scenario.scenario.server.auth.as_ref(), &part.http);
    for secret in flow_secrets {
        if !secrets.iter().any(|s| s.value == secret.value) {
            secrets.push(secret);
        }
    }
    redactions.extend(flow_redactions);
    let client_fault = hung_at
        .map(|step| {
            format!(
                "step {step} did not finish within the step guard ({} ms)",
                steps::step_guard(&scenario.scenario, step, options.step_guard).as_millis()
            )
        })
        .or(reported_fault);
    // A client that failed the scenario serves no other: a fresh process for the next.
    let note = adapter.release(&pids, client_fault.is_some());
    procs::kill_all(&pids);
    Outcome {
        profile,
        client: described,
        judged: options.judged,
        steps,
        wire,
        logs,
        logs_dropped,
        processes,
        harness_fault,
        client_fault,
        redactions,
        secrets,
        http_url,
        note,
        waited,
    }
}

impl Outcome {
    fn fault(profile: Profile, client: Described, judged: Judged, fault: String) -> Outcome {
        Outcome {
            profile,
            client,
            judged,
            client_fault: None,
            steps: Vec::new(),
            wire: Vec::new(),
            logs: Vec::new(),
            logs_dropped: 0,
            processes: Vec::new(),
            harness_fault: Some(fault),
            redactions: Vec::new(),
            secrets: Vec::new(),
            http_url: None,
            note: None,
            waited: Duration::ZERO,
        }
    }
}

/// A fault the HTTP mock logged of itself: the run says nothing about the client.
fn mock_fault(wire: &[wire_log::Record]) -> Option<String> {
    wire.iter().find_map(|record| match record {
        wire_log::Record::Wrote { stream, summary }
            if stream == "stderr"
                && summary.contains(mcp_mock_servers::http::player::LISTENER_FAULT) =>
        {
            Some(format!("the HTTP mock failed: {summary}"))
        }
        _ => None,
    })
}

/// Values shorter than this are not taken for secrets (they would match everywhere).
const MIN_SECRET_CHARS: usize = 4;

/// Every secret a scenario gives the client: header values, tokens (refreshed ones too) and
/// the key-like parts of the URL.
fn given_secrets(part: &crate::scenario::HttpClientPart, url: Option<&str>) -> Vec<GivenSecret> {
    let mut secrets = Vec::new();
    let mut add = |source: String, value: &str| {
        if value.chars().count() >= MIN_SECRET_CHARS
            && !secrets.iter().any(|s: &GivenSecret| s.value == value)
        {
            secrets.push(GivenSecret {
                source,
                value: value.to_string(),
            });
        }
    };
    for [name, value] in &part.headers {
        add(format!("the value of header `{name}`"), value);
    }
    if let Some(tokens) = &part.tokens {
        add("the token".into(), &tokens.token);
        for (i, token) in tokens.refreshed.iter().enumerate() {
            add(format!("refreshed token {}", i + 1), token);
        }
    }
    if let Some(url) = url.and_then(|u| url::Url::parse(u).ok()) {
        for key in mcp_refclient::redact::key_like_parts(&url) {
            add("a key-like part of the URL".into(), &key);
        }
    }
    secrets
}
