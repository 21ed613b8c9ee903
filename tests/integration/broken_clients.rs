//! A deliberately broken client makes the matching scenarios fail: proof that each of
//! these scenarios can fail at all, and fails for the reason it is there.

use super::support::*;
use mcp_conformance::verdict::{self, Verdict};
use mcp_refclient::{Breakage, TestHooks};
use rstest::rstest;

/// Runs `scenario_name` under each of its profiles with `breakage` switched on and asserts
/// that every run fails (a failure of the client, never a harness fault) with a failure of
/// `what` (`step 2`, `secret`, `processes`, …).
#[rstest]
#[case::ping_unanswered("stdio/ping-answered-during-call", Breakage::NoPingAnswer, "step 2")]
#[case::server_requests_unanswered("stdio/server-requests-declined", Breakage::NoDecline, "script")]
#[case::banner_fatal("stdio/banner-before-initialize", Breakage::BannerFatal, "step 1")]
#[case::any_id_taken("stdio/response-own-id", Breakage::AnyIdAccepted, "step 2")]
#[case::queue_time_counted(
    "timeouts/queue-wait-not-counted",
    Breakage::TimeoutIncludesQueue,
    "step"
)]
#[case::stderr_head_kept("stdio/stderr-tail-kept", Breakage::StderrHeadKept, "step")]
#[case::list_changed_not_counted(
    "stdio/list-changed-counted",
    Breakage::NoListChangedCount,
    "step"
)]
#[case::delivered_call_resent(
    "resilience/delivered-call-not-resent",
    Breakage::RetryDeliveredCalls,
    ""
)]
#[case::no_tools_cache("resilience/tools-cached-until-reconnect", Breakage::NoToolsCache, "")]
#[case::reconnect_on_json_rpc_error(
    "resilience/jsonrpc-error-no-reconnect",
    Breakage::RetryAnyError,
    ""
)]
#[case::reconnect_on_timeout("resilience/timeout-no-reconnect", Breakage::RetryAnyError, "")]
#[case::json_rpc_error_unscrubbed(
    "redaction/jsonrpc-error-message-redacted",
    Breakage::NoJsonRpcErrorScrub,
    "secret"
)]
#[case::json_rpc_error_query_unscrubbed(
    "redaction/jsonrpc-error-query-value-redacted",
    Breakage::NoJsonRpcErrorScrub,
    "secret"
)]
#[case::echoed_header_unscrubbed(
    "redaction/server-echoed-header-value-hidden",
    Breakage::NoStatusBodyScrub,
    "secret"
)]
#[case::group_kept_on_close(
    "process/group-close-kills-descendants",
    Breakage::NoGroupKillOnClose,
    "step 3"
)]
#[case::group_kept_on_drop(
    "process/group-drop-kills-descendants",
    Breakage::NoGroupKillOnDrop,
    "step 3"
)]
#[case::group_kept_on_exit_seen_by_exited(
    "process/launcher-exit-seen-by-exited",
    Breakage::NoGroupKillOnExit,
    "step 3"
)]
#[case::group_kept_on_exit_seen_by_call(
    "process/launcher-exit-seen-by-call",
    Breakage::NoGroupKillOnExit,
    "step 2"
)]
#[case::wrapper_left_running(
    "process/output-closed-wrapper-lives",
    Breakage::NoKillOnOutputClosed,
    "step 4"
)]
#[case::ping_answer_not_empty(
    "stdio/ping-answered-during-call",
    Breakage::PingAnswerNotEmpty,
    "received_includes"
)]
#[case::cancelled_without_request_id(
    "timeouts/timeout-sends-cancelled",
    Breakage::CancelledWithoutRequestId,
    "received_includes"
)]
#[case::invalid_result_as_transport(
    "errors/kinds-by-cause",
    Breakage::InvalidResultAsTransport,
    "step 3"
)]
#[case::withdrawal_logged_each_turn(
    "tools/source-withdraws-exited-server",
    Breakage::WithdrawalLoggedEachTurn,
    "logs"
)]
#[case::yoagent_offers_latest_over_http(
    "lifecycle/http-initialize-offers-yoagent",
    Breakage::HttpOffersLatest,
    "received_includes"
)]
#[case::kova_offers_latest_over_http(
    "lifecycle/http-initialize-offers-kova",
    Breakage::HttpOffersLatest,
    "received_includes"
)]
#[case::origin_check_ignores_port(
    "redirects/cross-origin-port-only-refused",
    Breakage::PortBlindOrigin,
    "step 2"
)]
#[case::token_cached_at_connect(
    "auth/token-asked-on-every-request",
    Breakage::TokenCachedAtConnect,
    "http_requests"
)]
#[case::answer_posted_inline(
    "legacy-sse/server-request-answer-beside-stream",
    Breakage::AnswerInline,
    "step 2"
)]
#[case::answer_queue_waits(
    "legacy-sse/server-request-flood-answers-bounded",
    Breakage::AnswerQueueWaits,
    "step 2"
)]
#[case::timed_out_request_reissued(
    "stateless/timed-out-stream-not-reissued",
    Breakage::ReissueTimedOut,
    "step 2"
)]
#[case::handshake_timer_restarts(
    "lifecycle/handshake-bounded-despite-chatter",
    Breakage::HandshakeTimerRestarts,
    "step 1"
)]
#[case::per_call_timeout_ignored_over_http(
    "timeouts/http-per-call-override",
    Breakage::PerCallTimeoutIgnored,
    "step"
)]
#[case::cancelled_without_request_id_over_http(
    "timeouts/http-timeout-sends-cancelled",
    Breakage::CancelledWithoutRequestId,
    "received_includes"
)]
#[case::listing_unbounded_over_http(
    "tools/http-source-listing-bounded",
    Breakage::NoListBoundOverHttp,
    "step 3"
)]
#[case::cancelled_awaited_over_http(
    "timeouts/http-timeout-sends-cancelled",
    Breakage::CancelledAwaited,
    "step 2"
)]
#[case::no_fallback_over_stdio("stateless/fallback-stdio", Breakage::NoLegacyFallback, "step 1")]
#[case::no_fallback_over_http("stateless/fallback-http", Breakage::NoLegacyFallback, "step 1")]
#[case::requests_without_meta("stateless/discover-probe-first", Breakage::NoRequestMeta, "step 1")]
#[case::requests_without_meta_after_discover(
    "stateless/input-required-retried",
    Breakage::NoRequestMeta,
    "script"
)]
#[case::reissued_with_the_same_id(
    "stateless/broken-stream-reissued",
    Breakage::ReissueSameId,
    "distinct_request_ids"
)]
#[case::fallback_on_a_modern_error(
    "stateless/modern-error-no-fallback",
    Breakage::FallbackOnModernError,
    "received"
)]
#[case::listen_stream_not_counted(
    "stateless/listen-list-changed",
    Breakage::NoListChangedCount,
    "step 2"
)]
#[case::call_reissued_after_a_broken_stream(
    "stateless/broken-stream-call-not-reissued",
    Breakage::ReissueCalls,
    "count of `tools/call`"
)]
#[case::write_unbounded(
    "timeouts/call-bounded-while-server-not-reading",
    Breakage::WriteUnbounded,
    "step 2"
)]
#[case::cut_line_forgotten(
    "timeouts/call-bounded-while-server-not-reading",
    Breakage::CutLineForgotten,
    "step 3"
)]
fn a_broken_client_fails_its_scenario(
    #[case] scenario_name: &str,
    #[case] breakage: Breakage,
    #[case] what: &str,
) {
    let loaded = scenario(scenario_name);
    let hooks = TestHooks {
        broken: vec![breakage],
        ..Default::default()
    };
    for profile in loaded.profiles() {
        let (result, _) = verdict::run_one(&loaded, profile, &launcher(), &hooks);
        match result.verdict {
            Verdict::Fail { failures } => assert!(
                failures.iter().any(|f| f.what.contains(what)),
                "{scenario_name} under {} with {breakage:?}: no failure of `{what}` in {failures:#?}",
                profile.name()
            ),
            other => panic!("{scenario_name} under {} with {breakage:?}: expected a failure, got {other:?}", profile.name()),
        }
    }
}
