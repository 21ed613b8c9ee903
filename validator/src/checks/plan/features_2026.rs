//! The feature checks at 2026-07-28: those that still apply run on the stateless session
//! after `server/discover` (each request with the per-request `_meta`, through
//! [`Modern`]); the others are not applicable, each with the reason (what replaced it).

use super::features::{self, Settings};
use super::settings::{Found, Plan};
use crate::checks::session::modern::Modern;
use crate::checks::session::peer::Peer;
use crate::checks::{lifecycle, requests, resources, utilities};
use crate::outcome::Finding;
use crate::schema::STATELESS;
use crate::stdio::Exchange;
use serde_json::json;

/// The feature checks whose rules do not apply at 2026-07-28 (tagged `..2025-11-25` in
/// `validator/src/rules.toml`), with what replaced what they judge.
pub const NOT_APPLICABLE: &[(&str, &str)] = &[
    (lifecycle::SECOND_INITIALIZE, "2026-07-28 has no `initialize`"),
    (lifecycle::SERVER_INFO, "2026-07-28 has no `initialize`; the identity every result carries is server.result.server-info"),
    (resources::UNKNOWN, "at 2026-07-28 an unknown resource is server.resources.not-found"),
    (resources::SUBSCRIBE, "2026-07-28 has no `resources/subscribe`: updates come on a `subscriptions/listen` stream (server.subscriptions.acknowledged)"),
    (resources::UPDATED, "2026-07-28 has no `resources/subscribe`: updates come on a `subscriptions/listen` stream (server.subscriptions.acknowledged)"),
    (utilities::SET_LEVEL, "2026-07-28 has no `logging/setLevel`: the level is asked per request (server.logging.unrequested)"),
    (utilities::LEVEL_RESPECTED, "2026-07-28 has no `logging/setLevel`: the level is asked per request (server.logging.unrequested)"),
];

/// The checks that apply at 2026-07-28 but are not exercised there, with the reason.
const NOT_EXERCISED: &[(&str, &str)] = &[
    (requests::VALID, "not exercised at 2026-07-28: the validator declares no client capability there (the declared side is judged at the `initialize` revisions)"),
    (requests::WITHIN_DECLARED, "not exercised at 2026-07-28: the validator declares no client capability there (the declared side is judged at the `initialize` revisions)"),
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
    for id in features::SESSION_CHECKS
        .iter()
        .chain(requests::CHECKS)
        .copied()
        .filter(|id| plan.wants(id))
    {
        if let Some((_, why)) = NOT_APPLICABLE.iter().find(|(na, _)| *na == id) {
            found.push(Found::new(
                id,
                STATELESS,
                Finding::skip(format!("not applicable: {why}")),
                0,
            ));
        } else if let Some((_, why)) = NOT_EXERCISED.iter().find(|(ne, _)| *ne == id) {
            found.push(Found::new(id, STATELESS, Finding::skip(*why), 0));
        } else {
            wanted.push(id);
        }
    }
    let result = discover.result().cloned().unwrap_or_default();
    let init = json!({
        "protocolVersion": STATELESS,
        "capabilities": result.get("capabilities").cloned().unwrap_or_default(),
        "serverInfo": result.get("serverInfo").cloned().unwrap_or_default(),
    });
    let out = features::run(
        &mut Modern(session),
        STATELESS,
        &init,
        &wanted,
        &Settings::of(plan),
    )
    .await;
    found.extend(
        out.into_iter()
            .map(|(id, revision, finding, millis)| Found::new(id, revision, finding, millis)),
    );
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A feature check is not applicable at 2026-07-28 exactly when its rule says so.
    #[test]
    fn the_checks_not_applicable_are_those_whose_rules_stop_before_2026_07_28() {
        for id in features::SESSION_CHECKS.iter().chain(requests::CHECKS) {
            let rule = crate::rules::find(id).unwrap_or_else(|| panic!("{id} has no rule"));
            let listed = NOT_APPLICABLE.iter().any(|(na, _)| na == id);
            assert_eq!(listed, !rule.applies_at(STATELESS), "{id}");
        }
    }
}
