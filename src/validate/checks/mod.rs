//! The server checks of RULES.md ("Server checks"), one file per area, and the plan that
//! runs them against one target: a first session proves the server answers `initialize`
//! (else the target is unreachable), then the checks run concurrently, each group in its
//! own server process (stdio) or its own session (HTTP, see [`http::run_http`]) where one
//! check could disturb another. The checks that only ask questions are written once, over
//! [`Rpc`], for both transports.

pub mod capabilities;
pub mod content;
pub mod features;
pub mod features_2026;
pub mod http;
pub mod initialize;
pub mod jsonrpc;
pub mod lifecycle;
pub mod peer;
pub mod ping;
pub mod prompts;
pub mod requests;
pub mod resources;
pub mod schema;
pub mod shared;
pub mod stateless;
pub mod stdio;
pub mod tool_calls;
pub mod tools;
pub mod utilities;

use super::log::SharedLog;
use super::outcome::Finding;
use super::stdio::{Exchange, Session};
use super::target::Target;
use super::timeline;
use crate::rules::Level;
use serde_json::Value;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A session that sends JSON-RPC requests and waits (bounded) for their answers: a stdio
/// [`Session`] or an HTTP [`crate::validate::http::HttpSession`].
pub trait Rpc: Send {
    /// Sends a request with the session's next id and waits for the response.
    fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send;

    /// Why the session stopped answering (a wait ran out, the server left), if it did: the
    /// checks after it in the session are skipped instead of each waiting out `--timeout`.
    fn stalled(&self) -> Option<String>;
}

impl Rpc for Session {
    fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send {
        Session::request(self, method, params)
    }

    fn stalled(&self) -> Option<String> {
        self.stalled.clone()
    }
}

impl Rpc for super::http::HttpSession {
    fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send {
        super::http::HttpSession::request(self, method, params)
    }

    fn stalled(&self) -> Option<String> {
        self.stalled.clone()
    }
}

/// The finding of a query not asked because the shared session stopped answering.
pub(crate) fn not_asked(why: &str) -> Finding {
    Finding::skip(format!(
        "not asked: the session stopped answering an earlier check ({})",
        super::outcome::excerpt(why)
    ))
}

/// The checks before the feature checks, in report order.
const BEFORE_FEATURES: &[&str] = &[
    initialize::RESULT,
    initialize::NEGOTIATES,
    schema::VALID,
    ping::PING,
    tools::LIST,
    tools::UNKNOWN,
    jsonrpc::UNKNOWN_METHOD,
    jsonrpc::PARSE_ERROR,
    jsonrpc::NOTIFICATION_SILENT,
    capabilities::HONEST,
    stdio::CLEAN_STDOUT,
    stdio::EXITS_ON_CLOSE,
    http::NOTIFICATION_202,
    http::ACCEPT_REQUIRED,
    http::SESSION_ID_ASCII,
    http::UNKNOWN_SESSION_404,
    http::MISSING_SESSION_400,
    http::DELETE,
    http::PROTOCOL_VERSION_HEADER,
    http::ORIGIN,
    http::GET_STREAM,
    http::BATCH,
    stateless::DISCOVER,
    stateless::META_REQUIRED,
    stateless::UNSUPPORTED_VERSION,
    stateless::RESULT_TYPE,
    stateless::CACHEABLE,
    stateless::SERVER_INFO,
    stateless::UNREQUESTED_LOG,
    stateless::LISTEN_ACK,
    stateless::RESOURCE_NOT_FOUND,
    stateless::HEADER_MISMATCH,
    lifecycle::BEFORE_INITIALIZE,
];

/// Every check the validator knows, in report order: those above, the feature checks of a
/// shared session ([`features::SESSION_CHECKS`]), then those of the session that declares
/// client capabilities ([`requests::CHECKS`]).
pub const ALL: &[&str] = &concat::<
    { BEFORE_FEATURES.len() + features::SESSION_CHECKS.len() + requests::CHECKS.len() },
>(&[BEFORE_FEATURES, features::SESSION_CHECKS, requests::CHECKS]);

/// The lists one after the other, in a constant.
const fn concat<const N: usize>(lists: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut list, mut at, mut i) = (0, 0, 0);
    while list < lists.len() {
        if at < lists[list].len() {
            out[i] = lists[list][at];
            i += 1;
            at += 1;
        } else {
            list += 1;
            at = 0;
        }
    }
    out
}

