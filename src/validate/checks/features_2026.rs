//! The feature checks at 2026-07-28: those that still apply run on the stateless session
//! after `server/discover` (each request with the per-request `_meta`, through
//! [`Modern`]); the others are not applicable, each with the reason (what replaced it).

use super::features::{self, Settings};
use super::peer::{Basics, Peer};
use super::stateless::{modern_method, with_meta, Modern};
use super::{lifecycle, requests, resources, utilities, Found, Plan};
use crate::validate::log::SharedLog;
use crate::validate::outcome::Finding;
use crate::validate::schema::STATELESS;
use crate::validate::stdio::Exchange;
use serde_json::{json, Value};
use std::future::Future;
use std::time::Instant;

/// The feature checks that do not apply at 2026-07-28, with the reason.
pub const NOT_APPLICABLE: &[(&str, &str)] = &[
    (lifecycle::SECOND_INITIALIZE, "2026-07-28 has no `initialize`"),
    (lifecycle::SERVER_INFO, "2026-07-28 has no `initialize`; the identity every result carries is server.result.server-info"),
    (resources::UNKNOWN, "at 2026-07-28 an unknown resource is server.resources.not-found"),
    (resources::SUBSCRIBE, "2026-07-28 has no `resources/subscribe`: updates come on a `subscriptions/listen` stream (server.subscriptions.acknowledged)"),
    (resources::UPDATED, "2026-07-28 has no `resources/subscribe`: updates come on a `subscriptions/listen` stream (server.subscriptions.acknowledged)"),
    (utilities::SET_LEVEL, "2026-07-28 has no `logging/setLevel`: the level is asked per request (server.logging.unrequested)"),
    (utilities::LEVEL_RESPECTED, "2026-07-28 has no `logging/setLevel`: the level is asked per request (server.logging.unrequested)"),
    (requests::VALID, "at 2026-07-28 the validator declares no client capability; the declared side is judged at the `initialize` revisions"),
    (requests::WITHIN_DECLARED, "at 2026-07-28 the validator declares no client capability; the declared side is judged at the `initialize` revisions"),
];

/// The feature checks judged at 2026-07-28 (run, or not applicable with the reason).
pub fn applies(id: &str) -> bool {
    features::SESSION_CHECKS.contains(&id) || requests::CHECKS.contains(&id)
}

/// The selected feature checks on the stateless session: those that apply run (after
/// `server/discover`, whose answer stands for `initialize`'s), the others are reported not
/// applicable.
pub async fn run<S: Peer>(session: &mut S, plan: &Plan, discover: &Exchange) -> Vec<Found> {
    let mut found = Vec::new();
    let mut wanted = Vec::new();
    for id in features::SESSION_CHECKS.iter().chain(requests::CHECKS).copied().filter(|id| plan.wants(id)) {
        match NOT_APPLICABLE.iter().find(|(na, _)| *na == id) {
            Some((_, why)) => found.push(Found::new(id, STATELESS, Finding::skip(format!("not applicable: {why}")), 0)),
            None => wanted.push(id),
        }
    }
    let result = discover.result().cloned().unwrap_or_default();
    let init = json!({
        "protocolVersion": STATELESS,
        "capabilities": result.get("capabilities").cloned().unwrap_or_default(),
        "serverInfo": result.get("serverInfo").cloned().unwrap_or_default(),
    });
    let out = features::run(&mut Modern(session), STATELESS, &init, &wanted, &Settings::of(plan)).await;
    found.extend(out.into_iter().map(|(id, revision, finding, millis)| Found::new(id, revision, finding, millis)));
    found
}

impl<S: Peer> Basics for Modern<'_, S> {
    fn shared_log(&self) -> SharedLog {
        self.0.shared_log()
    }

    fn fresh_id(&mut self) -> i64 {
        self.0.fresh_id()
    }

    fn tell(&mut self, method: &str, params: Option<Value>) -> impl Future<Output = ()> + Send {
        self.0.tell(method, params)
    }
}

impl<S: Peer> Peer for Modern<'_, S> {
    type InFlight = S::InFlight;

    fn start(&mut self, requests: Vec<Value>) -> impl Future<Output = S::InFlight> + Send {
        let requests = requests
            .into_iter()
            .map(|mut message| {
                message["params"] = with_meta(message.get("params").cloned(), STATELESS);
                if let Some(method) = message.get("method").and_then(Value::as_str) {
                    message["method"] = json!(modern_method(method));
                }
                message
            })
            .collect();
        self.0.start(requests)
    }

    fn finish(&mut self, in_flight: S::InFlight, deadline: Instant) -> impl Future<Output = Vec<Exchange>> + Send {
        self.0.finish(in_flight, deadline)
    }

    fn is_stdio(&self) -> bool {
        self.0.is_stdio()
    }
}
