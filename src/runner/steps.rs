//! Driving a client under test through a scenario's steps: every client, the reference
//! client included, through the one seam ([`crate::cut::ClientUnderTest`]).

use super::outcome::{ErrorRecord, StepRecord};
use crate::cut::{ClientUnderTest, ServerProbe, Settings, StepError, Target, ToolLayerStep};
use crate::probe::until_wire_log;
use crate::scenario::{ClientStep, Scenario};
use mcp_mock_servers::wire_log;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// Everything needed to play the client's part.
pub(super) struct Plan<'a> {
    pub scenario: &'a Scenario,
    /// Where the client connects.
    pub target: Target,
    /// The scenario's settings for the client.
    pub settings: Settings,
    pub log_path: PathBuf,
    /// The runner's own bound on one step.
    pub step_guard: Duration,
    /// A client other than the reference one that outlives the step guard has failed the
    /// scenario (a hung driver): nothing more is asked of it, not even the closing drop,
    /// which would wait out the guard again.
    pub stop_at_hang: bool,
}

/// What playing the steps produced.
pub(super) struct Played {
    pub steps: Vec<StepRecord>,
    /// The client was closed or dropped by the last step (its processes should go).
    pub client_gone: bool,
    /// A step outlived the step guard: for a client other than the reference, its fault.
    pub guard_expired: Option<usize>,
}

type StepResult = Result<Value, ErrorRecord>;

/// Plays the steps on a fresh single-threaded runtime (so the thread's log capture sees
/// every task), then drops the client's connection and the runtime, and hands the adapter
/// back (a driver process lives on until the facts are taken).
pub(super) fn play<A: ClientUnderTest + 'static>(
    plan: Plan<'_>,
    adapter: Rc<A>,
) -> Result<Played, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    let local = tokio::task::LocalSet::new();
    let played = local.block_on(&runtime, play_steps(plan, adapter));
    // Whatever is still running (a spawned call never joined) ends with the runtime.
    drop(local);
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN);
    Ok(played)
}

