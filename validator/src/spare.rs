//! A server process one plan is done with, handed to another plan that would otherwise start
//! one of its own: a Node server's start-up is about a third of a second of CPU, and on two
//! cores the launches are what a run's wall time is made of.
//!
//! By default the 2026-07-28 plan starts a server to ask `server/discover`. A server of the
//! `initialize` era answers it with an error and is then a server that got one request before
//! `initialize` — exactly what `server.lifecycle.before-initialize` starts a server for, so the
//! `initialize` plan takes it over instead of starting another. The hand-over is a promise
//! kept at once or never: the giver says as soon as `server/discover` is answered (or its
//! `--timeout` ends) whether a spare comes, and the taker waits no longer than its bound, the
//! same `--timeout` counted from the probe's answer (so the giver always decides first).

use super::stdio::{is_response_to, Session};
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
    (
        Giver { tx, forget: None },
        Spare {
            rx: std::sync::Mutex::new(Some(rx)),
        },
    )
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
                log.seen.retain(|m| !is_response_to(m, id));
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
        session
            .log()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .label = label.to_string();
        Some(session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Target;
    use serde_json::json;
    use std::time::Duration;

    /// A server that writes its pid to `pid_file`, answers its first request with -32601
    /// and then waits for stdin to close.
    fn refusing_server(pid_file: &std::path::Path) -> Session {
        let script = format!(
            r#"echo $$ > '{}'; read line; echo '{{"jsonrpc":"2.0","id":1,"error":{{"code":-32601,"message":"no"}}}}'; cat >/dev/null"#,
            pid_file.display()
        );
        let target = Target::Stdio {
            command: "sh".into(),
            args: vec!["-c".into(), script],
            env: Vec::new(),
        };
        Session::spawn(&target, "giver", Duration::from_secs(5)).expect("sh starts")
    }

    #[tokio::test]
    async fn a_given_session_is_taken_with_the_givers_answer_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let (mut giver, spare) = channel();
        let mut session = refusing_server(&dir.path().join("pid"));
        let exchange = session.request("server/discover", None).await;
        assert_eq!(exchange.error_code(), Some(-32601));
        giver.answered(json!(1));
        assert!(giver.ready());
        giver.give(session).await;
        let mut taken = spare
            .take("taker", std::future::pending())
            .await
            .expect("the session is taken");
        {
            let log = taken.log();
            let log = log.lock().unwrap();
            assert_eq!(
                (
                    log.label.as_str(),
                    log.seen.len(),
                    log.lines,
                    log.methods.len()
                ),
                ("taker", 0, 0, 0)
            );
            assert_eq!(log.revision, None);
        }
        assert!(
            spare.take("again", std::future::pending()).await.is_none(),
            "a spare is taken once"
        );
        taken.kill().await;
    }

    #[tokio::test]
    async fn a_taker_waits_no_longer_than_its_bound_and_a_session_given_late_is_ended() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let (giver, spare) = channel();
        let started = std::time::Instant::now();
        assert!(spare
            .take("taker", tokio::time::sleep(Duration::from_millis(20)))
            .await
            .is_none());
        assert!(started.elapsed() < Duration::from_secs(2));
        let mut session = refusing_server(&pid_file);
        // The pid is written before the request is read: once answered, the file is there.
        assert_eq!(
            session.request("server/discover", None).await.error_code(),
            Some(-32601)
        );
        let pid = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .to_string();
        assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
        giver.give(session).await;
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "the server given to no one is ended and reaped"
        );
    }

    #[tokio::test]
    async fn no_spare_said_ends_the_wait_at_once() {
        let (giver, spare) = channel();
        giver.none();
        assert!(spare.take("taker", std::future::pending()).await.is_none());
    }
}
