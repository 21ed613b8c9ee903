//! The feature checks, run one after the other on one initialized session (after the query
//! checks): they list what the server offers (its own fixtures), call what the safety policy
//! allows, and judge the answers and everything else the server sent in the session.

use super::settings::Plan;
use crate::checks::common::calls::{collect, start_calls};
use crate::checks::session::peer::{request, since, Peer};
use crate::checks::session::{not_asked, Rpc};
use crate::checks::{lifecycle, prompts, resources, tool_calls, utilities};
use crate::fixtures::{self, CallPolicy, Listed};
use crate::outcome::Finding;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// The feature checks run on a shared session, in report order.
pub const SESSION_CHECKS: &[&str] = &[
    lifecycle::SECOND_INITIALIZE,
    lifecycle::SERVER_INFO,
    tool_calls::CALL,
    tool_calls::ERROR_IN_RESULT,
    tool_calls::INVALID_ARGUMENTS,
    tool_calls::OUTPUT_SCHEMA,
    tool_calls::NAMES,
    tool_calls::ANNOTATIONS,
    tool_calls::SCHEMA_DIALECT,
    prompts::LIST,
    prompts::GET,
    prompts::MISSING_ARGUMENT,
    prompts::UNKNOWN,
    resources::LIST,
    resources::TEMPLATES,
    resources::READ,
    resources::UNKNOWN,
    resources::SUBSCRIBE,
    resources::UPDATED,
    utilities::COMPLETE,
    utilities::SET_LEVEL,
    utilities::LEVEL_RESPECTED,
    utilities::BOGUS_CURSOR,
    utilities::PROGRESS,
    utilities::CANCELLATION,
    utilities::CONCURRENT,
    lifecycle::DECLARED_REQUESTS,
    lifecycle::LIST_CHANGED,
];

/// What the feature checks need of the run's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Which tools may be called.
    pub policy: CallPolicy,
    /// How long calls (and probes) in flight are waited for before they are cancelled: a
    /// slow tool is not judged rather than holding up the run.
    pub patience: Duration,
    /// The bound on a request that must be answered.
    pub timeout: Duration,
}

impl Settings {
    /// The settings of `plan`: patience is a twentieth of `--timeout`, from 200 ms to 2 s.
    pub fn of(plan: &Plan) -> Settings {
        let patience = (plan.timeout / 20)
            .clamp(Duration::from_millis(200), Duration::from_secs(2))
            .min(plan.timeout);
        Settings {
            policy: CallPolicy {
                named: plan.call_tools.clone(),
            },
            patience,
            timeout: plan.timeout,
        }
    }
}

/// The selected feature checks that run on a shared session.
pub fn selected(plan: &Plan) -> Vec<&'static str> {
    SESSION_CHECKS
        .iter()
        .copied()
        .filter(|id| plan.wants(id))
        .collect()
}

