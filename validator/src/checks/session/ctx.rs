//! Opens stdio sessions for the checks: a fresh server each (at most one start-up a core at
//! once), or a server handed over (a spare another plan is done with, a negotiation session a
//! check takes over); every session's log is kept for the checks over all of them.

use crate::declared::declared_at;
use crate::log::SharedLog;
use crate::outcome::excerpt;
use crate::spare::Spare;
use crate::stdio::{Exchange, Session};
use crate::target::Target;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The check that judges the handshake (`server.initialize.result`), named where a handshake
/// that failed is the reason other checks are skipped.
pub const HANDSHAKE_CHECK: &str = "server.initialize.result";

/// Which offers of the negotiation check serve which other check (none when the negotiation
/// check does not run): see [`crate::checks::plan::shared`].
#[derive(Clone, Debug, Default)]
pub struct Shared {
    /// The offer whose session first sends a request before `initialize`.
    pub early: Option<&'static str>,
    /// The offer whose session is closed for `exits-on-close` after its handshake.
    pub exit: Option<&'static str>,
    /// Whether the first revision's feature checks run on the probe, after its queries.
    pub features_on_probe: bool,
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
    pub(crate) starts: &'static tokio::sync::Semaphore,
    /// A server another plan is done with, and the label of the session that takes it over
    /// instead of starting one (see [`crate::spare`]).
    pub(crate) spare: Option<(String, Spare)>,
    /// Whether the probe answered, once that is known: a spare is waited for from its answer
    /// (see [`Ctx::take_spare`]), and a session started beside the probe waits for it.
    pub(crate) probe_answered: tokio::sync::watch::Sender<Option<bool>>,
    /// The revision the probe's server answered `initialize` with.
    pub(crate) probe_answer: std::sync::OnceLock<Option<String>>,
    /// The parse-error check waiting for a session a check is done with (see
    /// [`Ctx::done_with`]).
    pub(crate) reuse: Mutex<Option<tokio::sync::oneshot::Sender<Session>>>,
    /// The log of the spare session taken over, which is not fresh and is never reused.
    spare_log: Mutex<Option<SharedLog>>,
    /// Which negotiation sessions serve other checks too (see
    /// [`crate::checks::plan::shared`]).
    pub(crate) shared: Shared,
    /// The exits-on-close check waiting for the negotiation session it is closed in.
    pub(crate) exit_session: Mutex<Option<tokio::sync::oneshot::Sender<Session>>>,
    /// Whether every negotiation session has its answer (or the check ended without).
    pub(crate) negotiated: tokio::sync::watch::Sender<bool>,
    /// Whether the launches left start at once after the probe's answer: when no exit is
    /// timed beside start-ups (the probe is not closed for exits-on-close; a negotiation
    /// session is, once every offer has answered). With the probe closed beside more
    /// start-ups, a Python server once took over 5 s to exit under load.
    pub(crate) uncapped: bool,
    /// The session that starts at once, beside the probe, without a start-up slot: the
    /// negotiation session that serves the parse-error check and the declared side of server
    /// requests, which waits for a request a server may send a while after `initialized`
    /// (server-everything: 350 ms) — started last, that wait would be the end of the run.
    pub(crate) eager: Option<String>,
    /// How long a launch's handshake may wait in all: set once the probe answered, from how
    /// long its start-up took (see [`crate::patience`]).
    pub(crate) patience: Arc<std::sync::OnceLock<Duration>>,
}

impl Ctx {
    /// Starts a fresh server process for `label`.
    pub fn open(&self, label: &str) -> Result<Session, String> {
        let mut session = Session::spawn(&self.target, label, self.timeout)?;
        // Unset for the probe's own handshake: set from it.
        session.patience = Some(self.patience.clone());
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
            shared: Shared::default(),
            exit_session: Mutex::new(None),
            negotiated: tokio::sync::watch::channel(false).0,
            uncapped: false,
            eager: None,
            patience: Arc::new(std::sync::OnceLock::new()),
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

    /// Hands a negotiation session to the exits-on-close check (see [`Shared`]); killed if
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
    pub(crate) async fn start_slot(&self) -> Option<tokio::sync::SemaphorePermit<'static>> {
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
    pub(crate) async fn take_spare(&self, key: &str, label: &str) -> Option<Session> {
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
        let mut session = spare.take(label, bound).await?;
        session.patience = Some(self.patience.clone());
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
    /// [`declared_at`] `revision` (their requests get canned answers).
    pub async fn open_declaring(
        &self,
        label: &str,
        revision: &str,
    ) -> Result<(Session, Exchange), String> {
        self.open_with(label, revision, declared_at(revision)).await
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
                HANDSHAKE_CHECK,
                excerpt(&exchange.received())
            ));
        }
        Ok((session, exchange))
    }

    /// Every session's log so far.
    pub fn logs(&self) -> Vec<SharedLog> {
        self.logs.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
