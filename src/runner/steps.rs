//! Driving the reference client through a scenario's steps.

use super::outcome::{ErrorRecord, StepRecord};
use crate::scenario::{ClientStep, Scenario};
use mcp_mock_servers::wire_log;
use mcp_refclient::{ClientConfig, McpClient, McpError, Profile, StdioServer, TestHooks, Timeouts};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// Everything needed to play the client's part.
pub(super) struct Plan<'a> {
    pub scenario: &'a Scenario,
    pub profile: Profile,
    pub command: String,
    pub args: Vec<String>,
    pub hooks: TestHooks,
    pub log_path: PathBuf,
    /// The `mcp-conformance` binary, for steps that need a host subprocess.
    pub host_program: PathBuf,
    /// The HTTP mock to connect to, for HTTP scenarios.
    pub http: Option<super::http_target::HttpTarget>,
}

/// What playing the steps produced.
pub(super) struct Played {
    pub steps: Vec<StepRecord>,
    /// The client was closed or dropped by the last step (its processes should go).
    pub client_gone: bool,
}

type StepResult = Result<Value, ErrorRecord>;

/// Plays the steps on a fresh single-threaded runtime (so the thread's log capture sees
/// every task), then drops the client.
pub(super) fn play(plan: Plan<'_>) -> Result<Played, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let played = runtime.block_on(play_steps(plan));
    // Whatever is still running (a spawned call never joined) ends with the runtime.
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(played)
}

async fn play_steps(plan: Plan<'_>) -> Played {
    let mut client: Option<Arc<McpClient>> = None;
    let mut spawned: HashMap<String, JoinHandle<StepResult>> = HashMap::new();
    let mut records = Vec::new();
    let mut client_gone = false;
    let mut source: Option<super::tool_layer::Source> = None;
    for (index, step) in plan.scenario.client.steps.iter().enumerate() {
        let started = Instant::now();
        let initialized_before = received_count(&plan, INITIALIZED);
        let initialize_before = received_count(&plan, "initialize");
        let guard = step_guard(plan.scenario, index + 1);
        let result = tokio::time::timeout(guard, async { match step {
            ClientStep::Connect(_) => match connect(&plan).await {
                Ok(connected) => {
                    // The client does not await `initialized`; let the server read it before
                    // the next step, so what the server saw does not depend on scheduling.
                    // Only where a handshake began: kova's legacy transport has none.
                    if received_count(&plan, "initialize") > initialize_before {
                        let _ = await_received(&plan, INITIALIZED, initialized_before + 1, SETTLE_MS).await;
                    }
                    let value = json!({ "protocolVersion": connected.protocol_version() });
                    client = Some(Arc::new(connected));
                    client_gone = false;
                    Ok(value)
                }
                Err(e) => Err(error_record(&e)),
            },
            ClientStep::Drop(_) => {
                client_gone = true;
                Ok(json!(client.take().is_some()))
            }
            ClientStep::Spawn(spawn) => {
                let task = tokio::spawn(run_on_client(client.clone(), (*spawn.step).clone()));
                spawned.insert(spawn.name.clone(), task);
                // Let the spawned step start (and send its request) before the next step.
                tokio::task::yield_now().await;
                Ok(json!({ "spawned": spawn.name }))
            }
            ClientStep::Join(join) => match spawned.remove(&join.name) {
                Some(task) => task.await.unwrap_or_else(|e| Err(harness_error(format!("spawned step panicked: {e}")))),
                None => Err(harness_error(format!("no spawned step named `{}`", join.name))),
            },
            ClientStep::ToolSource(spec) => match &client {
                Some(c) => {
                    let built = super::tool_layer::build(c.clone(), &spec.name, spec.prefix.as_deref(), spec.reports_notifications);
                    source = Some(built);
                    Ok(json!("built"))
                }
                None => Err(not_run()),
            },
            ClientStep::BeginRun(_) => match &source {
                Some(s) => {
                    s.begin_run().await;
                    Ok(super::tool_layer::offered(s))
                }
                None => Err(harness_error("`begin_run` needs a `tool_source` step first".into())),
            },
            ClientStep::NextTurn(_) => match &source {
                Some(s) => {
                    s.before_model_request().await;
                    Ok(super::tool_layer::offered(s))
                }
                None => Err(harness_error("`next_turn` needs a `tool_source` step first".into())),
            },
            ClientStep::CallAdapter(call) => match &source {
                Some(s) => super::tool_layer::call(s, &call.name, call.arguments.clone()).await,
                None => Err(harness_error("`call_adapter` needs a `tool_source` step first".into())),
            },
            ClientStep::Cancel(cancel) => match spawned.remove(&cancel.name) {
                Some(task) => {
                    task.abort();
                    let finished = task.await.is_ok();
                    Ok(json!(if finished { "already finished" } else { "cancelled" }))
                }
                None => Err(harness_error(format!("no spawned step named `{}`", cancel.name))),
            },
            ClientStep::InterruptHost(_) => {
                let mut server = vec![plan.command.clone()];
                server.extend(plan.args.iter().cloned());
                super::host::interrupt_host(super::host::HostPlan {
                    program: &plan.host_program,
                    profile: plan.profile.name(),
                    own_process_group: plan.scenario.client.own_process_group,
                    server,
                    log_path: &plan.log_path,
                })
                .await
            }
            ClientStep::AwaitReceived(wait) => await_received(&plan, &wait.message, wait.count, wait.within_ms).await,
            ClientStep::AwaitStep(wait) => await_step(&plan, wait.launch, wait.step, wait.within_ms).await,
            ClientStep::Processes(want) => processes_at_step(&plan, want.gone, want.within_ms).await,
            ClientStep::Close(_) => {
                let result = run_on_client(client.clone(), step.clone()).await;
                client_gone = true;
                result
            }
            other => run_on_client(client.clone(), other.clone()).await,
        }})
        .await
        .unwrap_or_else(|_| Err(hung(guard)));
        records.push(StepRecord { number: index + 1, label: label(step), result, elapsed: started.elapsed() });
    }
    drop(source);
    drop(client);
    Played { steps: records, client_gone }
}

