//! A deliberately broken client makes the matching scenarios fail: proof that each of
//! these scenarios can fail at all.

use super::support::*;
use mcp_conformance::verdict::{self, Verdict};
use mcp_refclient::{Breakage, TestHooks};

/// Runs `scenario` under each of its profiles with `breakage` switched on and asserts that
/// every run fails, naming what did not hold.
fn assert_breakage_caught(scenario_name: &str, breakage: Breakage) {
    let loaded = scenario(scenario_name);
    let hooks = TestHooks { broken: vec![breakage], ..Default::default() };
    for profile in loaded.profiles() {
        let (result, _) = verdict::run_one(&loaded, profile, &launcher(), &hooks);
        match result.verdict {
            Verdict::Fail { failures } => assert!(!failures.is_empty()),
            other => panic!("{scenario_name} under {} with {breakage:?}: expected a failure, got {other:?}", profile.name()),
        }
    }
}

#[test]
fn a_client_that_ignores_pings_fails_the_ping_scenario() {
    assert_breakage_caught("stdio/ping-answered-during-call", Breakage::NoPingAnswer);
}

#[test]
fn a_client_that_leaves_server_requests_unanswered_fails_the_decline_scenario() {
    assert_breakage_caught("stdio/server-requests-declined", Breakage::NoDecline);
}

#[test]
fn a_client_that_chokes_on_a_banner_fails_the_banner_scenario() {
    assert_breakage_caught("stdio/banner-before-initialize", Breakage::BannerFatal);
}

#[test]
fn a_client_that_takes_any_id_fails_the_own_id_scenario() {
    assert_breakage_caught("stdio/response-own-id", Breakage::AnyIdAccepted);
}

#[test]
fn a_client_that_kills_only_the_command_fails_the_group_scenario() {
    assert_breakage_caught("process/group-close-kills-descendants", Breakage::NoGroupKill);
}

#[test]
fn a_client_that_counts_queue_time_fails_the_queue_scenario() {
    assert_breakage_caught("timeouts/queue-wait-not-counted", Breakage::TimeoutIncludesQueue);
}

#[test]
fn a_client_that_keeps_the_head_of_stderr_fails_the_tail_scenario() {
    assert_breakage_caught("stdio/stderr-tail-kept", Breakage::StderrHeadKept);
}

#[test]
fn a_client_that_does_not_count_list_changed_fails_the_count_scenario() {
    assert_breakage_caught("stdio/list-changed-counted", Breakage::NoListChangedCount);
}

#[test]
fn a_client_that_resends_a_delivered_call_fails_the_no_double_call_scenario() {
    assert_breakage_caught("resilience/delivered-call-not-resent", Breakage::RetryDeliveredCalls);
}

#[test]
fn a_client_without_a_tools_cache_fails_the_cache_scenario() {
    assert_breakage_caught("resilience/tools-cached-until-reconnect", Breakage::NoToolsCache);
}

#[test]
fn a_client_that_reconnects_on_any_error_fails_the_json_rpc_and_timeout_scenarios() {
    assert_breakage_caught("resilience/jsonrpc-error-no-reconnect", Breakage::RetryAnyError);
    assert_breakage_caught("resilience/timeout-no-reconnect", Breakage::RetryAnyError);
}