/// The checks run in one shared session, one after the other: they only ask questions, so
/// none disturbs the next.
const QUERIES: &[&str] = &[
    ping::PING,
    tools::LIST,
    tools::UNKNOWN,
    jsonrpc::UNKNOWN_METHOD,
    jsonrpc::NOTIFICATION_SILENT,
    capabilities::HONEST,
];

/// What one check found, with the revision offered and its wall time.
#[derive(Clone, Debug)]
pub struct Found {
    /// The check id.
    pub id: &'static str,
    /// The revision offered (`all` for the negotiation check, which tries each).
    pub revision: String,
    /// The finding.
    pub finding: Finding,
    /// Wall time in milliseconds.
    pub millis: u128,
    /// The level to judge at when it depends on the negotiated revision (`server.http.origin`
    /// is must from 2025-11-25); the rule's own level when `None`.
    pub level: Option<Level>,
}

impl Found {
    /// A finding judged at the rule's own level.
    pub fn new(
        id: &'static str,
        revision: impl Into<String>,
        finding: Finding,
        millis: u128,
    ) -> Found {
        Found {
            id,
            revision: revision.into(),
            finding,
            millis,
            level: None,
        }
    }
}

/// The target could not be reached: a one-line reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unreachable(pub String);

/// A run's settings for one target.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The checks selected (ids).
    pub selected: Vec<&'static str>,
    /// The revisions offered; the checks run once per revision.
    pub revisions: Vec<String>,
    /// The bound on every single wait.
    pub timeout: Duration,
    /// HTTPS: PEM certificates trusted besides the system roots (`--ca-cert`).
    pub ca_cert: Option<Vec<u8>>,
    /// Tools the user allows to be called besides those annotated `readOnlyHint: true`
    /// (`--call-tool`, `callTools` in a config entry).
    pub call_tools: Vec<String>,
    /// Told once the probe's handshake is over (answered or not), so a run beside this one
    /// can start its own server without slowing the probe's start-up.
    pub probed: Option<Arc<tokio::sync::Notify>>,
}

impl Plan {
    /// Whether the check `id` was selected.
    pub fn wants(&self, id: &str) -> bool {
        self.selected.contains(&id)
    }
}

/// Opens sessions and keeps every session's log for the aggregate checks.
pub struct Ctx {
    /// The server.
    pub target: Target,
    /// The per-wait bound.
    pub timeout: Duration,
    logs: Mutex<Vec<SharedLog>>,
    /// Server start-ups in progress at once, at most one a core: a start-up is CPU work, so
    /// more at once end no sooner and each handshake's wait would be shared among them.
    /// Shared by every context of the process (the 2026-07-28 run's beside the others').
    starts: &'static tokio::sync::Semaphore,
    /// A server another plan is done with, and the label of the session that takes it over
    /// instead of starting one (see [`crate::validate::spare`]).
    spare: Option<(String, super::spare::Spare)>,
    /// Whether the probe answered, once that is known: a spare is waited for from its answer
    /// (see [`Ctx::take_spare`]), and a session started beside the probe waits for it.
    probe_answered: tokio::sync::watch::Sender<Option<bool>>,
    /// The revision the probe's server answered `initialize` with.
    probe_answer: std::sync::OnceLock<Option<String>>,
    /// The parse-error check waiting for a session a check is done with (see
    /// [`Ctx::done_with`]).
    reuse: Mutex<Option<tokio::sync::oneshot::Sender<Session>>>,
    /// The log of the spare session taken over, which is not fresh and is never reused.
    spare_log: Mutex<Option<SharedLog>>,
    /// Which negotiation sessions serve other checks too (see [`shared`]).
    shared: shared::Shared,
    /// The exits-on-close check waiting for the negotiation session it is closed in.
    exit_session: Mutex<Option<tokio::sync::oneshot::Sender<Session>>>,
    /// Whether every negotiation session has its answer (or the check ended without).
    negotiated: tokio::sync::watch::Sender<bool>,
    /// Whether the launches left start at once after the probe's answer: when no exit is
    /// timed beside start-ups (the probe is not closed for exits-on-close; a negotiation
    /// session is, once every offer has answered). With the probe closed beside more
    /// start-ups, a Python server once took over 5 s to exit under load.
    uncapped: bool,
    /// The session that starts at once, beside the probe, without a start-up slot: the
    /// negotiation session that serves the parse-error check and the declared side of server
    /// requests, which waits for a request a server may send a while after `initialized`
    /// (server-everything: 350 ms) — started last, that wait would be the end of the run.
    eager: Option<String>,
}