async fn connect(plan: &Plan<'_>) -> Result<McpClient, McpError> {
    let part = &plan.scenario.client;
    let config = client_config(plan);
    if let Some(target) = &plan.http {
        let server = super::http_target::server(target, &part.http)?;
        return if target.legacy {
            McpClient::connect_legacy_sse(server, config).await
        } else {
            McpClient::connect_http(server, config).await
        };
    }
    let server = StdioServer {
        command: plan.command.clone(),
        args: if part.command.is_some() { Vec::new() } else { plan.args.clone() },
        env: part.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        own_process_group: part.own_process_group,
        cwd: None,
    };
    McpClient::connect_stdio(server, config).await
}

fn client_config(plan: &Plan<'_>) -> ClientConfig {
    let part = &plan.scenario.client;
    let mut config = ClientConfig::new(plan.profile);
    config.timeouts = Some(timeouts(plan.profile.timeouts(), &part.timeouts));
    config.hooks = plan.hooks.clone();
    config.hooks.unwaitable_child |= part.faults.unwaitable_child;
    config
}

fn timeouts(mut base: Timeouts, overrides: &crate::scenario::TimeoutOverrides) -> Timeouts {
    let bound = |ms: u64| (ms > 0).then(|| Duration::from_millis(ms));
    if let Some(ms) = overrides.handshake_ms {
        base.handshake = bound(ms);
    }
    if let Some(ms) = overrides.call_ms {
        base.call = bound(ms);
    }
    if let Some(ms) = overrides.list_ms {
        base.list = bound(ms);
    }
    if let Some(ms) = overrides.idle_read_ms {
        base.idle_read = Duration::from_millis(ms);
    }
    if let Some(ms) = overrides.exit_settle_ms {
        base.exit_settle = Duration::from_millis(ms);
    }
    base
}

