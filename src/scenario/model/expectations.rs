//! The `[expect]` table: what must hold once the steps have run, and which of it judges any
//! client (portable) or only the reference client.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::yes;

/// What must hold once the steps have run.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// Per-step assertions, by step number (1 for the first client step).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepExpect>,
    /// The exact sequence of what the server received: methods, and `response:<id>` for
    /// the client's answers to server requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received: Option<Vec<String>>,
    /// Messages the server must have received (each a subset of one received message).
    /// The string `"${id:METHOD}"` anywhere in one stands for the id of the first request
    /// of that method the server received (`requestId = "${id:tools/call}"`), whatever id
    /// the client chose.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub received_includes: Vec<Value>,
    /// How many messages with each method the server received.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counts: BTreeMap<String, usize>,
    /// Log events that must have been emitted by the client.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<LogExpect>,
    /// Every request the server received carries an id no earlier request carried (a
    /// re-issued or retried request gets a new id).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub distinct_request_ids: bool,
    /// Texts that must appear in no error, log line or transcript (secrets).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub never_contains: Vec<String>,
    /// After the last step: every process the server reported is gone (`true`), or some
    /// is still alive (`false`, a documented limitation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes_gone: Option<bool>,
    /// The script must have been played to its end (the default).
    #[serde(default = "yes")]
    pub script_completed: bool,
    /// How many times the server was launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launches: Option<u32>,
    /// HTTP: requests that must have reached the mock (each matched by one request at least).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http_requests: Vec<HttpRequestExpect>,
    /// HTTP: what every request that reached the mock must be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_every_request: Option<HttpRequestExpect>,
    /// HTTP: requests no request that reached the mock may match (a token sent to the
    /// authorization server's origin).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http_none: Vec<HttpRequestExpect>,
    /// HTTP: how many requests each listener received (`{ primary = 3, second = 0 }`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub http_request_counts: BTreeMap<String, usize>,
    /// HTTP: headers every request that reached the mock carries, each request with a value
    /// of its own (`["authorization"]`: a token asked for every request, never one reused).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http_distinct_headers: Vec<String>,
    /// `[expect.reference]`: the reference client's own choices where the rule leaves room
    /// (refusing a redirect that following would also survive, its wording, its exact
    /// requests), in the same keys (`script_completed` excepted: the script is judged above).
    /// Judged for the reference client only, on top of the rest; what the rule demands of
    /// every client belongs above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Box<Expectations>>,
    /// `[expect.by_rule."RULE"]`: what one rule of the scenario alone asks, in the same
    /// keys (`script_completed`, `reference` and `by_rule` excepted). The rest of `[expect]`
    /// is what every rule of the scenario asks. A failure here counts against that rule
    /// only, and a client the rule does not bind (another profile's promise) is still judged
    /// on the scenario's other rules, without this table.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_rule: BTreeMap<String, Expectations>,
}

/// A matcher for an HTTP request the mock received.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpRequestExpect {
    /// The listener: `primary`, `second` or `plain`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The path, without its query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Pieces its query string contains, as sent (percent-encoded: `scope=mcp%3Aread`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query: Vec<String>,
    /// Pieces its form-urlencoded body contains, as sent (`grant_type=refresh_token`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub form: Vec<String>,
    /// Headers with these values (names without regard to case; `*` for any value).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Headers it must not carry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent_headers: Vec<String>,
    /// The JSON-RPC method its body carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpc_method: Option<String>,
    /// In `http_requests`: exactly how many requests match (two authorizations: `2` on the
    /// authorization endpoint); at least one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
}

/// Assertions on one step's result.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepExpect {
    /// The step number (1 for the first client step).
    pub step: usize,
    /// The step succeeded (`true`) or failed (`false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// The step failed with this error kind (`transport`, `timeout`, `protocol`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Texts the result or error text contains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains: Vec<String>,
    /// Texts it does not contain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lacks: Vec<String>,
    /// Numbers the text names, each standing alone (`3` is not found in `30`, `1.3` or a
    /// port `:40003`): an exit status or an HTTP status, whatever the words around it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numbers: Vec<i64>,
    /// A duration the text names, in milliseconds: `150ms`, `150 ms`, `0.15s` and
    /// `0.150 seconds` all name 150. A bound is checked as a value, never as one client's
    /// spelling of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// A subset the step's value must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// The step took at most this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_ms: Option<u64>,
    /// The step took at least this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least_ms: Option<u64>,
    /// Numeric fields of the step's value that must be at most the given number
    /// (`{ distinct = 2, last_change_ms = 500 }` for `poll_exited`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub value_at_most: BTreeMap<String, f64>,
}

