//! The rule × proof table: for each client rule, the broken clients that show its scenarios
//! can fail. A proof is a test-only `Breakage` switch of the reference client (run by
//! `broken_clients.rs`, which names the expectation that must fail) or a deliberately broken
//! driver (`tests/drivers/*.py`, run by `tests/through_drivers/broken.rs`). A tidy test keeps every client
//! rule either proven here or listed in [`NOT_YET_PROVEN`], never both.

use mcp_refclient::Breakage;

/// What breaks the client.
#[derive(Clone, Copy, Debug)]
pub enum BrokenBy {
    /// A switch of the reference client.
    Switch(Breakage),
    /// A broken driver script in `tests/drivers/`.
    Driver(&'static str),
}

/// One proof: `by` makes `scenario` fail (each of its profiles), and the failure names `what`.
#[derive(Clone, Copy, Debug)]
pub struct Proof {
    /// The client rules the failure shows checked (each named by the scenario).
    pub rules: &'static [&'static str],
    /// The broken client.
    pub by: BrokenBy,
    /// The scenario that must fail (`area/name`).
    pub scenario: &'static str,
    /// Part of the failing expectation's name (`step 2`, `secret`, `received_includes`).
    pub what: &'static str,
}

pub(super) const fn switch(
    rules: &'static [&'static str],
    breakage: Breakage,
    scenario: &'static str,
    what: &'static str,
) -> Proof {
    Proof {
        rules,
        by: BrokenBy::Switch(breakage),
        scenario,
        what,
    }
}

const fn driver(
    rules: &'static [&'static str],
    script: &'static str,
    scenario: &'static str,
) -> Proof {
    Proof {
        rules,
        by: BrokenBy::Driver(script),
        scenario,
        what: "",
    }
}

/// Every proof: the table below, then the authorization flow's (`proofs_auth.rs`).
pub fn all_proofs() -> impl Iterator<Item = &'static Proof> {
    PROOFS.iter().chain(super::proofs_auth::AUTH_PROOFS)
}

