//! A deliberately broken client makes the matching scenarios fail: proof that each of
//! these scenarios can fail at all, and fails for the reason it is there. The proofs are the
//! table of `proofs.rs`; the tests here run its switches and keep it complete.

use super::proofs::{all_proofs, BrokenBy, Proof, NOT_YET_PROVEN};
use super::support::*;
use mcp_conformance::rules::{self, RuleKind};
use mcp_conformance::runner::estimate;
use mcp_conformance::verdict::{self, Verdict};
use mcp_refclient::{Breakage, Profile, TestHooks};
use std::collections::BTreeSet;

/// Runs `proof.scenario` under `profile` with the proof's switch on; what went other than a
/// failure of the client naming `proof.what` (a pass, a harness fault, another failure
/// only).
fn disproved(proof: &Proof, breakage: Breakage, profile: Profile) -> Option<String> {
    let loaded = scenario(proof.scenario);
    let hooks = TestHooks {
        broken: vec![breakage],
        ..Default::default()
    };
    let (result, _) = verdict::run_one(&loaded, profile, &launcher(), &hooks);
    let at = format!(
        "{} under {} with {breakage:?}",
        proof.scenario,
        profile.name()
    );
    match result.verdict {
        Verdict::Fail { failures } if failures.iter().any(|f| f.what.contains(proof.what)) => None,
        Verdict::Fail { failures } => Some(format!(
            "{at}: no failure of `{}` in {failures:#?}",
            proof.what
        )),
        other => Some(format!("{at}: expected a failure, got {other:?}")),
    }
}

/// Scenarios at once: a broken client mostly waits (for its bound, for a server that
/// stalls, for processes to go), so several run beside each other whatever the cores.
const WORKERS: usize = 12;

#[test]
fn each_broken_client_fails_its_scenario_for_the_reason_it_is_there() {
    // Each switch under each profile of its scenario, the longest-waiting scenarios first.
    let runs: Vec<(&Proof, Breakage, Profile, u64)> = all_proofs()
        .filter_map(|proof| match proof.by {
            BrokenBy::Switch(breakage) => Some((proof, breakage)),
            BrokenBy::Driver(_) => None,
        })
        .flat_map(|(proof, breakage)| {
            let loaded = scenario(proof.scenario);
            let least_ms = estimate::least_ms(&loaded.scenario);
            loaded
                .profiles()
                .into_iter()
                .map(move |profile| (proof, breakage, profile, least_ms))
        })
        .collect();
    let found = verdict::in_parallel_longest_first(
        &runs,
        WORKERS,
        |(.., least_ms)| *least_ms,
        |(proof, breakage, profile, _)| disproved(proof, *breakage, *profile),
    );
    let wrong: Vec<String> = found.into_iter().flatten().collect();
    assert!(
        wrong.is_empty(),
        "proofs that did not hold:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_client_rule_is_proven_or_listed_as_not_yet_proven() {
    let client: BTreeSet<&str> = rules::all()
        .iter()
        .filter(|r| r.kind == RuleKind::Client)
        .map(|r| r.id.as_str())
        .collect();
    let proven: BTreeSet<&str> = all_proofs().flat_map(|p| p.rules.iter().copied()).collect();
    let pending: BTreeSet<&str> = NOT_YET_PROVEN.iter().copied().collect();
    assert_eq!(
        pending.len(),
        NOT_YET_PROVEN.len(),
        "a rule listed twice as not yet proven"
    );
    let unknown: Vec<&&str> = proven
        .union(&pending)
        .filter(|r| !client.contains(**r))
        .collect();
    assert!(unknown.is_empty(), "not client rules: {unknown:?}");
    let both: Vec<&&str> = proven.intersection(&pending).collect();
    assert!(
        both.is_empty(),
        "proven, yet listed as not yet proven: {both:?}"
    );
    let neither: Vec<&&str> = client
        .iter()
        .filter(|r| !proven.contains(**r) && !pending.contains(**r))
        .collect();
    assert!(
        neither.is_empty(),
        "client rules without a proof (add one to tests/integration/proofs.rs): {neither:?}"
    );
}

#[test]
fn every_proof_names_a_scenario_that_names_its_rules() {
    for proof in all_proofs() {
        let loaded = scenario(proof.scenario);
        for rule in proof.rules {
            assert!(
                loaded.scenario.rules.iter().any(|r| r == rule),
                "{} does not name {rule}, which {:?} is said to prove",
                proof.scenario,
                proof.by
            );
        }
        if let BrokenBy::Driver(script) = proof.by {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/drivers")
                .join(script);
            assert!(path.is_file(), "no driver {}", path.display());
        }
    }
}

#[test]
fn every_breakage_switch_proves_some_rule() {
    let config = include_str!("../../client/src/config.rs");
    let body = config
        .split("pub enum Breakage {")
        .nth(1)
        .and_then(|rest| rest.split("\n}").next())
        .expect("the Breakage enum in client/src/config.rs");
    let declared: BTreeSet<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("///") && l.ends_with(','))
        .map(|l| l.trim_end_matches(','))
        .collect();
    let used: BTreeSet<String> = all_proofs()
        .filter_map(|p| match p.by {
            BrokenBy::Switch(b) => Some(format!("{b:?}")),
            BrokenBy::Driver(_) => None,
        })
        .collect();
    let unused: Vec<&&str> = declared.iter().filter(|d| !used.contains(**d)).collect();
    assert!(unused.is_empty(), "switches no proof uses: {unused:?}");
}
