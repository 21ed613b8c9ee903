//! A server process one plan is done with, handed to another plan that would otherwise start
//! one of its own: a Node server's start-up is about a third of a second of CPU, and on two
//! cores the launches are what a run's wall time is made of.
//!
//! By default the 2026-07-28 plan starts a server to ask `server/discover`. A server of the
//! `initialize` era answers it with an error and is then a server that got one request before
//! `initialize` — exactly what `server.lifecycle.before-initialize` starts a server for, so the
//! `initialize` plan takes it over instead of starting another. The hand-over is a promise
//! kept at once or never: the giver says as soon as `server/discover` is answered whether a
//! spare comes, and the taker waits no longer than its bound (a server silent on
//! `server/discover` is not waited for).

use super::stdio::{is_response, Session};
use std::future::Future;
use tokio::sync::oneshot;

/// The giving side, held by the plan that starts the server.
pub struct Giver {
    tx: oneshot::Sender<Option<Session>>,
    /// The request whose answer is forgotten when the session is given (the taker's checks
    /// judge a fresh server's messages: the answer belongs to the giver's plan).
    forget: Option<serde_json::Value>,
}

/// The taking side: the first [`Spare::take`] gets the session, if one is given in time.
pub struct Spare {
    rx: std::sync::Mutex<Option<oneshot::Receiver<Option<Session>>>>,
}

/// A giver and its spare.
pub fn channel() -> (Giver, Spare) {
    let (tx, rx) = oneshot::channel();
    (Giver { tx, forget: None }, Spare { rx: std::sync::Mutex::new(Some(rx)) })
}

impl Giver {
    /// No spare comes: the taker stops waiting now.
    pub fn none(self) {
        let _ = self.tx.send(None);
    }

    /// The request with `id` was answered and the server may be given once its plan is done
    /// with it; that answer is left out of the log the taker's checks read.
    pub fn answered(&mut self, id: serde_json::Value) {
        self.forget = Some(id);
    }

    /// Whether [`Giver::answered`] was said.
    pub fn ready(&self) -> bool {
        self.forget.is_some()
    }

    /// Gives the session (the answered request forgotten in its log); it is killed if no
    /// one takes it any more.
    pub async fn give(self, session: Session) {
        {
            let log = session.log();
            let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
            log.revision = None;
            if let Some(id) = &self.forget {
                log.methods.remove(&id.to_string());
                let before = log.seen.len();
                log.seen.retain(|m| !(is_response(m) && m.get("id") == Some(id)));
                log.lines -= before - log.seen.len();
            }
        }
        if let Err(Some(mut session)) = self.tx.send(Some(session)) {
            session.kill().await;
        }
    }
}

impl Spare {
    /// The spare session, its log relabelled `label`, if one is given before `bound` ends;
    /// only the first call waits.
    pub async fn take(&self, label: &str, bound: impl Future<Output = ()>) -> Option<Session> {
        let rx = self.rx.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        let session = tokio::select! {
            given = rx => given.ok().flatten(),
            () = bound => None,
        }?;
        session.log().lock().unwrap_or_else(|e| e.into_inner()).label = label.to_string();
        Some(session)
    }
}