/// Every proof, switches first.
pub const PROOFS: &[Proof] = &[
    switch(
        &["stdio.ping.answered"],
        Breakage::NoPingAnswer,
        "stdio/ping-answered-during-call",
        "step 2",
    ),
    switch(
        &["stdio.ping.answered"],
        Breakage::NoPingAnswer,
        "stdio/server-request-reuses-pending-id",
        "step 2",
    ),
    switch(
        &["stdio.server-request.declined"],
        Breakage::NoDecline,
        "stdio/server-requests-declined",
        "script",
    ),
    switch(
        &["stdio.banner.skipped"],
        Breakage::BannerFatal,
        "stdio/banner-before-initialize",
        "step 1",
    ),
    switch(
        &["stdio.response.own-id", "stdio.response.stale-dropped"],
        Breakage::AnyIdAccepted,
        "stdio/response-own-id",
        "step 2",
    ),
    switch(
        &["timeouts.call.bounded", "resilience.serialized"],
        Breakage::TimeoutIncludesQueue,
        "timeouts/queue-wait-not-counted",
        "step",
    ),
    switch(
        &["stdio.stderr.tail", "stdio.exit.error-text"],
        Breakage::StderrHeadKept,
        "stdio/stderr-tail-kept",
        "step",
    ),
    switch(
        &["stdio.stderr.tail"],
        Breakage::StderrHeadKept,
        "stdio/stderr-tail-after-invalid-utf8",
        "step 2",
    ),
    switch(
        &["stdio.stderr.tail"],
        Breakage::StderrHeadKept,
        "stdio/exit-during-handshake-tail-kept",
        "step 1",
    ),
    switch(
        &["stdio.stderr.tail"],
        Breakage::StderrHeadKept,
        "stdio/exit-between-calls-tail-kept",
        "step 4",
    ),
    switch(
        &["stdio.notification.list-changed-counted"],
        Breakage::NoListChangedCount,
        "stdio/list-changed-counted",
        "step",
    ),
    switch(
        &["resilience.no-double-call"],
        Breakage::RetryDeliveredCalls,
        "resilience/delivered-call-not-resent",
        "",
    ),
    switch(
        &["resilience.tools-cache"],
        Breakage::NoToolsCache,
        "resilience/tools-cached-until-reconnect",
        "",
    ),
    switch(
        &["resilience.jsonrpc-error-no-retry"],
        Breakage::RetryAnyError,
        "resilience/jsonrpc-error-no-reconnect",
        "",
    ),
    switch(
        &["resilience.only-connection-retries"],
        Breakage::RetryAnyError,
        "resilience/timeout-no-reconnect",
        "",
    ),
    switch(
        &["redaction.key-like-parts"],
        Breakage::NoJsonRpcErrorScrub,
        "redaction/jsonrpc-error-message-redacted",
        "secret",
    ),
    switch(
        &["redaction.key-like-parts"],
        Breakage::NoJsonRpcErrorScrub,
        "redaction/jsonrpc-error-query-value-redacted",
        "secret",
    ),
    switch(
        &["redaction.credentials"],
        Breakage::NoStatusBodyScrub,
        "redaction/server-echoed-header-value-hidden",
        "secret",
    ),
    switch(
        &["process.group.kills-group"],
        Breakage::NoGroupKillOnClose,
        "process/group-close-kills-descendants",
        "step 3",
    ),
    switch(
        &["process.group.kills-group"],
        Breakage::NoGroupKillOnDrop,
        "process/group-drop-kills-descendants",
        "step 3",
    ),
    switch(
        &["process.group.launcher-exit"],
        Breakage::NoGroupKillOnExit,
        "process/launcher-exit-seen-by-exited",
        "step 3",
    ),
    switch(
        &["process.group.launcher-exit"],
        Breakage::NoGroupKillOnExit,
        "process/launcher-exit-seen-by-call",
        "step 2",
    ),
    switch(
        &["process.exited.output-closed"],
        Breakage::NoKillOnOutputClosed,
        "process/output-closed-wrapper-lives",
        "step 4",
    ),
    switch(
        &["stdio.ping.answered"],
        Breakage::PingAnswerNotEmpty,
        "stdio/ping-answered-during-call",
        "received_includes",
    ),
    switch(
        &["timeouts.call.cancelled"],
        Breakage::CancelledWithoutRequestId,
        "timeouts/timeout-sends-cancelled",
        "received_includes",
    ),
    switch(
        &["errors.kinds"],
        Breakage::InvalidResultAsTransport,
        "errors/kinds-by-cause",
        "step 3",
    ),
    switch(
        &["tools.source.withdraw-exited"],
        Breakage::WithdrawalLoggedEachTurn,
        "tools/source-withdraws-exited-server",
        "logs",
    ),
    switch(
        &["lifecycle.initialize.version"],
        Breakage::HttpOffersLatest,
        "lifecycle/http-initialize-offers-yoagent",
        "received_includes",
    ),
    switch(
        &["lifecycle.initialize.version"],
        Breakage::HttpOffersLatest,
        "lifecycle/http-initialize-offers-kova",
        "received_includes",
    ),
    switch(
        &["redirects.cross-origin-refused"],
        Breakage::PortBlindOrigin,
        "redirects/cross-origin-port-only-refused",
        "step 2",
    ),
    switch(
        &["auth.bearer.every-request"],
        Breakage::TokenCachedAtConnect,
        "auth/token-asked-on-every-request",
        "http_requests",
    ),
    switch(
        &["legacy-sse.endpoint"],
        Breakage::AnswerInline,
        "legacy-sse/server-request-answer-beside-stream",
        "step 2",
    ),
    switch(
        &["legacy-sse.endpoint"],
        Breakage::AnswerQueueWaits,
        "legacy-sse/server-request-flood-answers-bounded",
        "step 2",
    ),
    switch(
        &["stateless.stream-broken.reissued"],
        Breakage::ReissueTimedOut,
        "stateless/timed-out-stream-not-reissued",
        "step 2",
    ),
    switch(
        &["lifecycle.handshake.bounded"],
        Breakage::HandshakeTimerRestarts,
        "lifecycle/handshake-bounded-despite-chatter",
        "step 1",
    ),
    switch(
        &["timeouts.call.override"],
        Breakage::PerCallTimeoutIgnored,
        "timeouts/http-per-call-override",
        "step",
    ),
    switch(
        &["timeouts.call.cancelled"],
        Breakage::CancelledWithoutRequestId,
        "timeouts/http-timeout-sends-cancelled",
        "received_includes",
    ),
    switch(
        &["tools.source.list-bounded"],
        Breakage::NoListBoundOverHttp,
        "tools/http-source-listing-bounded",
        "step 3",
    ),
    switch(
        &["timeouts.call.cancelled"],
        Breakage::CancelledAwaited,
        "timeouts/http-timeout-sends-cancelled",
        "step 2",
    ),
    switch(
        &["stateless.discover.fallback"],
        Breakage::NoLegacyFallback,
        "stateless/fallback-stdio",
        "step 1",
    ),
    switch(
        &["stateless.discover.fallback"],
        Breakage::NoLegacyFallback,
        "stateless/fallback-http",
        "step 1",
    ),
    switch(
        &["stateless.meta.every-request", "stateless.meta.client-info"],
        Breakage::NoRequestMeta,
        "stateless/discover-probe-first",
        "step 1",
    ),
    switch(
        &["stateless.input-required.retried"],
        Breakage::NoRequestMeta,
        "stateless/input-required-retried",
        "script",
    ),
    switch(
        &["stateless.stream-broken.reissued"],
        Breakage::ReissueSameId,
        "stateless/broken-stream-reissued",
        "distinct_request_ids",
    ),
    switch(
        &["stateless.discover.modern-error-no-fallback"],
        Breakage::FallbackOnModernError,
        "stateless/modern-error-no-fallback",
        "received",
    ),
    switch(
        &["stateless.listen.list-changed"],
        Breakage::NoListChangedCount,
        "stateless/listen-list-changed",
        "step 2",
    ),
    switch(
        &["stateless.stream-broken.no-double-call"],
        Breakage::ReissueCalls,
        "stateless/broken-stream-call-not-reissued",
        "count of `tools/call`",
    ),
    switch(
        &["timeouts.call.bounded"],
        Breakage::WriteUnbounded,
        "timeouts/call-bounded-while-server-not-reading",
        "step 2",
    ),
    switch(
        &["stdio.framing.newline"],
        Breakage::CutLineForgotten,
        "timeouts/call-bounded-while-server-not-reading",
        "step 3",
    ),
    switch(
        &["timeouts.call.cancelled"],
        Breakage::CancelsLatestRequest,
        "timeouts/timeout-cancels-its-own-id",
        "received_includes",
    ),
    switch(
        &["timeouts.call.cancelled"],
        Breakage::CancelsLatestRequest,
        "timeouts/http-timeout-cancels-its-own-id",
        "received_includes",
    ),
    switch(
        &["process.group.kills-group"],
        Breakage::GroupTerminatedPolitely,
        "process/group-close-kills-sigterm-ignoring-child",
        "step 3",
    ),
    switch(
        &["process.group.kills-group"],
        Breakage::GroupTerminatedPolitely,
        "process/group-drop-kills-sigterm-ignoring-child",
        "step 3",
    ),
    switch(
        &["process.group.launcher-exit"],
        Breakage::GroupTerminatedPolitely,
        "process/launcher-exit-kills-sigterm-ignoring-child",
        "step 4",
    ),
    switch(
        &["legacy-sse.endpoint", "stdio.server-request.declined"],
        Breakage::OneAnswerPosted,
        "legacy-sse/server-requests-in-a-row-answered",
        "step 2",
    ),
    switch(
        &["redaction.key-like-parts"],
        Breakage::NoJsonRpcErrorScrub,
        "legacy-sse/jsonrpc-error-key-redacted",
        "secret",
    ),
    switch(
        &["stateless.discover.probe"],
        Breakage::DiscoverVersionsIgnored,
        "stateless/discover-without-newest-falls-back",
        "step 1",
    ),
    switch(
        &["http.accept.both"],
        Breakage::AcceptJsonOnly,
        "http/accept-every-post",
        "script",
    ),
    switch(
        &["http.session.captured"],
        Breakage::SessionIdNotSent,
        "http/session-captured",
        "script",
    ),
    switch(
        &["http.protocol-version.header"],
        Breakage::VersionHeaderOnRequestsOnly,
        "http/protocol-version-header",
        "script",
    ),
    switch(
        &["http.protocol-version.header"],
        Breakage::DeleteWithoutVersionHeader,
        "http/protocol-version-header",
        "script",
    ),
    switch(
        &["http.session.delete-on-close"],
        Breakage::NoSessionDelete,
        "http/session-delete-on-close",
        "script",
    ),
    switch(
        &["stateless.http.method-headers"],
        Breakage::NameEncodedOnlyNonAscii,
        "stateless/http-name-header-encoding-edges",
        "script",
    ),
    switch(
        &["stdio.response.id-by-value"],
        Breakage::IdsComparedAsWritten,
        "stdio/response-id-equal-by-value",
        "step 2",
    ),
    switch(
        &["timeouts.call.typed"],
        Breakage::TimeoutAsTransport,
        "timeouts/call-bounded",
        "step 2",
    ),
    switch(
        &["lifecycle.initialized.notification"],
        Breakage::NoInitializedNotification,
        "lifecycle/initialized-is-notification",
        "script",
    ),
    switch(
        &["lifecycle.initialize.unsupported-version"],
        Breakage::AnyVersionAccepted,
        "lifecycle/initialize-unsupported-version",
        "step 1",
    ),
    switch(
        &["timeouts.late-response-dropped"],
        Breakage::AnyIdAccepted,
        "timeouts/timeout-sends-cancelled",
        "step 3",
    ),
    switch(
        &["errors.rpc-code-kept"],
        Breakage::RpcErrorAsProtocol,
        "errors/jsonrpc-error-kept",
        "step 2",
    ),
    switch(
        &["lifecycle.initialize.server-info-kept"],
        Breakage::ServerInfoOnly,
        "lifecycle/server-info-kept",
        "step 2",
    ),
    switch(
        &["stdio.notification.skipped"],
        Breakage::NotificationFailsCall,
        "stdio/notifications-skipped",
        "step 2",
    ),
    switch(
        &["tools.prefix"],
        Breakage::PrefixedNameCalled,
        "tools/prefix-calls-original-name",
        "step 4",
    ),
    switch(
        &["http.status.error"],
        Breakage::StatusAsTransport,
        "http/status-500-on-call",
        "step 2",
    ),
    switch(
        &["redirects.limit"],
        Breakage::RedirectLimitOffByOne,
        "redirects/limit-10-hops-followed",
        "step 2",
    ),
    switch(
        &["tools.is-error"],
        Breakage::IsErrorIgnored,
        "tools/is-error-becomes-failed-result",
        "step 4",
    ),
    switch(
        &["stateless.result-type.absent-complete"],
        Breakage::ResultTypeRequired,
        "stateless/result-type-absent-complete",
        "step 2",
    ),
    switch(
        &["auth.refresh-once-on-401"],
        Breakage::NoRefreshOn401,
        "auth/refresh-once-on-401",
        "step 2",
    ),
    switch(
        &["http.session.expired-404"],
        Breakage::ExpiredSessionKept,
        "http/session-expired-404",
        "step 4",
    ),
    switch(
        &["redirects.method-change"],
        Breakage::PostResentOnAnyRedirect,
        "redirects/method-change-302-clear-error",
        "count of `tools/call`",
    ),
    switch(
        &["lifecycle.tools-list.paginated"],
        Breakage::FirstPageOnly,
        "lifecycle/tools-list-paginated",
        "step 2",
    ),
    switch(
        &["lifecycle.tools-list.fresh"],
        Breakage::ToolsCachedEverywhere,
        "lifecycle/tools-list-asked-after-list-changed",
        "step 4",
    ),
    switch(
        &["resilience.reconnect-once"],
        Breakage::NoAutoReconnect,
        "resilience/list-reconnects-after-crash",
        "step 2",
    ),
    switch(
        &["resilience.manual-reconnect"],
        Breakage::ReconnectKeepsCache,
        "resilience/manual-reconnect-clears-cache",
        "step 5",
    ),
    switch(
        &["resilience.connect-retry"],
        Breakage::NoConnectRetry,
        "resilience/connect-retries-handshake-crash",
        "step 1",
    ),
    switch(
        &["process.exited.http-none"],
        Breakage::HttpExitedAfterClose,
        "http/exited-none",
        "step 8",
    ),
    switch(
        &["stdio.spawn.env"],
        Breakage::EnvReplaced,
        "stdio/spawn-env",
        "step 2",
    ),
    switch(
        &["stdio.stderr.drained"],
        Breakage::StderrNotDrained,
        "stdio/stderr-logged-at-debug",
        "logs",
    ),
    switch(
        &["stdio.calls.multiplexed"],
        Breakage::CallsQueued,
        "stdio/calls-multiplexed-by-id",
        "step 5",
    ),
    switch(
        &["http.calls.concurrent"],
        Breakage::CallsQueued,
        "timeouts/http-timeout-cancels-its-own-id",
        "received",
    ),
    switch(
        &["timeouts.call.may-have-run"],
        Breakage::TimeoutWithoutMayHaveRun,
        "timeouts/call-bounded",
        "step 2",
    ),
    switch(
        &["redirects.any"],
        Breakage::CredentialsKeptOnRedirect,
        "redirects/any-drops-bearer-token-on-other-host",
        "script",
    ),
    switch(
        &["redirects.none"],
        Breakage::RedirectsNoneIgnored,
        "redirects/none-refuses-same-origin",
        "step 2",
    ),
    switch(
        &["redirects.same-origin"],
        Breakage::BodyDroppedOnRedirect,
        "redirects/same-origin-307-keeps-post",
        "script",
    ),
    switch(
        &["redirects.cross-origin-named"],
        Breakage::RedirectNamesFullUrl,
        "redirects/cross-origin-named",
        "step 2",
    ),
    switch(
        &["auth.no-loop"],
        Breakage::ForbiddenRefreshed,
        "auth/403-never-retried",
        "http_every_request",
    ),
    switch(
        &["headers.every-request"],
        Breakage::CustomHeadersOnPostsOnly,
        "headers/every-request",
        "http_every_request",
    ),
    switch(
        &["http.ack.empty-202"],
        Breakage::OnlyAcceptedAcknowledges,
        "http/ack-204-notification",
        "step 1",
    ),
    switch(
        &["http.ack.other-empty-2xx"],
        Breakage::EmptyNotificationReplyAccepted,
        "http/empty-200-to-notification",
        "step 1",
    ),
    switch(
        &["http.sse.interleaved-skipped"],
        Breakage::SseNotificationFailsCall,
        "http/sse-interleaved-skipped",
        "step 2",
    ),
    switch(
        &["http.server-request.unanswered"],
        Breakage::ServerRequestIgnoredOverHttp,
        "http/server-request-answered-strict",
        "step 2",
    ),
    switch(
        &["http.notification.list-changed-counted"],
        Breakage::NoListChangedCount,
        "http/list-changed-on-sse-counted",
        "step 4",
    ),
    switch(
        &["tools.adapter.names"],
        Breakage::DescriptionDropped,
        "tools/adapter-keeps-name-description-schema",
        "step 3",
    ),
    switch(
        &["tools.content.kinds"],
        Breakage::RawContentToModel,
        "tools/content-kinds-mapped",
        "step 4",
    ),
    switch(
        &["tools.source.relist"],
        Breakage::FailedListingClears,
        "tools/source-keeps-last-good-list",
        "step 5",
    ),
    switch(
        &["tools.source.no-notify-warn"],
        Breakage::NoNotifyWarning,
        "tools/source-without-notifications-warns",
        "logs",
    ),
    switch(
        &["stateless.seeds.handshake-only"],
        Breakage::SeedsProbeDiscover,
        "stateless/seeds-handshake-only",
        "count of `server/discover`",
    ),
    switch(
        &["stateless.version.unsupported"],
        Breakage::UnsupportedVersionAsRpc,
        "stateless/unsupported-version-surfaced",
        "step 1",
    ),
    switch(
        &["stateless.input-required.only-where-allowed"],
        Breakage::InputRequiredTakenAsComplete,
        "stateless/input-required-on-list-refused",
        "step 2",
    ),
    switch(
        &["stateless.no-session"],
        Breakage::SessionCapturedWhenStateless,
        "stateless/no-handshake-no-session",
        "http_every_request",
    ),
    switch(
        &["lifecycle.initialize.sent-first"],
        Breakage::InitializeWithoutCapabilities,
        "lifecycle/initialize-sent-first",
        "script",
    ),
    switch(
        &["lifecycle.initialized.undeliverable"],
        Breakage::InitializedFailureIgnored,
        "lifecycle/initialized-undeliverable",
        "step 1",
    ),
    switch(
        &["process.pid.named"],
        Breakage::PidNotNamed,
        "process/server-pid-named",
        "step 2",
    ),
    switch(
        &["http.sse.returns-at-frame"],
        Breakage::StreamReadToEnd,
        "http/sse-returns-at-frame",
        "step 2",
    ),
    switch(
        &["http.notification.trailing-ignored"],
        Breakage::StreamReadToEnd,
        "http/trailing-frames-not-read",
        "step 2",
    ),
    switch(
        &["http.idle.reset-on-read"],
        Breakage::IdleNotReset,
        "http/idle-reset-on-read",
        "step 2",
    ),
    switch(
        &["timeouts.client.configurable"],
        Breakage::UnboundedCallFallsBack,
        "timeouts/client-bound-unbounded",
        "step 2",
    ),
    switch(
        &["stdio.read.only-during-call"],
        Breakage::ReadsBetweenCalls,
        "stdio/ping-after-cancelled-call-waits-for-next-call",
        "received",
    ),
    switch(
        &["http.sse.parsed"],
        Breakage::SseCrKept,
        "http/sse-crlf-line-ends",
        "step 2",
    ),
    switch(
        &["timeouts.call.cancel"],
        Breakage::CancelPoisons,
        "timeouts/cancel-ends-call",
        "step 5",
    ),
    switch(
        &["process.exited.reports"],
        Breakage::ExitedWithoutStderr,
        "process/exited-reports-status-and-stderr",
        "step 3",
    ),
    switch(
        &["process.exited.unwaitable"],
        Breakage::UnwaitableTakenAsRunning,
        "process/unwaitable-child",
        "step 3",
    ),
    switch(
        &["lifecycle.messages.request-and-notification"],
        Breakage::NotificationWithId,
        "lifecycle/raw-request-and-notification",
        "script",
    ),
    switch(
        &["process.exited.none-while-running"],
        Breakage::ExitedWaitsForCalls,
        "process/exited-none-while-running",
        "step 5",
    ),
    switch(
        &["http.json.plain"],
        Breakage::BodyCapExclusive,
        "http/json-body-at-cap",
        "step 2",
    ),
    switch(
        &["http.get-stream.none"],
        Breakage::LastEventIdReplayed,
        "http/get-stream-none",
        "script",
    ),
    switch(
        &["lifecycle.tools-list.one-page"],
        Breakage::EveryProfilePaginates,
        "lifecycle/tools-list-one-page-seeds-http",
        "step 2",
    ),
    switch(
        &["http.idle.bounded"],
        Breakage::IdleHeadOnly,
        "http/idle-stall-mid-body",
        "step 2",
    ),
    switch(
        &["stateless.input-required.retried"],
        Breakage::RequestStateCarriedOver,
        "stateless/input-required-retried",
        "script",
    ),
    // Broken drivers: `tests/through_drivers/broken.rs` asserts each fails exactly its rules' scenarios.
    driver(
        &["redaction.origin-only"],
        "leaks_url.py",
        "redaction/handshake-error-origin-only",
    ),
    driver(
        &["process.drop.kills-command", "process.exited.closed"],
        "keeps_server.py",
        "process/close-kills-command",
    ),
    driver(
        &["http.shutdown.connections-closed"],
        "keeps_connection_on_drop.py",
        "legacy-sse/drop-lets-go-of-stream",
    ),
    driver(
        &["timeouts.call.override"],
        "no_call_timeout.py",
        "timeouts/per-call-override",
    ),
    driver(
        &["process.group.no-sigint"],
        "shields_server.py",
        "process/sigint-reaches-server-without-group",
    ),
    driver(
        &["process.group.only-own"],
        "shields_server.py",
        "process/launcher-exit-without-group-server-kept",
    ),
    driver(
        &["lifecycle.initialized.undeliverable"],
        "ignores_initialized_status.py",
        "lifecycle/initialized-refused-over-http",
    ),
    driver(
        &["headers.replace"],
        "first_header_wins.py",
        "headers/replace",
    ),
    driver(
        &["headers.validated"],
        "refuses_tab_in_value.py",
        "headers/validated-space-and-tab-inside",
    ),
    driver(
        &["headers.sensitive"],
        "echoes_header_values.py",
        "headers/sensitive-echoed-in-500-body",
    ),
];

/// Client rules no broken client proves yet: the table's open debt, shown in the book. A rule
/// that gains a proof must leave this list (the tidy test fails on a rule in both).
pub const NOT_YET_PROVEN: &[&str] = &[];
