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
    scaled.clamp(timeout, timeout * 2)
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