async fn play_steps<A: ClientUnderTest + 'static>(plan: Plan<'_>, client: Rc<A>) -> Played {
    let mut spawned: HashMap<String, JoinHandle<StepResult>> = HashMap::new();
    let mut records = Vec::new();
    let mut client_gone = false;
    let mut guard_expired = None;
    let probe = ServerProbe {
        log_path: plan.log_path.clone(),
    };
    client.ready().await;
    for (index, step) in plan.scenario.client.steps.iter().enumerate() {
        let started = Instant::now();
        let initialized_before = received_count(&plan, INITIALIZED);
        let initialize_before = received_count(&plan, "initialize");
        let guard = step_guard(plan.scenario, index + 1, plan.step_guard);
        let result = tokio::time::timeout(guard, async {
            match step {
                ClientStep::Connect(_) => {
                    let connected = client
                        .connect(&plan.target, &plan.settings)
                        .await
                        .map_err(record);
                    if connected.is_ok() {
                        // A client need not await `initialized`; let the server read it before
                        // the next step, so what the server saw does not depend on scheduling.
                        // Only where a handshake began: kova's legacy transport has none.
                        if received_count(&plan, "initialize") > initialize_before {
                            let _ = await_moved_past(
                                &plan,
                                INITIALIZED,
                                initialized_before + 1,
                                SETTLE_MS,
                            )
                            .await;
                        }
                        client_gone = false;
                    }
                    connected
                }
                ClientStep::Drop(_) => {
                    client_gone = true;
                    client.drop_connection().await.map_err(record)
                }
                ClientStep::Spawn(spawn) => {
                    let task = tokio::task::spawn_local(run_on_client(
                        client.clone(),
                        (*spawn.step).clone(),
                    ));
                    spawned.insert(spawn.name.clone(), task);
                    // Let the spawned step start (and send its request) before the next step.
                    tokio::task::yield_now().await;
                    Ok(json!({ "spawned": spawn.name }))
                }
                ClientStep::Join(join) => match spawned.remove(&join.name) {
                    Some(task) => task.await.unwrap_or_else(|e| {
                        Err(harness_error(format!("spawned step panicked: {e}")))
                    }),
                    None => Err(harness_error(format!(
                        "no spawned step named `{}`",
                        join.name
                    ))),
                },
                ClientStep::ToolSource(spec) => client
                    .tool_layer(ToolLayerStep::Build {
                        name: spec.name.clone(),
                        prefix: spec.prefix.clone(),
                        reports_notifications: spec.reports_notifications,
                    })
                    .await
                    .map_err(record),
                ClientStep::BeginRun(_) => client
                    .tool_layer(ToolLayerStep::BeginRun)
                    .await
                    .map_err(record),
                ClientStep::NextTurn(_) => client
                    .tool_layer(ToolLayerStep::NextTurn)
                    .await
                    .map_err(record),
                ClientStep::CallAdapter(call) => client
                    .tool_layer(ToolLayerStep::Call {
                        name: call.name.clone(),
                        arguments: call.sent_arguments(),
                    })
                    .await
                    .map_err(record),
                ClientStep::ToolSet(set) => client
                    .tool_layer(ToolLayerStep::Set {
                        servers: set.servers.clone(),
                    })
                    .await
                    .map_err(record),
                ClientStep::CallSet(call) => client
                    .tool_layer(ToolLayerStep::CallSet {
                        name: call.name.clone(),
                        arguments: call.sent_arguments(),
                    })
                    .await
                    .map_err(record),
                ClientStep::Cancel(cancel) => match spawned.remove(&cancel.name) {
                    Some(task) => {
                        task.abort();
                        let finished = task.await.is_ok();
                        Ok(json!(if finished {
                            "already finished"
                        } else {
                            "cancelled"
                        }))
                    }
                    None => Err(harness_error(format!(
                        "no spawned step named `{}`",
                        cancel.name
                    ))),
                },
                ClientStep::InterruptHost(_) => client
                    .interrupt_host(&plan.target, &plan.settings, &probe)
                    .await
                    .map_err(record),
                ClientStep::AwaitReceived(wait) => {
                    await_received(&plan, &wait.message, wait.count, wait.within_ms).await
                }
                ClientStep::AwaitStep(wait) => {
                    await_step(&plan, wait.launch, wait.step, wait.within_ms).await
                }
                ClientStep::AwaitPlayed(wait) => await_played(&plan, wait.within_ms).await,
                ClientStep::Processes(want) => {
                    processes_at_step(&plan, want.gone, want.within_ms).await
                }
                ClientStep::ServerProcess(_) => match client.server_pid().await.map_err(record) {
                    Ok(pid) => server_launch(&plan, pid),
                    Err(e) => Err(e),
                },
                ClientStep::Close(_) => {
                    let result = run_on_client(client.clone(), step.clone()).await;
                    client_gone = true;
                    result
                }
                other => run_on_client(client.clone(), other.clone()).await,
            }
        })
        .await
        .unwrap_or_else(|_| {
            guard_expired.get_or_insert(index + 1);
            Err(hung(guard))
        });
        records.push(StepRecord {
            number: index + 1,
            label: label(step),
            result,
            elapsed: started.elapsed(),
        });
        if plan.stop_at_hang && guard_expired.is_some() {
            break;
        }
    }
    // Calls never joined end here, and the client lets go of its connection.
    for (_, task) in spawned {
        task.abort();
        let _ = task.await;
    }
    if !(plan.stop_at_hang && guard_expired.is_some()) {
        let _ = tokio::time::timeout(plan.step_guard, client.drop_connection()).await;
    }
    Played {
        steps: records,
        client_gone,
        guard_expired,
    }
}