/// A log event that must have been emitted.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogExpect {
    /// `ERROR`, `WARN`, `INFO`, `DEBUG` or `TRACE`.
    pub level: String,
    /// The target, if it matters (`mcp_refclient::stderr`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// A text the event contains.
    pub contains: String,
    /// Exactly how many such events (`1`: logged once; `0`: never); at least one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
}

/// Whether an expectation judges any client or only the reference client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Portability {
    /// About the world outside the client (what the mock received, counts, launches,
    /// requests per origin, step ok/error, elapsed bounds, processes gone, the raw error
    /// text): it judges any client.
    Portable,
    /// What only the reference client can say (typed error kinds, log levels, exact result
    /// shapes; the snapshot too): it judges the reference client only.
    ReferenceOnly,
}

/// Every expectation field, marked once: `[expect]` keys by name, per-step keys as
/// `steps.KEY`. A test keeps this table and the model in step.
pub const EXPECTATION_FIELDS: &[(&str, Portability)] = &[
    ("steps.ok", Portability::Portable),
    ("steps.error", Portability::ReferenceOnly),
    ("steps.contains", Portability::Portable),
    ("steps.lacks", Portability::Portable),
    ("steps.numbers", Portability::Portable),
    ("steps.duration_ms", Portability::Portable),
    ("steps.value", Portability::ReferenceOnly),
    ("steps.within_ms", Portability::Portable),
    ("steps.at_least_ms", Portability::Portable),
    ("steps.value_at_most", Portability::Portable),
    ("received", Portability::Portable),
    ("received_includes", Portability::Portable),
    ("counts", Portability::Portable),
    ("logs", Portability::ReferenceOnly),
    ("distinct_request_ids", Portability::Portable),
    ("never_contains", Portability::Portable),
    ("processes_gone", Portability::Portable),
    ("script_completed", Portability::Portable),
    ("launches", Portability::Portable),
    ("http_requests", Portability::Portable),
    ("http_every_request", Portability::Portable),
    ("http_none", Portability::Portable),
    ("http_request_counts", Portability::Portable),
    ("http_distinct_headers", Portability::Portable),
    ("reference", Portability::ReferenceOnly),
    ("by_rule", Portability::Portable),
];

impl Expectations {
    /// Whether the runner takes the process facts once the steps are done, and what they
    /// should show: the portable `processes_gone`, else the reference client's.
    pub fn processes_gone_asked(&self) -> Option<bool> {
        self.processes_gone
            .or_else(|| self.reference.as_ref().and_then(|r| r.processes_gone))
            .or_else(|| self.by_rule.values().find_map(|t| t.processes_gone))
    }

    /// Every `never_contains` text of this table, `[expect.reference]` and the rules' own
    /// tables: what no evidence may show.
    pub fn secrets(&self) -> Vec<String> {
        self.tables()
            .flat_map(|t| t.never_contains.iter().cloned())
            .collect()
    }

    /// This table, `[expect.reference]` and every `[expect.by_rule."RULE"]`: whatever any
    /// client may be asked.
    pub fn tables(&self) -> impl Iterator<Item = &Expectations> {
        std::iter::once(self)
            .chain(self.reference.as_deref())
            .chain(self.by_rule.values())
    }

    /// The portable part: every reference-only field left out (per [`EXPECTATION_FIELDS`]).
    /// What a reference-only field implies portably stays: a step expected to fail with
    /// a typed `error` must still fail, one expected to have a `value` must succeed.
    pub fn portable(&self) -> Expectations {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        let reference_only = EXPECTATION_FIELDS
            .iter()
            .filter(|(_, p)| *p == Portability::ReferenceOnly)
            .map(|(f, _)| *f);
        for field in reference_only {
            match field.strip_prefix("steps.") {
                Some(key) => {
                    for step in value
                        .get_mut("steps")
                        .and_then(Value::as_array_mut)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(object) = step.as_object_mut() {
                            object.remove(key);
                        }
                    }
                }
                None => {
                    value.as_object_mut().map(|object| object.remove(field));
                }
            }
        }
        let mut portable: Expectations = serde_json::from_value(value).unwrap_or_default();
        // A rule's own table is portable as a whole: its reference-only keys go as above.
        portable.by_rule = self
            .by_rule
            .iter()
            .map(|(rule, table)| (rule.clone(), table.portable()))
            .collect();
        for (step, original) in portable.steps.iter_mut().zip(&self.steps) {
            if step.ok.is_none() {
                step.ok = match (&original.error, &original.value) {
                    (Some(_), _) => Some(false),
                    (None, Some(_)) => Some(true),
                    (None, None) => None,
                };
            }
        }
        portable
    }
}
