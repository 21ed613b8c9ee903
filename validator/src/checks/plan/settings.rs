//! What a plan is given, a run's settings for one target, and what it gives back: what each
//! check found, or why the target could not be reached.

use crate::outcome::Finding;
use crate::rules::Level;
use std::sync::Arc;
use std::time::Duration;

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

impl std::fmt::Debug for AuthTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |token: &Option<String>| token.as_ref().map(|_| "[given]");
        f.debug_struct("AuthTokens")
            .field("other_resource", &shown(&self.other_resource))
            .field("without_scope", &shown(&self.without_scope))
            .finish()
    }
}

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
    /// One target's handshake patience ([`crate::patience`]), set from its probe's first
    /// answer and shared by the `initialize` plan's sessions and the 2026-07-28 session's
    /// `server/discover`; a fresh one per target (`None` until the target's run sets it).
    pub patience: Option<Arc<std::sync::OnceLock<Duration>>>,
    /// Over HTTP, the status the probe's `initialize` was answered with (`0` when none could
    /// be read), set once the probe is over: the authorization checks read it to tell a
    /// server that needs no token from one that refused the request without it.
    pub probe_status: Option<Arc<std::sync::OnceLock<u16>>>,
    /// The tokens the authorization checks send besides the `--header` one.
    pub tokens: AuthTokens,
}

/// The tokens the authorization checks send besides the `--header` one (secrets, never
/// shown: the job registers them with [`crate::redact`]).
#[derive(Clone, Default)]
pub struct AuthTokens {
    /// `--token-for-other-resource`: issued by the same authorization server for another
    /// resource.
    pub other_resource: Option<String>,
    /// `--token-without-scope`: without the scope the server needs.
    pub without_scope: Option<String>,
}

impl Plan {
    /// The target's patience cell (a fresh one when none was set).
    pub fn patience(&self) -> Arc<std::sync::OnceLock<Duration>> {
        self.patience.clone().unwrap_or_default()
    }
}

impl Plan {
    /// Whether the check `id` was selected.
    pub fn wants(&self, id: &str) -> bool {
        self.selected.contains(&id)
    }
}