/// Runs a step that only needs the client (also what `spawn` runs in the background).
async fn run_on_client(client: Option<Arc<McpClient>>, step: ClientStep) -> StepResult {
    let Some(client) = client else {
        return Err(not_run());
    };
    match step {
        ClientStep::ListTools(_) => client
            .list_tools()
            .await
            .map(|tools| serde_json::to_value(tools).unwrap_or(Value::Null))
            .map_err(|e| error_record(&e)),
        ClientStep::CallTool(call) => client
            .call_tool(&call.name, call.arguments.clone(), call.timeout_ms.map(Duration::from_millis))
            .await
            .map(|result| serde_json::to_value(result).unwrap_or(Value::Null))
            .map_err(|e| error_record(&e)),
        ClientStep::Close(_) => client.close().await.map(|()| json!("closed")).map_err(|e| error_record(&e)),
        ClientStep::Reconnect(_) => client
            .reconnect()
            .await
            .map(|()| json!({ "protocolVersion": client.protocol_version() }))
            .map_err(|e| error_record(&e)),
        ClientStep::Exited(_) => Ok(json!(client.exited())),
        ClientStep::ListChanged(_) => Ok(json!(client.tools_list_changes())),
        ClientStep::WaitExited(wait) => {
            let deadline = Instant::now() + Duration::from_millis(wait.within_ms);
            loop {
                if let Some(text) = client.exited() {
                    // The first text may still lack the last of stderr (it settles within
                    // half a second): kept for `contains`, left out of the snapshot.
                    return Ok(json!({ "exited": true, "metrics": { "first_text": text } }));
                }
                if Instant::now() >= deadline {
                    return Err(ErrorRecord { kind: "timeout".into(), text: format!("exited() still none after {} ms", wait.within_ms) });
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        ClientStep::PollExited(poll) => {
            let started = Instant::now();
            let mut texts: Vec<(String, u128)> = Vec::new();
            let mut first_seen: Option<Instant> = None;
            while started.elapsed() < Duration::from_millis(poll.for_ms) {
                if let Some(text) = client.exited() {
                    let first = *first_seen.get_or_insert_with(Instant::now);
                    if texts.last().map(|(t, _)| t != &text).unwrap_or(true) {
                        texts.push((text, first.elapsed().as_millis()));
                    }
                }
                tokio::time::sleep(Duration::from_millis(poll.every_ms)).await;
            }
            let last_change_ms = texts.last().map(|(_, at)| *at).unwrap_or(0);
            // Only the settled text is shown; how it got there varies run to run, so the
            // counts ride along as metrics, outside the snapshot.
            Ok(json!({
                "final": texts.last().map(|(t, _)| t.clone()),
                "metrics": { "distinct": texts.len(), "last_change_ms": last_change_ms },
            }))
        }
        other => Err(harness_error(format!("step `{}` cannot run here", label(&other)))),
    }
}

/// The runner's own bound on a step the scenario does not bound, so a client that hangs
/// cannot hang the suite.
const STEP_GUARD: Duration = Duration::from_secs(20);

/// How long past its `within_ms` a bounded step may run before it is abandoned (the slack
/// lets the `within_ms` failure show how late it was).
const GUARD_SLACK: Duration = Duration::from_millis(1_000);

/// The kind of a step abandoned because it did not finish: the client's failure.
pub(super) const HUNG: &str = "hung";

/// How long step `number` may run: its `within_ms` expectation and some slack, else
/// [`STEP_GUARD`].
fn step_guard(scenario: &Scenario, number: usize) -> Duration {
    scenario
        .expect
        .steps
        .iter()
        .filter(|e| e.step == number)
        .find_map(|e| e.within_ms)
        .map_or(STEP_GUARD, |ms| Duration::from_millis(ms) + GUARD_SLACK)
}

/// A step that did not finish within its bound: the client hangs where its rule promises
/// an end, which is the client's failure of that rule, not a fault of the harness.
fn hung(guard: Duration) -> ErrorRecord {
    ErrorRecord { kind: HUNG.into(), text: format!("the step did not finish within {} ms: the client hangs", guard.as_millis()) }
}

const INITIALIZED: &str = "notifications/initialized";

/// The bound on the runner's own waits for the server to catch up.
const SETTLE_MS: u64 = 2_000;

fn received_count(plan: &Plan<'_>, message: &str) -> usize {
    let wire = wire_log::read_wire_log(&plan.log_path).unwrap_or_default();
    super::check::received_summary(&wire).iter().filter(|m| *m == message).count()
}

/// Waits, bounded, until the server's wire log shows `count` of `message` (a method or
/// `response:<id>`).
async fn await_received(plan: &Plan<'_>, method: &str, count: usize, within_ms: u64) -> StepResult {
    let deadline = Instant::now() + Duration::from_millis(within_ms);
    loop {
        let seen = received_count(plan, method);
        if seen >= count {
            return Ok(json!(seen));
        }
        if Instant::now() >= deadline {
            return Err(ErrorRecord {
                kind: "timeout".into(),
                text: format!("the server received {seen} `{method}` within {within_ms} ms, {count} awaited"),
            });
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Whether launch `launch` of the server has begun step `step` (1-based) of its script: its
/// records are those after its `started` record and before the next launch's.
fn step_begun(wire: &[wire_log::Record], launch: u32, step: usize) -> bool {
    let mut current = None;
    wire.iter().any(|record| match record {
        wire_log::Record::Started { launch: started, .. } => {
            current = Some(*started);
            false
        }
        wire_log::Record::Step { index, .. } => current == Some(launch) && index + 1 >= step,
        _ => false,
    })
}

/// Waits, bounded, until launch `launch` of the server has begun step `step`.
async fn await_step(plan: &Plan<'_>, launch: u32, step: usize, within_ms: u64) -> StepResult {
    let deadline = Instant::now() + Duration::from_millis(within_ms);
    loop {
        let wire = wire_log::read_wire_log(&plan.log_path).unwrap_or_default();
        if step_begun(&wire, launch, step) {
            return Ok(json!({ "launch": launch, "step": step }));
        }
        if Instant::now() >= deadline {
            return Err(ErrorRecord {
                kind: "timeout".into(),
                text: format!("launch {launch} of the server did not begin step {step} within {within_ms} ms"),
            });
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Whether every process the server reported so far is gone (waiting for them to go, bounded,
/// while the client's tasks run), or some is still alive. Fails naming what is not.
async fn processes_at_step(plan: &Plan<'_>, gone: bool, within_ms: u64) -> StepResult {
    let wire = wire_log::read_wire_log(&plan.log_path).unwrap_or_default();
    let reported = super::procs::reported(&wire);
    if reported.is_empty() {
        return Err(ErrorRecord { kind: "processes".into(), text: "the server reported no process".into() });
    }
    let alive = || reported.iter().filter(|(pid, _)| super::procs::is_alive(*pid)).collect::<Vec<_>>();
    let deadline = Instant::now() + Duration::from_millis(if gone { within_ms } else { 0 });
    loop {
        let now_alive = alive();
        match (gone, now_alive.is_empty()) {
            (true, true) => return Ok(json!({ "gone": true })),
            (false, false) => return Ok(json!({ "gone": false })),
            (false, true) => {
                return Err(ErrorRecord { kind: "processes".into(), text: "every process is gone, some was to live on".into() })
            }
            (true, false) if Instant::now() >= deadline => {
                let names: Vec<String> = now_alive.iter().map(|(pid, role)| format!("{role} pid {pid}")).collect();
                return Err(ErrorRecord {
                    kind: "processes".into(),
                    text: format!("still alive after {within_ms} ms: {}", names.join(", ")),
                });
            }
            (true, false) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }
}

fn error_record(error: &McpError) -> ErrorRecord {
    ErrorRecord { kind: error.kind().name().into(), text: error.full_text() }
}

/// The client's own failure (a connect that failed) left nothing to run a step on.
fn not_run() -> ErrorRecord {
    ErrorRecord { kind: "not-run".into(), text: "no connected client".into() }
}

fn harness_error(text: String) -> ErrorRecord {
    ErrorRecord { kind: "harness".into(), text }
}

/// A short label for a step (`call_tool echo`).
pub fn label(step: &ClientStep) -> String {
    match step {
        ClientStep::Connect(_) => "connect".into(),
        ClientStep::ListTools(_) => "list_tools".into(),
        ClientStep::CallTool(call) => match call.timeout_ms {
            Some(ms) => format!("call_tool {} (timeout {ms} ms)", call.name),
            None => format!("call_tool {}", call.name),
        },
        ClientStep::Close(_) => "close".into(),
        ClientStep::Drop(_) => "drop".into(),
        ClientStep::Exited(_) => "exited".into(),
        ClientStep::PollExited(p) => format!("poll_exited every {} ms for {} ms", p.every_ms, p.for_ms),
        ClientStep::WaitExited(w) => format!("wait_exited within {} ms", w.within_ms),
        ClientStep::ListChanged(_) => "list_changed".into(),
        ClientStep::Spawn(s) => format!("spawn {}: {}", s.name, label(&s.step)),
        ClientStep::Join(j) => format!("join {}", j.name),
        ClientStep::InterruptHost(_) => "interrupt_host (SIGINT to the host's group)".into(),
        ClientStep::ToolSource(t) => match &t.prefix {
            Some(prefix) => format!("tool_source {} (prefix {prefix})", t.name),
            None => format!("tool_source {}", t.name),
        },
        ClientStep::BeginRun(_) => "begin_run".into(),
        ClientStep::NextTurn(_) => "next_turn".into(),
        ClientStep::CallAdapter(call) => format!("call_adapter {}", call.name),
        ClientStep::Cancel(c) => format!("cancel {}", c.name),
        ClientStep::AwaitReceived(a) => format!("await_received {} x{}", a.message, a.count),
        ClientStep::Reconnect(_) => "reconnect".into(),
        ClientStep::AwaitStep(a) => format!("await_step {} of launch {}", a.step, a.launch),
        ClientStep::Processes(p) if p.gone => format!("processes gone within {} ms", p.within_ms),
        ClientStep::Processes(_) => "processes: some alive".into(),
    }
}
