//! Patience with a slow start-up: a server started beside others on a busy machine answers
//! `initialize` more slowly than alone (a Python server: 2–3 s alone, 8–15 s beside its own
//! copies at a load of 10–16). A launch's handshake that ran out of `--timeout` waits on,
//! up to a patience set from how long this server's first start-up (the probe's) took, before
//! it counts as unanswered ([`crate::stdio::Session::handshake`]).

use std::time::Duration;

/// A launch's handshake waits this many times the probe's start-up, when that is longer than
/// `--timeout`.
pub const PATIENCE_FACTOR: u32 = 3;

/// A handshake's patience after a probe whose start-up took `probe`: [`PATIENCE_FACTOR`] ×
/// `probe`, never less than `--timeout`, at most twice it (so a run's time bound holds).
pub fn patience_after(probe: Duration, timeout: Duration) -> Duration {
    let scaled = Duration::from_millis(
        u64::try_from((probe * PATIENCE_FACTOR).as_millis()).unwrap_or(u64::MAX),
    );
    scaled.clamp(timeout, longest(timeout))
}

/// The longest patience at `--timeout`: what a first request started beside the probe may
/// wait before the probe's answer sets the patience.
pub fn longest(timeout: Duration) -> Duration {
    timeout * 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stdio::Session;
    use crate::target::Target;
    use std::sync::{Arc, OnceLock};

    /// A server that answers `initialize` 1.5 s after it reads it.
    fn slow_server() -> Target {
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"slow","version":"1"}}}"#;
        Target::Stdio {
            command: "sh".into(),
            args: vec![
                "-c".into(),
                format!("read line; sleep 1.5; echo '{answer}'; cat > /dev/null"),
            ],
            env: Vec::new(),
        }
    }

    #[test]
    fn patience_is_three_start_ups_within_one_and_two_timeouts() {
        let timeout = Duration::from_secs(10);
        assert_eq!(patience_after(Duration::from_secs(2), timeout), timeout);
        assert_eq!(
            patience_after(Duration::from_secs(5), timeout),
            Duration::from_secs(15)
        );
        assert_eq!(patience_after(Duration::from_secs(9), timeout), timeout * 2);
    }

    /// A server of 2026-07-28 that answers `server/discover` 1.5 s after it is asked.
    fn discover_answered_late() -> Target {
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{},"serverInfo":{"name":"slow","version":"1"}}}"#;
        Target::Stdio {
            command: "sh".into(),
            args: vec![
                "-c".into(),
                format!("read line; sleep 1.5; echo '{answer}'; cat > /dev/null"),
            ],
            env: Vec::new(),
        }
    }

    /// The 2026-07-28 session's first request, `server/discover`, waits as patiently as a
    /// later handshake: a server that answers it 1.5 s late is heard within the patience, and
    /// not without it.
    #[tokio::test]
    async fn a_discover_past_the_timeout_is_answered_within_the_patience_and_not_without() {
        let server = discover_answered_late();
        let timeout = Duration::from_millis(500);
        let mut impatient = Session::spawn(&server, "impatient", timeout).unwrap();
        let refused = impatient.request_patient("server/discover", None).await;
        assert_eq!(refused.ran_out().as_deref(), Some("nothing within 500ms"));
        impatient.kill().await;

        let mut patient = Session::spawn(&server, "patient", timeout).unwrap();
        let set = Arc::new(OnceLock::new());
        set.set(Duration::from_secs(10)).unwrap();
        patient.patience = Some(set);
        let answered = patient.request_patient("server/discover", None).await;
        assert!(answered.result().is_some(), "{answered:?}");
        patient.kill().await;
    }

    /// Started beside the probe, `server/discover` waits the longest patience while the
    /// probe has not set it: a first start-up as slow as the probe's own is heard, where
    /// `--timeout` alone gives up.
    #[tokio::test]
    async fn a_discover_waits_the_longest_patience_while_the_probe_has_not_set_it() {
        let server = discover_answered_late();
        let timeout = Duration::from_secs(1);
        let mut alone = Session::spawn(&server, "alone", timeout).unwrap();
        alone.patience = Some(Arc::new(OnceLock::new()));
        let refused = alone.request_patient("server/discover", None).await;
        assert!(refused.ran_out().is_some(), "{refused:?}");
        alone.kill().await;

        let mut beside = Session::spawn(&server, "beside", timeout).unwrap();
        beside.patience = Some(Arc::new(OnceLock::new()));
        beside.patience_pending = Some(longest(timeout));
        let answered = beside.request_patient("server/discover", None).await;
        assert!(answered.result().is_some(), "{answered:?}");
        beside.kill().await;
    }

    /// A Streamable HTTP server on 127.0.0.1 that answers `initialize` 1.5 s after it reads
    /// it (and anything else at once with 202): its URL.
    async fn slow_http_server() -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut request = vec![0u8; 8192];
                    let read = socket.read(&mut request).await.unwrap_or(0);
                    let request = String::from_utf8_lossy(&request[..read]).into_owned();
                    let answer = if request.contains("\"initialize\"") {
                        tokio::time::sleep(Duration::from_millis(1500)).await;
                        let body = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"slow","version":"1"}}}"#;
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        )
                    } else {
                        "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_string()
                    };
                    let _ = socket.write_all(answer.as_bytes()).await;
                });
            }
        });
        format!("http://127.0.0.1:{port}/mcp")
    }

    /// Over HTTP as over stdio: a handshake past `--timeout` is answered within the patience
    /// the probe's first answer set, and runs out of time without it.
    #[tokio::test]
    async fn an_http_handshake_past_the_timeout_is_answered_within_the_patience_and_not_without() {
        use crate::checks::session::http_ctx::HttpCtx;
        use crate::http::Wire;
        let url = slow_http_server().await;
        let timeout = Duration::from_millis(500);
        let impatient = HttpCtx::new(Wire::new(&url, &[], None, timeout).unwrap());
        let mut session = impatient.open("impatient");
        let refused = impatient
            .handshake(&mut session, "impatient", "2025-11-25")
            .await;
        assert_eq!(
            refused.init.ran_out().as_deref(),
            Some("nothing within 500ms"),
            "{:?}",
            refused.init
        );

        let patient = HttpCtx::new(Wire::new(&url, &[], None, timeout).unwrap());
        patient.patience.set(Duration::from_secs(10)).unwrap();
        let mut session = patient.open("patient");
        let answered = patient
            .handshake(&mut session, "patient", "2025-11-25")
            .await;
        assert!(answered.init.result().is_some(), "{:?}", answered.init);
        assert!(session.stalled.is_none(), "{:?}", session.stalled);
    }

    #[tokio::test]
    async fn a_handshake_past_the_timeout_is_answered_within_the_patience_and_not_without() {
        let timeout = Duration::from_millis(500);
        let mut impatient = Session::spawn(&slow_server(), "impatient", timeout).unwrap();
        let refused = impatient.handshake("2025-11-25").await;
        assert_eq!(
            refused.reply.as_ref().unwrap_err(),
            &crate::exchange::Unanswered::ran_out("nothing within 500ms"),
            "{refused:?}"
        );
        impatient.kill().await;

        let mut patient = Session::spawn(&slow_server(), "patient", timeout).unwrap();
        let set = Arc::new(OnceLock::new());
        set.set(Duration::from_secs(10)).unwrap();
        patient.patience = Some(set);
        let answered = patient.handshake("2025-11-25").await;
        assert!(answered.result().is_some(), "{answered:?}");
        assert!(patient.stalled.is_none(), "{:?}", patient.stalled);
        patient.kill().await;
    }
}