type Out = Vec<(&'static str, String, Finding, u128)>;

/// Runs the `wanted` feature checks on an initialized session; `init` is its `initialize`
/// result, `offered` the revision offered (the report's revision).
pub async fn run(
    peer: &mut impl Peer,
    offered: &str,
    init: &Value,
    wanted: &[&'static str],
    settings: &Settings,
) -> Out {
    let mut out: Out = Vec::new();
    if wanted.is_empty() {
        return out;
    }
    let wants = |id: &str| wanted.contains(&id);
    let revision = init
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or(offered)
        .to_string();
    let capabilities = init.get("capabilities").cloned().unwrap_or_default();
    let declares = |capability: &str| capabilities.get(capability).is_some();
    let mut push = |id: &'static str, finding: Finding, started: Instant| {
        if wanted.contains(&id) {
            out.push((
                id,
                offered.to_string(),
                finding,
                started.elapsed().as_millis(),
            ));
        }
    };
    let stalled = |peer: &dyn StalledPeer| peer.why().map(|why| not_asked(&why));

    let started = Instant::now();
    push(
        lifecycle::SERVER_INFO,
        lifecycle::judge_server_info(init),
        started,
    );

    // Logging first, so every log message after it is judged against the level.
    let started = Instant::now();
    let mut level_mark = None;
    if wants(utilities::SET_LEVEL) || wants(utilities::LEVEL_RESPECTED) {
        let finding = if !declares("logging") {
            Finding::skip("the server does not declare `logging`")
        } else {
            let (finding, after) = utilities::set_level(peer).await;
            level_mark = Some(after);
            finding
        };
        push(utilities::SET_LEVEL, finding, started);
    }

    // Tools: the list, then the calls the policy allows, all in flight at once.
    let started = Instant::now();
    let tool_checks = [
        tool_calls::CALL,
        tool_calls::ERROR_IN_RESULT,
        tool_calls::INVALID_ARGUMENTS,
        tool_calls::OUTPUT_SCHEMA,
        tool_calls::NAMES,
        tool_calls::ANNOTATIONS,
        tool_calls::SCHEMA_DIALECT,
        utilities::PROGRESS,
        utilities::CANCELLATION,
    ];
    let mut tools: Vec<Value> = Vec::new();
    let mut allowed: Vec<Value> = Vec::new();
    let mut calls = Vec::new();
    let mut tools_skip: Option<String> = None;
    if tool_checks.iter().any(|id| wants(id)) {
        if !declares("tools") {
            tools_skip = Some("the server does not declare `tools`".into());
        } else {
            let listed = fixtures::list_all(peer, fixtures::TOOLS).await;
            if let Some((why, _)) = &listed.broken {
                tools_skip = Some(format!(
                    "the tool list stopped short (see server.tools.list): {why}"
                ));
            }
            tools = listed.items;
            allowed = tools
                .iter()
                .filter(|t| settings.policy.allows(t))
                .cloned()
                .collect();
        }
    }
    let none_allowed = || {
        tools_skip
            .clone()
            .unwrap_or_else(|| CallPolicy::none_allowed(tools.len()))
    };
    let calling = [
        tool_calls::CALL,
        tool_calls::ERROR_IN_RESULT,
        tool_calls::OUTPUT_SCHEMA,
        utilities::PROGRESS,
        utilities::CANCELLATION,
    ];
    // The calls stay in flight while the checks that do not need their answers run; a
    // slow tool then costs no more than its patience beside them.
    let calls_deadline = Instant::now() + settings.patience;
    let in_flight =
        if tools_skip.is_none() && !allowed.is_empty() && calling.iter().any(|id| wants(id)) {
            Some(start_calls(peer, &allowed).await)
        } else {
            None
        };
    let calls_started = started;
    let started = Instant::now();
    if wants(tool_calls::INVALID_ARGUMENTS) {
        let finding = match stalled(peer) {
            Some(skip) => skip,
            None if allowed.is_empty() => Finding::skip(none_allowed()),
            // A refusal needs no tool to run: the probes wait the bound of any request
            // (`--timeout`), not a slow tool's patience, which a loaded machine outlasts.
            None => tool_calls::probe_invalid(peer, &allowed, settings.timeout).await,
        };
        push(tool_calls::INVALID_ARGUMENTS, finding, started);
    }
    let started = Instant::now();
    let listing = |judge: fn(&[Value], &str) -> Finding| match &tools_skip {
        Some(why) => Finding::skip(why.clone()),
        None => judge(&tools, &revision),
    };
    push(tool_calls::NAMES, listing(tool_calls::judge_names), started);
    push(
        tool_calls::ANNOTATIONS,
        listing(tool_calls::judge_annotations),
        started,
    );
    push(
        tool_calls::SCHEMA_DIALECT,
        listing(tool_calls::judge_schema_dialect),
        started,
    );

    // Prompts.
    let started = Instant::now();
    let prompt_checks = [
        prompts::LIST,
        prompts::GET,
        prompts::MISSING_ARGUMENT,
        prompts::UNKNOWN,
    ];
    let mut prompt_items = Vec::new();
    if prompt_checks.iter().any(|id| wants(id)) || wants(utilities::COMPLETE) {
        if let Some(skip) = gate(declares("prompts"), "prompts", peer) {
            for id in prompt_checks {
                push(id, skip.clone(), started);
            }
        } else {
            let listed = fixtures::list_all(peer, fixtures::PROMPTS).await;
            push(prompts::LIST, prompts::judge_list(&listed), started);
            prompt_items = listed.items;
            let started = Instant::now();
            if wants(prompts::GET) {
                push(
                    prompts::GET,
                    prompts::get(peer, &prompt_items, &revision).await,
                    started,
                );
            }
            let started = Instant::now();
            if wants(prompts::MISSING_ARGUMENT) {
                push(
                    prompts::MISSING_ARGUMENT,
                    prompts::missing_argument(peer, &prompt_items).await,
                    started,
                );
            }
            let started = Instant::now();
            if wants(prompts::UNKNOWN) {
                push(prompts::UNKNOWN, prompts::unknown(peer).await, started);
            }
        }
    }

    // Resources.
    let started = Instant::now();
    let resource_checks = [
        resources::LIST,
        resources::TEMPLATES,
        resources::READ,
        resources::UNKNOWN,
        resources::SUBSCRIBE,
    ];
    let mut templates = Vec::new();
    let mut subscribed: Vec<String> = Vec::new();
    if resource_checks.iter().any(|id| wants(id)) || wants(utilities::COMPLETE) {
        if let Some(skip) = gate(declares("resources"), "resources", peer) {
            for id in resource_checks {
                push(id, skip.clone(), started);
            }
        } else {
            let listed = fixtures::list_all(peer, fixtures::RESOURCES).await;
            push(
                resources::LIST,
                resources::judge_list(&listed, "uri"),
                started,
            );
            let started = Instant::now();
            let listed_templates: Listed = fixtures::list_all(peer, fixtures::TEMPLATES).await;
            push(
                resources::TEMPLATES,
                resources::judge_list(&listed_templates, "uriTemplate"),
                started,
            );
            templates = listed_templates.items;
            let started = Instant::now();
            if wants(resources::READ) {
                push(
                    resources::READ,
                    resources::read(peer, &listed.items, &templates).await,
                    started,
                );
            }
            let started = Instant::now();
            if wants(resources::UNKNOWN) {
                push(
                    resources::UNKNOWN,
                    resources::unknown(peer, &revision).await,
                    started,
                );
            }
            let started = Instant::now();
            if wants(resources::SUBSCRIBE) || wants(resources::UPDATED) {
                let finding = resources::subscribe(peer, &capabilities, &listed.items).await;
                if matches!(finding, Finding::Pass { .. }) || matches!(finding, Finding::Fail(_)) {
                    subscribed.extend(
                        listed
                            .items
                            .iter()
                            .find_map(|r| r.get("uri").and_then(Value::as_str))
                            .map(str::to_string),
                    );
                }
                push(resources::SUBSCRIBE, finding, started);
            }
        }
    }

    let kinds = [fixtures::TOOLS, fixtures::PROMPTS, fixtures::RESOURCES];
    let started = Instant::now();
    if wants(utilities::COMPLETE) {
        let finding = match stalled(peer) {
            Some(skip) => skip,
            None => utilities::complete(peer, &capabilities, &prompt_items, &templates).await,
        };
        push(utilities::COMPLETE, finding, started);
    }
    let started = Instant::now();
    if wants(utilities::BOGUS_CURSOR) {
        let finding = match stalled(peer) {
            Some(skip) => skip,
            None => utilities::bogus_cursor(peer, &capabilities, &kinds).await,
        };
        push(utilities::BOGUS_CURSOR, finding, started);
    }
    let started = Instant::now();
    if wants(utilities::CONCURRENT) {
        let finding = match stalled(peer) {
            Some(skip) => skip,
            None => utilities::concurrent(peer, &capabilities, &kinds, settings.timeout).await,
        };
        push(utilities::CONCURRENT, finding, started);
    }
    // The calls' answers, then cancellation of those still running.
    if let Some(in_flight) = in_flight {
        calls = collect(peer, in_flight, calls_deadline).await;
    }
    let unanswered: Vec<_> = calls
        .iter()
        .filter(|c| c.exchange.reply.is_err())
        .map(|c| c.exchange.clone())
        .collect();
    if calls.is_empty() {
        for id in [
            tool_calls::CALL,
            tool_calls::ERROR_IN_RESULT,
            tool_calls::OUTPUT_SCHEMA,
        ] {
            push(id, Finding::skip(none_allowed()), calls_started);
        }
    } else {
        push(
            tool_calls::CALL,
            tool_calls::judge_calls(&calls, &revision),
            calls_started,
        );
        push(
            tool_calls::ERROR_IN_RESULT,
            tool_calls::judge_errors(&calls),
            calls_started,
        );
        push(
            tool_calls::OUTPUT_SCHEMA,
            tool_calls::judge_output(&calls, &tools, &revision),
            calls_started,
        );
    }
    // Cancellation: the calls still running, else a request cancelled as soon as sent.
    let started = Instant::now();
    if wants(utilities::CANCELLATION) || !unanswered.is_empty() {
        let fresh = match allowed.first() {
            Some(tool) => {
                let arguments =
                    fixtures::arguments_for(tool.get("inputSchema").unwrap_or(&json!({})), 0);
                Some(request(
                    peer.fresh_id(),
                    "tools/call",
                    Some(json!({"name": tool["name"], "arguments": arguments})),
                ))
            }
            None => [fixtures::TOOLS, fixtures::PROMPTS, fixtures::RESOURCES]
                .iter()
                .find(|k| declares(k.capability))
                .map(|k| request(peer.fresh_id(), k.method, None)),
        };
        let finding = match stalled(peer) {
            Some(skip) => skip,
            None => utilities::cancellation(peer, &unanswered, fresh, settings.patience).await,
        };
        push(utilities::CANCELLATION, finding, started);
    }

    let started = Instant::now();
    if wants(lifecycle::SECOND_INITIALIZE) {
        let finding = match stalled(peer) {
            Some(skip) => skip,
            None => lifecycle::second_initialize(peer, &revision, settings.timeout).await,
        };
        push(lifecycle::SECOND_INITIALIZE, finding, started);
    }

    // What the server sent in the whole session; a ping first as a fence: what it wrote
    // before answering it is in the log.
    let started = Instant::now();
    if peer.stalled().is_none() {
        let _ = peer.request("ping", None).await;
    }
    let log = since(peer, 0);
    let finding = if calls.is_empty() {
        Finding::skip(none_allowed())
    } else {
        utilities::judge_progress(&log, &calls)
    };
    push(utilities::PROGRESS, finding, started);
    if let Some(level_mark) = level_mark {
        push(
            utilities::LEVEL_RESPECTED,
            utilities::judge_levels(log.get(level_mark..).unwrap_or_default()),
            started,
        );
    } else {
        push(
            utilities::LEVEL_RESPECTED,
            Finding::skip("the server does not declare `logging`"),
            started,
        );
    }
    push(
        resources::UPDATED,
        resources::judge_updated(&log, &capabilities, &subscribed),
        started,
    );
    push(
        lifecycle::DECLARED_REQUESTS,
        lifecycle::judge_requests(&log),
        started,
    );
    push(
        lifecycle::LIST_CHANGED,
        lifecycle::judge_list_changed(&log, &capabilities),
        started,
    );
    out
}

/// Why a capability group's checks are skipped, if they are: the server does not declare
/// `capability`, or the session stopped answering.
fn gate(declared: bool, capability: &str, peer: &dyn StalledPeer) -> Option<Finding> {
    if !declared {
        return Some(Finding::skip(format!(
            "the server does not declare `{capability}`"
        )));
    }
    peer.why().map(|why| not_asked(&why))
}

/// Why a session stopped answering, through a trait object.
trait StalledPeer {
    fn why(&self) -> Option<String>;
}

impl<T: Rpc> StalledPeer for T {
    fn why(&self) -> Option<String> {
        self.stalled().map(|why| why.why)
    }
}
