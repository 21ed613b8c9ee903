//! What one run of a scenario produced.

use super::logs::LogEvent;
use mcp_mock_servers::wire_log::Record;
use mcp_refclient::Profile;
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// The result of one client step.
#[derive(Clone, Debug, Serialize)]
pub struct StepRecord {
    /// 1-based step number.
    pub number: usize,
    /// A short label (`call_tool echo`).
    pub label: String,
    /// The value on success, or the error.
    pub result: Result<Value, ErrorRecord>,
    /// How long the step took.
    #[serde(skip)]
    pub elapsed: Duration,
}

/// An error a step returned.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ErrorRecord {
    /// The neutral kind (`transport`, `timeout`, …).
    pub kind: String,
    /// The whole text, causes included.
    pub text: String,
}

/// A process the server reported, and whether it outlived the client's steps.
#[derive(Clone, Debug, Serialize)]
pub struct ProcessFact {
    /// The pid.
    pub pid: u32,
    /// `server` (a launched process) or `descendant`.
    pub role: &'static str,
    /// Still alive once the steps were done.
    pub alive_after_steps: bool,
}

/// Everything a run produced.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The profile the client ran under.
    #[serde(serialize_with = "profile_name")]
    pub profile: Profile,
    /// The client under test, as it described itself.
    pub client: crate::cut::Described,
    /// How it is judged: on every expectation (the reference client) or the portable ones.
    pub judged: super::Judged,
    /// One record per client step.
    pub steps: Vec<StepRecord>,
    /// The server's wire log.
    pub wire: Vec<Record>,
    /// The client's log events (bounded).
    pub logs: Vec<LogEvent>,
    /// How many log events were dropped past the bound.
    pub logs_dropped: usize,
    /// The processes the server reported.
    pub processes: Vec<ProcessFact>,
    /// Something that went wrong in the harness itself, not in the client.
    pub harness_fault: Option<String>,
    /// The client broke the runner's protocol (a driver that hung past the step guard,
    /// exited early or wrote garbage): its failure in this scenario, whatever it expects.
    pub client_fault: Option<String>,
    /// Texts that vary run to run, replaced in anything shown and in what steps are checked
    /// against, most specific first (temp folder, mock path, ports).
    #[serde(skip)]
    pub redactions: Vec<(String, String)>,
    /// Every secret the scenario gave the client: none may appear in anything the client
    /// produced, and each is hidden from anything shown.
    #[serde(skip)]
    pub secrets: Vec<GivenSecret>,
    /// The URL an HTTP client was given: its key-like parts are redacted from anything shown.
    #[serde(skip)]
    pub http_url: Option<String>,
    /// What the runner did to the client's process after the scenario, when the report
    /// should say it (a reusable driver replaced by a fresh one, and why).
    #[serde(skip)]
    pub note: Option<String>,
    /// How long the scenario waited for its place beside the others (a driver process
    /// started or taken from its pool included): not part of its own run time.
    #[serde(skip)]
    pub waited: Duration,
}

/// A secret the scenario gave the client, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GivenSecret {
    /// Where it came from (`the value of header x-api-key`), never the value itself.
    pub source: String,
    /// The value.
    pub value: String,
}

impl Outcome {
    /// A text for showing: the URL's key-like parts and every given secret hidden, and what
    /// varies run to run named.
    pub fn redact(&self, text: &str) -> String {
        let mut text = text.to_string();
        if let Some(url) = self
            .http_url
            .as_deref()
            .and_then(|u| url::Url::parse(u).ok())
        {
            text = mcp_refclient::redact::redact(&text, &url);
        }
        text = self.normalize(&text);
        for secret in &self.secrets {
            text = text.replace(secret.value.as_str(), mcp_refclient::redact::REDACTED);
        }
        text
    }

    /// A text for checking: only what varies run to run (temp folder, mock path, ports) is
    /// named; secrets stay, so a client that leaks one is seen to.
    pub fn normalize(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (from, to) in &self.redactions {
            if !from.is_empty() {
                text = text.replace(from.as_str(), to);
            }
        }
        text
    }

    /// How many times the server was launched.
    pub fn launches(&self) -> u32 {
        self.wire
            .iter()
            .filter_map(|r| match r {
                Record::Started { launch, .. } => Some(*launch),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }
}

fn profile_name<S: serde::Serializer>(profile: &Profile, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(profile.name())
}
