//! Opens Streamable HTTP sessions for the checks, keeping every session's log and every
//! session id the server issued.

use super::ctx::HANDSHAKE_CHECK;
use crate::http::{Handshake, HttpSession, Wire};
use crate::log::SharedLog;
use crate::outcome::excerpt;
use std::sync::{Arc, Mutex};

/// Opens sessions and keeps every session's log and issued session id.
pub struct HttpCtx {
    wire: Arc<Wire>,
    logs: Mutex<Vec<SharedLog>>,
    issued: Mutex<Vec<(String, String)>>,
    /// Every later handshake's patience, set from the time the probe's `initialize` took to
    /// be answered ([`crate::patience`]).
    pub patience: Arc<std::sync::OnceLock<std::time::Duration>>,
}

impl HttpCtx {
    /// A context for the server `wire` reaches.
    pub fn new(wire: Wire) -> HttpCtx {
        HttpCtx {
            wire: Arc::new(wire),
            logs: Mutex::new(Vec::new()),
            issued: Mutex::new(Vec::new()),
            patience: Arc::new(std::sync::OnceLock::new()),
        }
    }

    /// A new session (nothing sent yet), logged under `label`.
    pub fn open(&self, label: &str) -> HttpSession {
        let mut session = HttpSession::new(self.wire.clone(), label);
        session.patience = Some(self.patience.clone());
        self.logs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(session.log());
        session
    }

    /// Runs a handshake on `session`, keeping the session id the server issued.
    pub async fn handshake(
        &self,
        session: &mut HttpSession,
        label: &str,
        revision: &str,
    ) -> Handshake {
        let handshake = session.handshake(revision).await;
        if let Some(id) = &session.session_id {
            self.issued
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((label.to_string(), id.clone()));
        }
        handshake
    }

    /// A new, initialized session; a failure is the reason the caller's checks are skipped.
    pub async fn open_initialized(
        &self,
        label: &str,
        revision: &str,
    ) -> Result<(HttpSession, Handshake), String> {
        let mut session = self.open(label);
        let handshake = self.handshake(&mut session, label, revision).await;
        if session.revision.is_none() {
            return Err(format!(
                "the handshake failed (see {}): {}",
                HANDSHAKE_CHECK,
                excerpt(&handshake.init.received())
            ));
        }
        Ok((session, handshake))
    }

    /// Every session's log so far.
    pub fn logs(&self) -> Vec<SharedLog> {
        self.logs.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Every session id the server issued so far, with the label of the session it went to.
    pub fn issued(&self) -> Vec<(String, String)> {
        self.issued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