impl Ctx {
    /// Starts a fresh server process for `label`.
    pub fn open(&self, label: &str) -> Result<Session, String> {
        let session = Session::spawn(&self.target, label, self.timeout)?;
        self.logs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(session.log());
        Ok(session)
    }

    /// A context for `target`.
    pub fn new(target: Target, timeout: Duration) -> Ctx {
        static STARTS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
        let starts = STARTS.get_or_init(|| {
            tokio::sync::Semaphore::new(
                std::thread::available_parallelism()
                    .map_or(2, usize::from)
                    .max(2),
            )
        });
        Ctx {
            target,
            timeout,
            logs: Mutex::new(Vec::new()),
            starts,
            spare: None,
            probe_answered: tokio::sync::watch::channel(None).0,
            probe_answer: std::sync::OnceLock::new(),
            reuse: Mutex::new(None),
            spare_log: Mutex::new(None),
            shared: shared::Shared::default(),
            exit_session: Mutex::new(None),
            negotiated: tokio::sync::watch::channel(false).0,
            uncapped: false,
            eager: None,
        }
    }

    /// Ends a session that only did its handshake (a negotiation session), or hands it to the
    /// parse-error check: a fresh server answered at the probe's revision is what that check
    /// starts one for, and it is ended after the check as this one would have been.
    pub async fn done_with(&self, mut session: Session, handshake: &Exchange) {
        let negotiated = handshake
            .result()
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str);
        // A session started beside the probe may be answered first: the probe's answer is
        // awaited (it is bounded by the probe's own wait).
        let _ = self
            .probe_answered
            .subscribe()
            .wait_for(Option::is_some)
            .await;
        let at_probes = negotiated.is_some()
            && self.probe_answer.get().and_then(Option::as_deref) == negotiated;
        let spare_log = self
            .spare_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let spare = spare_log.is_some_and(|log| Arc::ptr_eq(&log, &session.log()));
        if at_probes && !spare && session.stalled.is_none() {
            let waiting = self.reuse.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(waiting) = waiting {
                match waiting.send(session) {
                    Ok(()) => return,
                    Err(returned) => session = returned,
                }
            }
        }
        session.kill().await;
    }

    /// Hands a negotiation session to the exits-on-close check (see [`shared`]); killed if
    /// that check no longer waits.
    pub async fn give_exit(&self, session: Session) {
        let waiting = self
            .exit_session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let unwanted = match waiting {
            Some(waiting) => waiting.send(session).err(),
            None => Some(session),
        };
        if let Some(mut session) = unwanted {
            session.kill().await;
        }
    }

    /// A start-up slot for a launch beside the probe; none is needed once the probe has
    /// answered, unless the probe is closed for exits-on-close (see [`Ctx::uncapped`]): on
    /// two cores three start-ups at once end after one and a half start-ups, two and then
    /// one after two.
    async fn start_slot(&self) -> Option<tokio::sync::SemaphorePermit<'static>> {
        if !self.uncapped {
            return self.starts.acquire().await.ok();
        }
        let mut answered = self.probe_answered.subscribe();
        tokio::select! {
            permit = self.starts.acquire() => permit.ok(),
            _ = answered.wait_for(|a| *a == Some(true)) => None,
        }
    }

    /// The spare server, its log labelled `label`, if the session `key` is the one to take
    /// it over and it is handed over in time; registered like a session this context opened.
    async fn take_spare(&self, key: &str, label: &str) -> Option<Session> {
        let (_, spare) = self.spare.as_ref().filter(|(taker, _)| taker == key)?;
        let mut answered = self.probe_answered.subscribe();
        // The giver decides when `server/discover` is answered, or at the end of its own
        // `--timeout`: waiting for it costs no more than a start-up of our own would (it
        // started with the probe), whatever the machine's load — one start-up fewer is then
        // a fact, not a race. Only a server silent on `server/discover` makes the taker wait
        // its `--timeout`.
        let timeout = self.timeout;
        let bound = async move {
            if answered
                .wait_for(Option::is_some)
                .await
                .is_ok_and(|a| *a == Some(true))
            {
                tokio::time::sleep(timeout).await;
            }
        };
        let session = spare.take(label, bound).await?;
        self.logs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(session.log());
        *self.spare_log.lock().unwrap_or_else(|e| e.into_inner()) = Some(session.log());
        Some(session)
    }

    /// Starts a fresh server and runs the handshake offering `revision`, once a start-up
    /// slot is free (a spare server, see [`Ctx::take_spare`], needs none); the exchange
    /// whatever it holds.
    pub async fn open_handshaken(
        &self,
        label: &str,
        revision: &str,
    ) -> Result<(Session, Exchange), String> {
        self.open_with(label, revision, serde_json::json!({})).await
    }

    /// [`Ctx::open_handshaken`], the handshake declaring the client capabilities of
    /// [`requests::declared_at`] `revision` (their requests get canned answers).
    pub async fn open_declaring(
        &self,
        label: &str,
        revision: &str,
    ) -> Result<(Session, Exchange), String> {
        self.open_with(label, revision, requests::declared_at(revision))
            .await
    }

    /// [`Ctx::open_handshaken`], the handshake declaring `declared`.
    async fn open_with(
        &self,
        label: &str,
        revision: &str,
        declared: Value,
    ) -> Result<(Session, Exchange), String> {
        let mut session = match self.take_spare(label, label).await {
            Some(session) => session,
            None => {
                let _slot = match self.eager.as_deref() == Some(label) {
                    true => None,
                    false => self.start_slot().await,
                };
                let mut session = self.open(label)?;
                session.declared = declared;
                let exchange = session.handshake(revision).await;
                return Ok((session, exchange));
            }
        };
        session.declared = declared;
        let exchange = session.handshake(revision).await;
        Ok((session, exchange))
    }

    /// Starts a fresh server and runs the handshake; a failure is the reason the caller's
    /// checks are skipped.
    pub async fn open_initialized(
        &self,
        label: &str,
        revision: &str,
    ) -> Result<(Session, Exchange), String> {
        let (mut session, exchange) = self.open_handshaken(label, revision).await?;
        if exchange
            .result()
            .and_then(|r| r.get("protocolVersion"))
            .is_none()
        {
            session.kill().await;
            return Err(format!(
                "the handshake failed (see {}): {}",
                initialize::RESULT,
                super::outcome::excerpt(&exchange.received())
            ));
        }
        Ok((session, exchange))
    }

    /// Every session's log so far.
    pub fn logs(&self) -> Vec<SharedLog> {
        self.logs.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Runs the selected checks against a stdio target. The launches that need a fresh server
/// (the negotiation's, the parse-error check's, other revisions' queries, the feature
/// session) start together with the probe, so the server's start-up is paid once in wall
/// time; the first revision's queries reuse the probe session, which is then closed for
/// exits-on-close. Fewer servers start than checks need fresh ones: `spare`, a server the
/// 2026-07-28 plan is done with, is taken over by the feature session (it got a request
/// before `initialize`: what that session starts with), else by one negotiation session;
/// and the parse-error check takes over a negotiation session that answered at the probe's
/// revision (the offer of an unknown revision usually does), else starts its own. If the
/// probe gets no answer while the others start beside it, they are stopped and the probe is
/// tried once more alone (a slow server starved by its own copies is not unreachable); only
/// then is the target unreachable.
pub async fn run_stdio(
    target: &Target,
    plan: &Plan,
    spare: Option<super::spare::Spare>,
) -> Result<Vec<Found>, Unreachable> {
    let mut ctx = Ctx::new(target.clone(), plan.timeout);
    let mut found = Vec::new();
    let first = plan
        .revisions
        .first()
        .cloned()
        .unwrap_or_else(|| super::LATEST.to_string());
    let queries: Vec<&'static str> = QUERIES
        .iter()
        .copied()
        .filter(|id| plan.wants(id))
        .collect();
    ctx.shared = shared::Shared::of(plan, &first);
    ctx.spare = spare_taker(plan, &first, &ctx.shared).zip(spare);
    ctx.uncapped = !plan.wants(stdio::EXITS_ON_CLOSE) || ctx.shared.exit.is_some();
    let served_by_unknown =
        plan.wants(jsonrpc::PARSE_ERROR) || requests::CHECKS.iter().any(|id| plan.wants(id));
    if plan.wants(initialize::NEGOTIATES)
        && served_by_unknown
        && ctx.shared.early != Some(initialize::UNKNOWN_REVISION)
    {
        ctx.eager = Some(initialize::session_label(initialize::UNKNOWN_REVISION));
    }
    let ctx = Arc::new(ctx);

    let mut tasks = tokio::task::JoinSet::new();
    let started = Instant::now();
    // The probe takes the first start-up slot; the other launches queue behind it.
    let probe = open_probe(&ctx, &first);
    let mut probe_tx = launch_fresh(&mut tasks, &ctx, plan, &first, &queries);
    let (mut probe, init) = match probe.await {
        Ok(opened) => opened,
        Err(_) if !tasks.is_empty() => {
            tasks.shutdown().await;
            let opened = open_probe(&ctx, &first).await.map_err(Unreachable)?;
            probe_tx = launch_fresh(&mut tasks, &ctx, plan, &first, &queries);
            opened
        }
        Err(why) => {
            ctx.probe_answered.send_replace(Some(false));
            return Err(Unreachable(why));
        }
    };
    let probe_millis = started.elapsed().as_millis();
    let _ = ctx.probe_answer.set(
        init.result()
            .and_then(|r| r.get("protocolVersion"))
            .and_then(Value::as_str)
            .map(str::to_string),
    );
    ctx.probe_answered.send_replace(Some(true));
    if let Some(probed) = &plan.probed {
        probed.notify_one();
    }
    let _ = probe_tx.send(init.clone());
    if plan.wants(schema::VALID) {
        // Off the end of the run: compiled while the other servers start.
        tokio::task::spawn_blocking(|| {
            timeline::event("check", "schema warm");
            crate::validate::schema::warm(&crate::validate::schema::REVISIONS);
            timeline::event("done", "schema warm");
        });
    }

    // The exit is judged on the probe unless a negotiation session serves it (and the probe
    // the feature checks: see [`shared`]).
    let wants_exit = plan.wants(stdio::EXITS_ON_CLOSE) && ctx.shared.exit.is_none();
    let probe_features = if ctx.shared.features_on_probe {
        features::selected(plan)
    } else {
        Vec::new()
    };
    let settings = features::Settings::of(plan);
    let init_result = init.result().cloned().unwrap_or_default();
    let capabilities = init
        .result()
        .and_then(|r| r.get("capabilities"))
        .cloned()
        .unwrap_or_default();
    let first_queries = queries.clone();
    let probe_revision = first.clone();
    let timeout = plan.timeout;
    let prepare = plan.wants(schema::VALID).then(|| ctx.clone());
    tasks.spawn(async move {
        // The schema check's validators for what the probe was sent, compiled while the
        // other servers start rather than at the end of the run: after its queries, and
        // again after the feature checks (for their answers; what is compiled is cached).
        let prepare_now = |ctx: &Option<Arc<Ctx>>| {
            let Some(ctx) = ctx.clone() else { return };
            tokio::task::spawn_blocking(move || {
                timeline::event("check", "schema prepare");
                schema::prepare(&ctx.logs());
                timeline::event("done", "schema prepare");
            });
        };
        let mut out = queries_on(&mut probe, &probe_revision, &capabilities, &first_queries).await;
        prepare_now(&prepare);
        if !probe_features.is_empty() {
            out.extend(
                features::run(
                    &mut probe,
                    &probe_revision,
                    &init_result,
                    &probe_features,
                    &settings,
                )
                .await,
            );
            prepare_now(&prepare);
        }
        if !wants_exit {
            probe.kill().await;
            return out;
        }
        let (id, finding, millis) =
            shared::close_for_exit(probe, std::future::ready(()), timeout).await;
        out.push((id, String::new(), finding, millis));
        out
    });
    for (index, revision) in plan.revisions.iter().enumerate() {
        if plan.wants(initialize::RESULT) {
            let finding = if index == 0 {
                initialize::judge_result(&init)
            } else {
                match ctx.open(&format!("initialize {revision}")) {
                    Ok(mut session) => {
                        let exchange = session.handshake(revision).await;
                        session.kill().await;
                        initialize::judge_result(&exchange)
                    }
                    Err(why) => Finding::HarnessFault { reason: why },
                }
            };
            found.push(Found::new(
                initialize::RESULT,
                revision.clone(),
                finding,
                probe_millis,
            ));
        }
    }
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(results) => {
                found.extend(results.into_iter().map(|(id, revision, finding, millis)| {
                    Found::new(
                        id,
                        if revision.is_empty() {
                            first.clone()
                        } else {
                            revision
                        },
                        finding,
                        millis,
                    )
                }))
            }
            Err(e) => found.push(Found::new(
                "harness",
                first.clone(),
                Finding::HarnessFault {
                    reason: format!("a check task failed: {e}"),
                },
                0,
            )),
        }
    }
    found.retain(|f| f.id == "harness" || plan.wants(f.id));
    let logs = ctx.logs();
    if plan.wants(schema::VALID) {
        let started = Instant::now();
        timeline::event("check", schema::VALID);
        let finding = schema::judge(&logs);
        timeline::event("done", schema::VALID);
        found.push(Found::new(
            schema::VALID,
            first.clone(),
            finding,
            started.elapsed().as_millis(),
        ));
    }
    if plan.wants(stdio::CLEAN_STDOUT) {
        found.push(Found::new(
            stdio::CLEAN_STDOUT,
            first.clone(),
            stdio::judge_stdout(&logs),
            0,
        ));
    }
    for id in plan
        .selected
        .iter()
        .filter(|id| id.starts_with("server.http."))
    {
        found.push(Found::new(
            id,
            first.clone(),
            Finding::skip("an HTTP check; the target is a stdio command"),
            0,
        ));
    }
    sort(&mut found);
    Ok(found)
}