/// Runs a step that only needs the client (also what `spawn` runs in the background).
async fn run_on_client<A: ClientUnderTest>(client: Rc<A>, step: ClientStep) -> StepResult {
    match step {
        ClientStep::ListTools(_) => client.list_tools().await.map_err(record),
        ClientStep::CallTool(call) => client
            .call_tool(
                &call.name,
                call.sent_arguments(),
                call.timeout_ms.map(Duration::from_millis),
            )
            .await
            .map_err(record),
        ClientStep::Close(_) => client.close().await.map_err(record),
        ClientStep::Reconnect(_) => client.reconnect().await.map_err(record),
        ClientStep::Exited(_) => client
            .exited()
            .await
            .map(|text| json!(text))
            .map_err(record),
        ClientStep::Request(raw) => client
            .request(&raw.method, raw.params.clone())
            .await
            .map_err(record),
        ClientStep::Notify(raw) => client
            .notify(&raw.method, raw.params.clone())
            .await
            .map_err(record),
        ClientStep::ServerInfo(_) => client.server_info().await.map_err(record),
        ClientStep::SessionId(_) => client
            .session_id()
            .await
            .map(|id| json!(id))
            .map_err(record),
        ClientStep::ListChanged(_) => client
            .list_changed_count()
            .await
            .map(|n| json!(n))
            .map_err(record),
        ClientStep::WaitListChanged(wait) => {
            let deadline = Instant::now() + Duration::from_millis(wait.within_ms);
            loop {
                let counted = client.list_changed_count().await.map_err(record)?;
                if counted >= wait.count {
                    return Ok(json!(counted));
                }
                if Instant::now() >= deadline {
                    let text = format!(
                        "{counted} list change(s) counted after {} ms, wanted {}",
                        wait.within_ms, wait.count
                    );
                    return Err(ErrorRecord {
                        kind: "timeout".into(),
                        text,
                    });
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        ClientStep::WaitExited(wait) => {
            let deadline = Instant::now() + Duration::from_millis(wait.within_ms);
            loop {
                if let Some(text) = client.exited().await.map_err(record)? {
                    // The first text may still lack the last of stderr (it settles within
                    // half a second): kept for `contains`, left out of the snapshot.
                    return Ok(json!({ "exited": true, "metrics": { "first_text": text } }));
                }
                if Instant::now() >= deadline {
                    return Err(ErrorRecord {
                        kind: "timeout".into(),
                        text: format!("exited() still none after {} ms", wait.within_ms),
                    });
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        ClientStep::PollExited(poll) => {
            let started = Instant::now();
            let mut texts: Vec<(String, u128)> = Vec::new();
            let mut first_seen: Option<Instant> = None;
            while started.elapsed() < Duration::from_millis(poll.for_ms) {
                if let Some(text) = client.exited().await.map_err(record)? {
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
        other => Err(harness_error(format!(
            "step `{}` cannot run here",
            label(&other)
        ))),
    }
}

/// A client's error as the outcome keeps it: an untyped error is the client's `error`.
fn record(error: StepError) -> ErrorRecord {
    ErrorRecord {
        kind: error.kind.unwrap_or_else(|| UNTYPED.into()),
        text: error.text,
    }
}

/// The kind of an error whose client gave no typed kind.
pub(crate) const UNTYPED: &str = "untyped";

/// The runner's own bound on a step the scenario does not bound, so a client that hangs
/// cannot hang the suite.
pub const STEP_GUARD: Duration = Duration::from_secs(20);

/// How long the steps' runtime may take to end what still runs once they are played.
pub(super) const RUNTIME_SHUTDOWN: Duration = Duration::from_secs(1);

/// How long past its `within_ms` a bounded step may run before it is abandoned (the slack
/// lets the `within_ms` failure show how late it was).
const GUARD_SLACK: Duration = Duration::from_millis(1_000);

/// The kind of a step abandoned because it did not finish: the client's failure.
pub(super) const HUNG: &str = "hung";

/// How long step `number` may run: its `within_ms` expectation and some slack, else the
/// runner's bound (`default`, [`STEP_GUARD`] unless the runner was given another) and the
/// time to read what the server writes in bulk ([`bulk_allowance`]).
pub(super) fn step_guard(scenario: &Scenario, number: usize, default: Duration) -> Duration {
    scenario
        .expect
        .steps
        .iter()
        .filter(|e| e.step == number)
        .find_map(|e| e.within_ms)
        .map_or_else(
            || default + bulk_allowance(scenario),
            |ms| Duration::from_millis(ms) + GUARD_SLACK,
        )
}

/// The slowest a client may read a server's bulk output (its long lines and stderr floods)
/// and still be a working one, not a hung one: an interpreter splitting a 16 MiB line on a
/// loaded 2-core machine takes several seconds.
const BULK_BYTES_PER_SEC: usize = 1 << 20;

/// What an unbounded step's guard adds for the bulk the server writes in its largest
/// script: a second per MiB ([`BULK_BYTES_PER_SEC`]), so a slow reader of a 16 MiB line is
/// not taken for a client that hangs.
pub(super) fn bulk_allowance(scenario: &Scenario) -> Duration {
    use mcp_mock_servers::script::Step;
    let bytes = scenario
        .server
        .launch_steps()
        .map(|steps| {
            steps
                .iter()
                .map(|step| match step {
                    Step::LongLine(line) => line.bytes,
                    Step::StderrFlood(flood) => flood.bytes,
                    _ => 0,
                })
                .sum::<usize>()
        })
        .max()
        .unwrap_or(0);
    Duration::from_millis((bytes * 1000 / BULK_BYTES_PER_SEC) as u64)
}

/// A step that did not finish within its bound: the client hangs where its rule promises
/// an end, which is the client's failure of that rule, not a fault of the harness.
fn hung(guard: Duration) -> ErrorRecord {
    ErrorRecord {
        kind: HUNG.into(),
        text: format!(
            "the step did not finish within {} ms: the client hangs",
            guard.as_millis()
        ),
    }
}

const INITIALIZED: &str = "notifications/initialized";

/// The bound on the runner's own waits for the server to catch up.
const SETTLE_MS: u64 = 2_000;

fn received_count(plan: &Plan<'_>, message: &str) -> usize {
    let wire = wire_log::read_wire_log(&plan.log_path).unwrap_or_default();
    crate::probe::received_summary(&wire)
        .iter()
        .filter(|m| *m == message)
        .count()
}

/// Waits, bounded, until the server's wire log shows `count` of `message` (a method or
/// `response:<id>`).
async fn await_received(plan: &Plan<'_>, method: &str, count: usize, within_ms: u64) -> StepResult {
    let mut seen = 0;
    let counted = |wire: &[wire_log::Record]| {
        seen = crate::probe::received_summary(wire)
            .iter()
            .filter(|m| *m == method)
            .count();
        seen >= count
    };
    match until_wire_log(&plan.log_path, Duration::from_millis(within_ms), counted).await {
        true => Ok(json!(seen)),
        false => Err(ErrorRecord {
            kind: "timeout".into(),
            text: format!(
                "the server received {seen} `{method}` within {within_ms} ms, {count} awaited"
            ),
        }),
    }
}

/// Waits, bounded, until the server's script moved on after receiving `count` of `method`
/// (see `probe::moved_past`): a close or a kill then cannot cut the step in half.
async fn await_moved_past(plan: &Plan<'_>, method: &str, count: usize, within_ms: u64) -> bool {
    until_wire_log(&plan.log_path, Duration::from_millis(within_ms), |wire| {
        crate::probe::moved_past(wire, method, count)
    })
    .await
}

/// Whether launch `launch` of the server has begun step `step` (1-based) of its script: its
/// records are those after its `started` record and before the next launch's.
fn step_begun(wire: &[wire_log::Record], launch: u32, step: usize) -> bool {
    let mut current = None;
    wire.iter().any(|record| match record {
        wire_log::Record::Started {
            launch: started, ..
        } => {
            current = Some(*started);
            false
        }
        wire_log::Record::Step { index, .. } => current == Some(launch) && index + 1 >= step,
        _ => false,
    })
}

/// Waits, bounded, until launch `launch` of the server has begun step `step`.
async fn await_step(plan: &Plan<'_>, launch: u32, step: usize, within_ms: u64) -> StepResult {
    match until_wire_log(&plan.log_path, Duration::from_millis(within_ms), |wire| {
        step_begun(wire, launch, step)
    })
    .await
    {
        true => Ok(json!({ "launch": launch, "step": step })),
        false => Err(ErrorRecord {
            kind: "timeout".into(),
            text: format!(
                "launch {launch} of the server did not begin step {step} within {within_ms} ms"
            ),
        }),
    }
}

/// Waits, bounded, until the server has played its script to the end (or stopped short).
async fn await_played(plan: &Plan<'_>, within_ms: u64) -> StepResult {
    let mut stopped = None;
    let over = |wire: &[wire_log::Record]| {
        wire.iter().any(|record| match record {
            wire_log::Record::Completed {} => true,
            wire_log::Record::Mismatch {
                index, expected, ..
            } => {
                stopped = Some(format!(
                    "the server stopped at step {}: {expected}",
                    index + 1
                ));
                true
            }
            wire_log::Record::Exiting { .. } => {
                stopped = Some("the server exited before its script's end".into());
                true
            }
            _ => false,
        })
    };
    if !until_wire_log(&plan.log_path, Duration::from_millis(within_ms), over).await {
        return Err(ErrorRecord {
            kind: "timeout".into(),
            text: format!("the server did not play its script to the end within {within_ms} ms"),
        });
    }
    match stopped {
        None => Ok(json!("played")),
        Some(text) => Err(ErrorRecord {
            kind: "script".into(),
            text,
        }),
    }
}

/// Whether every process the server reported so far is gone (waiting for them to go, bounded,
/// while the client's tasks run), or some is still alive. Fails naming what is not.
async fn processes_at_step(plan: &Plan<'_>, gone: bool, within_ms: u64) -> StepResult {
    let wire = wire_log::read_wire_log(&plan.log_path).unwrap_or_default();
    let reported = crate::probe::procs::reported(&wire);
    if reported.is_empty() {
        return Err(ErrorRecord {
            kind: "processes".into(),
            text: "the server reported no process".into(),
        });
    }
    // Gone means done exiting (its pipes closed), so the step after sees a server that has
    // exited, never one halfway out.
    let alive = || {
        reported
            .iter()
            .filter(|(pid, _)| {
                if gone {
                    !crate::probe::procs::has_exited(*pid)
                } else {
                    crate::probe::procs::is_alive(*pid)
                }
            })
            .collect::<Vec<_>>()
    };
    let deadline = Instant::now() + Duration::from_millis(if gone { within_ms } else { 0 });
    loop {
        let now_alive = alive();
        match (gone, now_alive.is_empty()) {
            (true, true) => return Ok(json!({ "gone": true })),
            (false, false) => return Ok(json!({ "gone": false })),
            (false, true) => {
                return Err(ErrorRecord {
                    kind: "processes".into(),
                    text: "every process is gone, some was to live on".into(),
                })
            }
            (true, false) if Instant::now() >= deadline => {
                let names: Vec<String> = now_alive
                    .iter()
                    .map(|(pid, role)| format!("{role} pid {pid}"))
                    .collect();
                return Err(ErrorRecord {
                    kind: "processes".into(),
                    text: format!("still alive after {within_ms} ms: {}", names.join(", ")),
                });
            }
            (true, false) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }
}

/// Which launch of the server the process id a client gives for it belongs to; an error
/// (the client's) when it gives none or one no launch reported.
fn server_launch(plan: &Plan<'_>, pid: Option<u32>) -> StepResult {
    let wire = wire_log::read_wire_log(&plan.log_path).unwrap_or_default();
    let launches: Vec<(u32, u32)> = wire
        .iter()
        .filter_map(|record| match record {
            wire_log::Record::Started { launch, pid, .. } => Some((*launch, *pid)),
            _ => None,
        })
        .collect();
    let reported = || {
        launches
            .iter()
            .map(|(launch, pid)| format!("launch {launch}: pid {pid}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(pid) = pid else {
        return Err(ErrorRecord {
            kind: "processes".into(),
            text: format!("the client names no server process ({})", reported()),
        });
    };
    match launches.iter().find(|(_, p)| *p == pid) {
        Some((launch, _)) => Ok(json!(format!("launch {launch}"))),
        None => Err(ErrorRecord {
            kind: "processes".into(),
            text: format!(
                "the client names pid {pid}, which no launch of the server reported ({})",
                reported()
            ),
        }),
    }
}

fn harness_error(text: String) -> ErrorRecord {
    ErrorRecord {
        kind: "harness".into(),
        text,
    }
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
        ClientStep::PollExited(p) => {
            format!("poll_exited every {} ms for {} ms", p.every_ms, p.for_ms)
        }
        ClientStep::WaitExited(w) => format!("wait_exited within {} ms", w.within_ms),
        ClientStep::ListChanged(_) => "list_changed".into(),
        ClientStep::WaitListChanged(w) => {
            format!("wait_list_changed {} within {} ms", w.count, w.within_ms)
        }
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
        ClientStep::ToolSet(set) => format!("tool_set ({} servers)", set.servers.len()),
        ClientStep::CallSet(call) => format!("call_set {}", call.name),
        ClientStep::Cancel(c) => format!("cancel {}", c.name),
        ClientStep::AwaitReceived(a) => format!("await_received {} x{}", a.message, a.count),
        ClientStep::Reconnect(_) => "reconnect".into(),
        ClientStep::AwaitStep(a) => format!("await_step {} of launch {}", a.step, a.launch),
        ClientStep::AwaitPlayed(_) => "await_played".into(),
        ClientStep::Processes(p) if p.gone => format!("processes gone within {} ms", p.within_ms),
        ClientStep::Processes(_) => "processes: some alive".into(),
        ClientStep::Request(raw) => format!("request {}", raw.method),
        ClientStep::Notify(raw) => format!("notify {}", raw.method),
        ClientStep::ServerInfo(_) => "server_info".into(),
        ClientStep::ServerProcess(_) => "server_process".into(),
        ClientStep::SessionId(_) => "session_id".into(),
    }
}