/// The probe: proves the server answers at all. The error is the reason it is unreachable.
/// It takes its start-up slot when made, so launches made after it queue behind it.
fn open_probe<'a>(
    ctx: &'a Ctx,
    revision: &'a str,
) -> impl Future<Output = Result<(Session, Exchange), String>> + 'a {
    let slot = ctx.starts.try_acquire().ok();
    async move {
        let slot = match slot {
            Some(slot) => slot,
            None => ctx.starts.acquire().await.map_err(|e| e.to_string())?,
        };
        let mut probe = ctx.open("probe")?;
        let init = probe.handshake(revision).await;
        drop(slot);
        if let Err(why) = &init.reply {
            probe.kill().await;
            return Err(format!("no answer to `initialize`: {why}"));
        }
        Ok((probe, init))
    }
}

/// Starts the checks that launch a server of their own; the negotiation check waits on the
/// returned sender for the probe's answer.
fn launch_fresh(
    tasks: &mut tokio::task::JoinSet<Vec<(&'static str, String, Finding, u128)>>,
    ctx: &Arc<Ctx>,
    plan: &Plan,
    first: &str,
    queries: &[&'static str],
) -> tokio::sync::oneshot::Sender<Exchange> {
    let (probe_tx, probe_rx) = tokio::sync::oneshot::channel::<Exchange>();
    // The first revision's parse-error check takes over a negotiation session that ended up
    // at the probe's revision, if one does (see [`Ctx::done_with`]).
    let mut reuse = None;
    if plan.wants(initialize::NEGOTIATES) {
        if plan.wants(jsonrpc::PARSE_ERROR) {
            let (tx, rx) = tokio::sync::oneshot::channel();
            *ctx.reuse.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
            reuse = Some(rx);
        }
        let (ctx, first) = (ctx.clone(), first.to_string());
        tasks.spawn(async move {
            timeline::event("check", initialize::NEGOTIATES);
            let (finding, served, own) =
                initialize::negotiates(&ctx, &first, async { probe_rx.await.ok() }).await;
            timeline::event("done", initialize::NEGOTIATES);
            // No session left to hand over: the parse-error check starts its own, the exit
            // check (if its session never came) says so, and it closes its session now.
            ctx.reuse.lock().unwrap_or_else(|e| e.into_inner()).take();
            ctx.exit_session
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            ctx.negotiated.send_replace(true);
            let mut out = vec![(
                initialize::NEGOTIATES,
                "all".to_string(),
                finding,
                own.as_millis(),
            )];
            if ctx.shared.early.is_some() {
                let (finding, millis) = match served {
                    Some((_, finding, millis)) => (finding, millis),
                    None => {
                        let reason = format!(
                            "its session, one of {}'s, did not run to the end",
                            initialize::NEGOTIATES
                        );
                        (Finding::HarnessFault { reason }, 0)
                    }
                };
                out.push((lifecycle::BEFORE_INITIALIZE, first.clone(), finding, millis));
            }
            out
        });
    }
    if let Some(offer) = ctx.shared.exit {
        let (tx, rx) = tokio::sync::oneshot::channel();
        *ctx.exit_session.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        let (ctx, first) = (ctx.clone(), first.to_string());
        tasks.spawn(async move {
            let Ok(session) = rx.await else {
                let reason = format!("the negotiation session offering {offer} did not start");
                return vec![(
                    stdio::EXITS_ON_CLOSE,
                    first,
                    Finding::HarnessFault { reason },
                    0,
                )];
            };
            // Closed once every negotiation session has answered: its exit is not timed
            // beside start-ups (a Python server closed beside them once took over 5 s).
            let mut negotiated = ctx.negotiated.subscribe();
            let others = async move {
                let _ = negotiated.wait_for(|done| *done).await;
            };
            let (id, finding, millis) = shared::close_for_exit(session, others, ctx.timeout).await;
            vec![(id, first, finding, millis)]
        });
    }
    let feature_ids = features::selected(plan);
    let settings = features::Settings::of(plan);
    // The declared side of server requests runs after the first revision's parse-error check,
    // on its session (whose handshake declared the client capabilities), else alone.
    let declaring: Vec<&'static str> = requests::CHECKS
        .iter()
        .copied()
        .filter(|id| plan.wants(id))
        .collect();
    if !declaring.is_empty() && !plan.wants(jsonrpc::PARSE_ERROR) {
        let (ctx, revision, declaring, patience) = (
            ctx.clone(),
            first.to_string(),
            declaring.clone(),
            settings.patience,
        );
        tasks.spawn(async move {
            requests::run_stdio(&ctx, None, &revision, &declaring, patience, false).await
        });
    }
    for (index, revision) in plan.revisions.iter().enumerate() {
        // The first revision's queries run on the probe; its feature checks in a server of
        // their own (a tool call still running would keep the probe from exiting on close),
        // the before-initialize check's (one launch fewer) — unless the negotiation's sessions
        // serve the early request and the exit, and the probe the feature checks (`shared`).
        let queries = if index == 0 { &[][..] } else { queries };
        let early =
            plan.wants(lifecycle::BEFORE_INITIALIZE) && !(index == 0 && ctx.shared.early.is_some());
        let feature_ids = if index == 0 && ctx.shared.features_on_probe {
            &[][..]
        } else {
            &feature_ids[..]
        };
        if !queries.is_empty() || !feature_ids.is_empty() || early {
            let (ctx, revision, queries) = (ctx.clone(), revision.clone(), queries.to_vec());
            let (feature_ids, settings) = (feature_ids.to_vec(), settings.clone());
            tasks.spawn(async move {
                run_queries(&ctx, &revision, &queries, &feature_ids, &settings, early).await
            });
        }
        if plan.wants(jsonrpc::PARSE_ERROR) {
            let (ctx, revision) = (ctx.clone(), revision.clone());
            let reuse = if index == 0 { reuse.take() } else { None };
            let declaring = if index == 0 {
                declaring.clone()
            } else {
                Vec::new()
            };
            let patience = settings.patience;
            tasks.spawn(async move {
                let started = Instant::now();
                let reused = match reuse {
                    Some(reused) => reused.await.ok(),
                    None => None,
                };
                if !declaring.is_empty() {
                    return requests::run_stdio(
                        &ctx, reused, &revision, &declaring, patience, true,
                    )
                    .await;
                }
                timeline::event("check", jsonrpc::PARSE_ERROR);
                let finding = match reused {
                    Some(mut session) => {
                        let finding = jsonrpc::judge_parse_error(&mut session).await;
                        session.kill().await;
                        finding
                    }
                    None => jsonrpc::parse_error(&ctx, &revision).await,
                };
                timeline::event("done", jsonrpc::PARSE_ERROR);
                vec![(
                    jsonrpc::PARSE_ERROR,
                    revision,
                    finding,
                    started.elapsed().as_millis(),
                )]
            });
        }
    }
    probe_tx
}

/// Which session takes over a spare server (see [`Ctx::take_spare`]): the session that starts
/// with a request before `initialize` anyway (a negotiation session, see [`shared`], else the
/// first revision's feature session); else the first negotiation session besides the
/// probe's; else none.
fn spare_taker(plan: &Plan, first: &str, shared: &shared::Shared) -> Option<String> {
    if let Some(early) = shared.early {
        Some(initialize::session_label(early))
    } else if plan.wants(lifecycle::BEFORE_INITIALIZE) {
        Some(early_key(first))
    } else if plan.wants(initialize::NEGOTIATES) {
        initialize::offered()
            .into_iter()
            .find(|r| *r != first)
            .map(initialize::session_label)
    } else {
        None
    }
}

/// The key of the session that sends a request before `initialize` at `revision`.
fn early_key(revision: &str) -> String {
    format!("{} {revision}", lifecycle::BEFORE_INITIALIZE)
}

/// Puts findings in report order: by check, then revision.
pub fn sort(found: &mut [Found]) {
    found.sort_by_key(|f| {
        (
            ALL.iter().position(|id| *id == f.id).unwrap_or(usize::MAX),
            f.revision.clone(),
        )
    });
}

/// One query check that reads the same over every transport (the notification check does
/// not: it lives beside each transport's session).
pub(crate) async fn query(id: &str, session: &mut impl Rpc, capabilities: &Value) -> Finding {
    match id {
        ping::PING => ping::ping(session).await,
        tools::LIST => tools::list(session, capabilities).await,
        tools::UNKNOWN => tools::unknown(session, capabilities).await,
        jsonrpc::UNKNOWN_METHOD => jsonrpc::unknown_method(session).await,
        capabilities::HONEST => capabilities::honest(session, capabilities).await,
        _ => Finding::HarnessFault {
            reason: format!("{id} is not a query check"),
        },
    }
}

/// The shared session's checks, one after the other, in a server of their own.
async fn run_queries(
    ctx: &Ctx,
    revision: &str,
    queries: &[&'static str],
    feature_ids: &[&'static str],
    settings: &features::Settings,
    early: bool,
) -> Vec<(&'static str, String, Finding, u128)> {
    let mut out = Vec::new();
    let opened = if early {
        // A request before `initialize` first (server.lifecycle.before-initialize).
        let launched = match ctx
            .take_spare(&early_key(revision), lifecycle::BEFORE_INITIALIZE)
            .await
        {
            Some(spare) => Ok(spare),
            None => {
                // The start-up slot is held for the launch only: a server that never answers
                // the early request must not keep the others from starting.
                let slot = ctx.start_slot().await;
                let launched = ctx.open(lifecycle::BEFORE_INITIALIZE);
                drop(slot);
                launched
            }
        };
        match launched {
            Ok(mut session) => {
                // Timed from the server in hand: the wait for a spare is the other plan's
                // probe (bounded by it), not this check's time.
                let started = Instant::now();
                let (finding, init) = lifecycle::early_request(&mut session, revision).await;
                out.push((
                    lifecycle::BEFORE_INITIALIZE,
                    revision.to_string(),
                    finding,
                    started.elapsed().as_millis(),
                ));
                if init
                    .result()
                    .and_then(|r| r.get("protocolVersion"))
                    .is_some()
                {
                    Ok((session, init))
                } else {
                    session.kill().await;
                    Err(format!(
                        "the handshake after an early request failed (see {})",
                        lifecycle::BEFORE_INITIALIZE
                    ))
                }
            }
            Err(why) => {
                out.push((
                    lifecycle::BEFORE_INITIALIZE,
                    revision.to_string(),
                    Finding::HarnessFault {
                        reason: why.clone(),
                    },
                    0,
                ));
                Err(why)
            }
        }
    } else {
        ctx.open_initialized("queries", revision).await
    };
    let (mut session, init) = match opened {
        Ok(opened) => opened,
        Err(reason) => {
            out.extend(
                queries
                    .iter()
                    .chain(feature_ids)
                    .map(|id| (*id, revision.to_string(), Finding::skip(reason.clone()), 0)),
            );
            return out;
        }
    };
    let capabilities = init
        .result()
        .and_then(|r| r.get("capabilities"))
        .cloned()
        .unwrap_or_default();
    out.extend(queries_on(&mut session, revision, &capabilities, queries).await);
    let init_result = init.result().cloned().unwrap_or_default();
    out.extend(features::run(&mut session, revision, &init_result, feature_ids, settings).await);
    session.kill().await;
    out
}

/// The query checks, one after the other, on an initialized session.
async fn queries_on(
    session: &mut Session,
    revision: &str,
    capabilities: &Value,
    queries: &[&'static str],
) -> Vec<(&'static str, String, Finding, u128)> {
    let mut out = Vec::new();
    for id in queries {
        let started = Instant::now();
        timeline::event("check", id);
        let finding = match *id {
            _ if session.stalled.is_some() => {
                not_asked(session.stalled.as_deref().unwrap_or_default())
            }
            jsonrpc::NOTIFICATION_SILENT => jsonrpc::notification_silent(session).await,
            other => query(other, session, capabilities).await,
        };
        timeline::event("done", id);
        out.push((
            *id,
            revision.to_string(),
            finding,
            started.elapsed().as_millis(),
        ));
    }
    out
}
