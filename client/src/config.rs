//! Client configuration: the profile and every timeout, each a setting with its documented
//! default.

use std::time::Duration;

/// Which seed client's behaviour the reference client follows where the seeds differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Profile {
    /// The reference client's own default: yoagent's behaviour, Kova's token provider, and
    /// what the spec asks that neither seed does.
    #[default]
    Strict,
    /// yoagent 0.26's MCP client.
    Yoagent,
    /// kova-sdk's MCP client.
    Kova,
}

impl Profile {
    /// Every profile, in report order.
    pub const ALL: [Profile; 3] = [Profile::Strict, Profile::Yoagent, Profile::Kova];

    /// The profile's name as scenarios and the CLI spell it.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Strict => "strict",
            Profile::Yoagent => "yoagent",
            Profile::Kova => "kova",
        }
    }

    /// Parses a profile name.
    pub fn from_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The protocol version offered in `initialize` over stdio.
    pub fn stdio_protocol_version(self) -> &'static str {
        match self {
            Profile::Strict => crate::LATEST_PROTOCOL_VERSION,
            Profile::Yoagent | Profile::Kova => "2024-11-05",
        }
    }

    /// Whether server messages are read all the time (strict, kova) or only while a call is
    /// in progress (yoagent).
    pub fn reads_only_during_calls(self) -> bool {
        self == Profile::Yoagent
    }

    /// Whether requests on one connection are multiplexed by id, several in flight at once
    /// (strict: JSON-RPC allows it and agents call tools in parallel), or queued in order,
    /// one on the wire at a time, as the seeds document (yoagent, kova).
    pub fn multiplexes(self) -> bool {
        self == Profile::Strict
    }

    /// Whether a timed-out request is followed by `notifications/cancelled`.
    pub fn sends_cancelled(self) -> bool {
        self == Profile::Strict
    }

    /// Whether `tools/list` follows `nextCursor`.
    pub fn paginates(self) -> bool {
        self == Profile::Strict
    }

    /// Whether a `tools/list` or `tools/call` that hits a dead transport reconnects once and
    /// retries (kova); a call that may have reached the server is not sent again.
    pub fn reconnects(self) -> bool {
        self == Profile::Kova
    }

    /// Whether `connect()` retries a transient failure once after `connect_retry_delay`.
    pub fn retries_connect(self) -> bool {
        self == Profile::Kova
    }

    /// Whether `list_tools()` is answered from a cache kept until the next reconnect.
    pub fn caches_tools(self) -> bool {
        self == Profile::Kova
    }

    /// The profile's timeouts.
    pub fn timeouts(self) -> Timeouts {
        match self {
            Profile::Strict | Profile::Yoagent => Timeouts::YOAGENT,
            Profile::Kova => Timeouts::KOVA,
        }
    }
}

/// Every time bound of the client. Scenarios set them in milliseconds; unit tests pin the
/// documented defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Bound on the whole handshake (`initialize` and `notifications/initialized`).
    /// yoagent: 60 s; kova: the request timeout (30 s).
    pub handshake: Option<Duration>,
    /// Bound on one tool call over stdio, counted from when it is sent. yoagent: 5 min;
    /// kova: 30 s. `None` is unbounded.
    pub call: Option<Duration>,
    /// Bound on `tools/list` and other non-call requests over stdio. yoagent: the call
    /// bound; kova: 30 s.
    pub list: Option<Duration>,
    /// HTTP idle read timeout, reset on every read. yoagent: 120 s.
    pub idle_read: Duration,
    /// The pause before `connect()` retries a transient failure (kova: 500 ms).
    pub connect_retry_delay: Duration,
    /// How long, once a server's exit is seen, the client waits for the rest of its stderr
    /// before the exit text settles (at most 500 ms by the rules).
    pub exit_settle: Duration,
}

impl Timeouts {
    /// yoagent's (and strict's) documented bounds.
    pub const YOAGENT: Timeouts = Timeouts {
        handshake: Some(Duration::from_secs(60)),
        call: Some(Duration::from_secs(5 * 60)),
        list: Some(Duration::from_secs(5 * 60)),
        idle_read: Duration::from_secs(120),
        connect_retry_delay: Duration::from_millis(500),
        exit_settle: Duration::from_millis(200),
    };

    /// kova's documented bounds: 30 s per request, every request.
    pub const KOVA: Timeouts = Timeouts {
        handshake: Some(Duration::from_secs(30)),
        call: Some(Duration::from_secs(30)),
        list: Some(Duration::from_secs(30)),
        idle_read: Duration::from_secs(30),
        connect_retry_delay: Duration::from_millis(500),
        exit_settle: Duration::from_millis(200),
    };
}

/// Faults a test can switch on to prove a scenario catches a broken client, and faults the
/// wire cannot cause. For conformance tests only: a real caller leaves this empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestHooks {
    /// Client rule switches turned off (the client then breaks that rule).
    pub broken: Vec<Breakage>,
    /// Make waiting on the child fail, as for a child that cannot be waited on.
    pub unwaitable_child: bool,
}

/// A rule the reference client can be told to break, for proving scenarios fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Breakage {
    /// Do not answer a server `ping`.
    NoPingAnswer,
    /// Do not decline server requests (leave them unanswered).
    NoDecline,
    /// Treat a non-JSON stdout line as a fatal protocol error.
    BannerFatal,
    /// Accept a response carrying any id as the answer to the current request.
    AnyIdAccepted,
    /// `close()` kills only the command, not its process group.
    NoGroupKillOnClose,
    /// Dropping the client kills only the command, not its process group.
    NoGroupKillOnDrop,
    /// A command seen to exit on its own does not take its process group with it.
    NoGroupKillOnExit,
    /// A command whose output closed (or that cannot be waited on) while it lives on is left
    /// running.
    NoKillOnOutputClosed,
    /// Start the call timeout when the call is queued rather than when it is sent.
    TimeoutIncludesQueue,
    /// Keep the first KB of stderr instead of the last.
    StderrHeadKept,
    /// Do not count `notifications/tools/list_changed`.
    NoListChangedCount,
    /// kova: retry a `tools/call` after a reconnect even when the server may have received it.
    RetryDeliveredCalls,
    /// kova: do not cache `tools/list`.
    NoToolsCache,
    /// kova: reconnect and retry on any error, a JSON-RPC error or a timeout included.
    RetryAnyError,
    /// HTTP: quote a JSON-RPC error's message as sent, secrets and URL keys included.
    NoJsonRpcErrorScrub,
    /// HTTP: quote an error status's body without hiding the header values and tokens sent.
    NoStatusBodyScrub,
    /// Answer a server `ping` with a non-empty result.
    PingAnswerNotEmpty,
    /// Send `notifications/cancelled` with a `requestId` of null instead of the timed-out id.
    CancelledWithoutRequestId,
    /// Report a `tools/list` result that is not a list as a transport error.
    InvalidResultAsTransport,
    /// The tool source logs the withdrawal of an exited server's tools at every turn.
    WithdrawalLoggedEachTurn,
    /// HTTP: offer the latest protocol revision in `initialize` whatever the profile.
    HttpOffersLatest,
    /// HTTP: the same-origin redirect check compares scheme and host, not the port.
    PortBlindOrigin,
    /// HTTP: the token provider is asked once at connect and its token reused.
    TokenCachedAtConnect,
    /// stdio: the handshake bound restarts on every line the server writes.
    HandshakeTimerRestarts,
    /// A per-call timeout is ignored: the client's own call bound applies.
    PerCallTimeoutIgnored,
    /// HTTP (kova): `tools/list` is bounded by the idle read timeout only.
    NoListBoundOverHttp,
    /// HTTP: a timed-out call waits for the server to answer its `notifications/cancelled`.
    CancelledAwaited,
    /// 2026-07-28: a server that does not know `server/discover` is given up on instead of
    /// being spoken to with `initialize`.
    NoLegacyFallback,
    /// 2026-07-28: requests go out without `_meta`.
    NoRequestMeta,
    /// 2026-07-28: a recognized modern error to the probe (-32020, -32021) is taken for an
    /// older server's, and the client falls back to `initialize`.
    FallbackOnModernError,
    /// 2026-07-28 over HTTP: a request whose response stream broke is re-issued with the
    /// same id.
    ReissueSameId,
    /// 2026-07-28 over HTTP: a `tools/call` whose response stream broke is re-issued too.
    ReissueCalls,
    /// stdio: a call's bound counts from when its request is written whole, so a write
    /// blocked by a server that does not read is unbounded.
    WriteUnbounded,
    /// stdio: the rest of a line whose write was cut short is forgotten (half a line stays
    /// on the server's input, joined to the next message).
    CutLineForgotten,
    /// Legacy HTTP+SSE: the stream reader POSTs its answer to a server request itself and
    /// waits for it, so responses behind it wait for that POST's acknowledgement.
    AnswerInline,
    /// Legacy HTTP+SSE: the stream reader waits for room in the full queue of answers
    /// instead of dropping the answer, so a flood of server requests stalls the stream.
    AnswerQueueWaits,
    /// 2026-07-28 over HTTP: a request whose response timed out is re-issued as if its
    /// stream had broken.
    ReissueTimedOut,
    /// A timed-out call's `notifications/cancelled` names the request sent last (the id
    /// counter's latest value), not the call that timed out.
    CancelsLatestRequest,
    /// Legacy HTTP+SSE: the task POSTing answers to server requests ends after its first
    /// answer, so later server requests on the stream go unanswered.
    OneAnswerPosted,
    /// 2026-07-28: a `server/discover` answer is taken to mean the client's newest stateless
    /// revision, whatever its `supportedVersions` lists.
    DiscoverVersionsIgnored,
    /// Streamable HTTP: POSTs accept `application/json` only, not `text/event-stream`.
    AcceptJsonOnly,
    /// Streamable HTTP: the session id is captured but never sent back.
    SessionIdNotSent,
    /// Streamable HTTP: `MCP-Protocol-Version` goes on requests only, not on notifications.
    VersionHeaderOnRequestsOnly,
    /// Streamable HTTP: the session's `DELETE` on close leaves out `MCP-Protocol-Version`.
    DeleteWithoutVersionHeader,
    /// Streamable HTTP: `close()` forgets the session without a `DELETE`.
    NoSessionDelete,
    /// 2026-07-28 over HTTP: a name is base64-encoded in `Mcp-Name` only when it is not
    /// ASCII; an ASCII name goes as is, spaces at its ends and control characters included.
    NameEncodedOnlyNonAscii,
    /// stdio: a response's id must be written as the request's was (`2.0` does not answer
    /// `2`): ids compared as JSON values, not as numbers.
    IdsComparedAsWritten,
    /// stdio: a call's timeout is reported as a transport error, not a timeout.
    TimeoutAsTransport,
    /// The handshake ends without `notifications/initialized`.
    NoInitializedNotification,
    /// The handshake goes on whatever protocol version the server answers.
    AnyVersionAccepted,
    /// A JSON-RPC error answer is reported as a protocol error, its code lost.
    RpcErrorAsProtocol,
    /// The server's `initialize` result is kept as its `serverInfo` alone, capabilities lost.
    ServerInfoOnly,
    /// stdio: a notification arriving while a call waits ends that call with a protocol error
    /// (the next message taken for its response).
    NotificationFailsCall,
    /// A prefixed tool adapter calls the server by the name the model sees (`prefix__name`),
    /// not the tool's original name.
    PrefixedNameCalled,
    /// HTTP: an error status is reported as a transport error, its status lost.
    StatusAsTransport,
    /// HTTP: the redirect limit is off by one: the 10th hop is refused.
    RedirectLimitOffByOne,
    /// The tool adapter ignores `isError`: a failed tool's content is output.
    IsErrorIgnored,
    /// 2026-07-28: a result without `resultType` is refused instead of taken as complete.
    ResultTypeRequired,
    /// HTTP: a 401 is reported as is, without asking the token provider for a fresh token.
    NoRefreshOn401,
    /// Streamable HTTP: a 404 on a session reports it expired but keeps sending its id.
    ExpiredSessionKept,
    /// HTTP: a 301, 302 or 303 answering a POST is followed (a 303 as a GET, the others
    /// re-POSTing the body) instead of refused with a clear error.
    PostResentOnAnyRedirect,
    /// The process group is ended with SIGTERM, so a descendant that ignores it lives on.
    GroupTerminatedPolitely,
    /// Authorization: the challenge's `resource_metadata` is ignored (the well-known URLs
    /// are tried instead).
    ChallengeMetadataIgnored,
    /// Authorization: the path-aware well-known metadata URL is skipped (the root only).
    PrmPathAwareSkipped,
    /// Authorization: the authorization server's metadata is looked for at the RFC 8414
    /// URL only, not at the OpenID Connect discovery URLs.
    OAuthMetadataOnly,
    /// Authorization: a step-up asks for the challenge's scopes alone, dropping the ones
    /// asked for before.
    StepUpScopesReplaced,
    /// Authorization: a `403 insufficient_scope` is the answer, no step-up flow.
    NoStepUp,
    /// Authorization: the step-up flow is retried for as long as the server answers
    /// `403 insufficient_scope` (up to five times, so a test ends).
    StepUpUnlimited,
    /// Authorization: a confidential client authenticates with `client_secret_basic` even
    /// where the token endpoint advertises `client_secret_post` alone.
    SecretAlwaysBasic,
    /// Authorization: the authorization response's `iss` (RFC 9207) is not checked.
    IssUnchecked,
    /// Authorization: the authorization response's `iss` is compared with the issuer after
    /// normalization (a trailing slash ignored).
    IssNormalized,
    /// Authorization: a dynamically registered client is used at whatever authorization
    /// server comes next, not registered again at a new issuer.
    RegistrationReused,
    /// Authorization: the client metadata document's URL is not used as the client id; the
    /// client registers dynamically instead.
    MetadataDocumentIgnored,
    /// Authorization: the secret a dynamic registration issued is dropped, and the client
    /// authenticates at the token endpoint as a public one.
    RegistrationSecretDropped,
    /// Authorization: a refused dynamic registration is carried on from, with an empty
    /// client id.
    RegistrationRefusalIgnored,
    /// Authorization: dynamic client registration leaves out `application_type`.
    NoApplicationType,
    /// Authorization: an error in the authorization response is reported before its `iss`
    /// is checked.
    ErrorActedBeforeIss,
    /// Authorization: a client set for the client-credentials grant runs the
    /// authorization-code flow instead.
    ClientCredentialsIgnored,
    /// Authorization: the first `private_key_jwt` assertion is sent again in every later
    /// token request (one `jti`, a replay the authorization server may refuse).
    AssertionReused,
    /// Authorization: the `private_key_jwt` assertion's `aud` is the MCP server's URL, not
    /// the authorization server's issuer.
    AssertionAudienceResource,
    /// Authorization: the redirect's `state` is not compared with the one sent.
    StateUnchecked,
    /// Authorization: a `401` to a token held with a refresh token runs the whole flow
    /// again, the refresh token unused.
    NoRefresh,
    /// Authorization: a refresh token issued by a refresh is dropped, and the one it
    /// replaced kept.
    RotationIgnored,
    /// Authorization: `offline_access` is asked for whatever the authorization server's
    /// `scopes_supported` lists.
    OfflineAccessAlways,
    /// Authorization, 2025-03-26: without Protected Resource Metadata, the default endpoints
    /// are used at once, the metadata at the MCP server's origin not looked for.
    LegacyMetadataSkipped,
    /// Authorization, 2025-03-26: the metadata discovery requests carry no
    /// `MCP-Protocol-Version`.
    NoDiscoveryVersionHeader,
    /// Authorization, 2025-03-26: an authorization server without metadata is given up on,
    /// its default endpoints not tried.
    NoDefaultEndpoints,
    /// Authorization: the Protected Resource Metadata is used whatever `resource` it names.
    PrmResourceUnchecked,
    /// Authorization: the authorization server metadata is used whatever `issuer` it names.
    IssuerUnchecked,
    /// Authorization: an authorization server without `S256` in
    /// `code_challenge_methods_supported` is used anyway.
    PkceSupportUnchecked,
    /// Authorization: no PKCE (no `code_challenge`, no `code_verifier`).
    NoPkce,
    /// Authorization: no `resource` in the authorization and token requests.
    NoResourceParameter,
    /// Authorization: the challenge's `scope` is ignored.
    ChallengeScopeIgnored,
    /// Authorization: `scopes_supported` is ignored when the challenge has no `scope`.
    ScopesSupportedIgnored,
    /// Authorization: the token also goes in the query string (`access_token=`).
    TokenInQuery,
    /// Authorization: a refused token request's body is quoted whole, unredacted.
    TokenErrorQuoted,
    /// Authorization: the stored access token goes along to the authorization server's
    /// metadata endpoint.
    BearerToAuthorizationServer,
    /// The strict profile's `tools/list` reads the first page only, its `nextCursor` unread.
    FirstPageOnly,
    /// `tools/list` is cached in every profile, so a `list_changed` is counted but the next
    /// listing answers from the cache.
    ToolsCachedEverywhere,
    /// kova: a list or call that hits a dead transport fails at once, no reconnect.
    NoAutoReconnect,
    /// `reconnect()` opens a new connection but keeps the tools cache of the old one.
    ReconnectKeepsCache,
    /// kova: a transient failure to connect is not retried.
    NoConnectRetry,
    /// HTTP: `exited()` reads "was closed" once the client is closed.
    HttpExitedAfterClose,
    /// stdio: the server gets the configured variables alone, not the inherited environment.
    EnvReplaced,
    /// stdio: the server's stderr is piped but never read.
    StderrNotDrained,
    /// Calls queue behind each other in every profile: one request in flight at a time.
    CallsQueued,
    /// A call's timeout error does not say the server may still carry the call out.
    TimeoutWithoutMayHaveRun,
    /// HTTP: `Authorization` and `Cookie` go along on a redirect to another host.
    CredentialsKeptOnRedirect,
    /// HTTP: `Redirects::None` is not looked at: redirects are followed (as with
    /// `Redirects::Any`).
    RedirectsNoneIgnored,
    /// HTTP: a followed 307 or 308 re-sends the request without its body.
    BodyDroppedOnRedirect,
    /// HTTP: a refused redirect names the Location as given, path and query included.
    RedirectNamesFullUrl,
    /// HTTP: a 403 asks the token provider for a fresh token and retries, as a 401 does.
    ForbiddenRefreshed,
    /// HTTP: the caller's headers go on POSTs only, not on the session's `DELETE`.
    CustomHeadersOnPostsOnly,
    /// Streamable HTTP: only `202 Accepted` acknowledges a notification; a 204 is an error.
    OnlyAcceptedAcknowledges,
    /// Streamable HTTP: any 2xx answering a notification is success, an empty 200 included.
    EmptyNotificationReplyAccepted,
    /// Streamable HTTP: a notification frame ahead of the response ends the call with a
    /// protocol error.
    SseNotificationFailsCall,
    /// Streamable HTTP (strict): a server request on a call's stream is left unanswered.
    ServerRequestIgnoredOverHttp,
    /// The tool adapter offers the model a tool without its description.
    DescriptionDropped,
    /// The tool adapter hands the model a result's content as raw JSON, payloads and all.
    RawContentToModel,
    /// A tool source whose listing failed offers no tools until the next good listing.
    FailedListingClears,
    /// A tool source over a transport that cannot report notifications logs no warning.
    NoNotifyWarning,
    /// yoagent and kova probe `server/discover` too when 2026-07-28 is on offer.
    SeedsProbeDiscover,
    /// 2026-07-28: an unsupported-version error (-32022) to the probe is reported as the
    /// JSON-RPC error it came as, the versions on both sides left unsaid.
    UnsupportedVersionAsRpc,
    /// 2026-07-28: an `input_required` answer to a method that may not get one is taken as
    /// its complete result.
    InputRequiredTakenAsComplete,
    /// 2026-07-28 over HTTP: a session id the server still sends is captured and replayed.
    SessionCapturedWhenStateless,
    /// `initialize` goes without `capabilities` when the client has none to declare.
    InitializeWithoutCapabilities,
    /// A failed write of `notifications/initialized` is ignored: the connect succeeds.
    InitializedFailureIgnored,
    /// stdio: no server process id is named.
    PidNotNamed,
    /// HTTP: an SSE response is read to the end of its stream before the call returns.
    StreamReadToEnd,
    /// HTTP: the idle read timeout counts from the start of the response, not from the last
    /// read.
    IdleNotReset,
    /// A client-wide call bound of `None` falls back to the listing bound.
    UnboundedCallFallsBack,
    /// yoagent over stdio: the server's output is read at all times, not only during a call.
    ReadsBetweenCalls,
    /// HTTP: an SSE stream's lines end at LF only; a CR is kept as part of the line.
    SseCrKept,
    /// stdio: a call dropped while it waits (its run cancelled) leaves the connection
    /// unusable: the next call fails.
    CancelPoisons,
    /// stdio: `exited()` gives the exit status without the last of stderr.
    ExitedWithoutStderr,
    /// stdio: a server that cannot be waited on is taken as still running.
    UnwaitableTakenAsRunning,
    /// stdio: a notification the caller sends (not the handshake's) goes out with an `id`
    /// (0), as a request whose answer nobody waits for.
    NotificationWithId,
    /// stdio: `exited()` waits (up to 300 ms) for the calls in flight to end, as one that
    /// shares the connection's lock with them does.
    ExitedWaitsForCalls,
    /// HTTP: a plain JSON body of exactly `max_body_bytes` is refused (the cap taken as
    /// exclusive).
    BodyCapExclusive,
    /// Streamable HTTP: the last SSE event id seen is sent back as `Last-Event-ID` on the
    /// next POST, as if the stream were resumed.
    LastEventIdReplayed,
    /// yoagent and kova follow `nextCursor` as strict does.
    EveryProfilePaginates,
    /// HTTP: the idle read timeout bounds the wait for the response head only; the body is
    /// read unbounded.
    IdleHeadOnly,
    /// 2026-07-28: the last `requestState` echoed is kept by the connection and sent with
    /// the next new request too.
    RequestStateCarriedOver,
}

/// How the client is configured.
#[derive(Clone, Debug, Default)]
pub struct ClientConfig {
    /// The profile.
    pub profile: Profile,
    /// The bounds; start from `profile.timeouts()`.
    pub timeouts: Option<Timeouts>,
    /// The client name and version sent in `clientInfo`.
    pub client_name: Option<String>,
    /// Strict: the newest revision offered. `None` (the default) or `2026-07-28`: probe
    /// `server/discover` and speak 2026-07-28 statelessly, falling back to `initialize` at
    /// 2025-11-25 on a server that does not know it; a handshake revision (`2025-11-25`):
    /// the handshake only, no probe. yoagent and kova never probe. `2025-03-26` also keeps
    /// that revision's authorization discovery: without Protected Resource Metadata, the
    /// authorization server's metadata at the MCP server's origin, else its default
    /// endpoints (`/authorize`, `/token`).
    pub revision: Option<String>,
    /// Test-only faults.
    pub hooks: TestHooks,
}

impl ClientConfig {
    /// A configuration for `profile` with its default bounds.
    pub fn new(profile: Profile) -> Self {
        ClientConfig {
            profile,
            ..Default::default()
        }
    }

    /// The bounds in force.
    pub fn timeouts(&self) -> Timeouts {
        self.timeouts.unwrap_or_else(|| self.profile.timeouts())
    }

    /// The stateless revision this client opens with (`server/discover` first), if any:
    /// strict only, unless pinned to a handshake revision.
    pub fn stateless_revision(&self) -> Option<&'static str> {
        let pinned = self
            .revision
            .as_deref()
            .unwrap_or(crate::STATELESS_PROTOCOL_VERSION);
        let offered = crate::STATELESS_PROTOCOL_VERSIONS
            .into_iter()
            .find(|v| *v == pinned);
        offered.filter(|_| {
            self.profile == Profile::Strict
                || self.hooks.broken.contains(&Breakage::SeedsProbeDiscover)
        })
    }
}

/// A stdio server to launch.
#[derive(Clone, Debug, Default)]
pub struct StdioServer {
    /// The command, as given (it appears so in error text).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables, added on top of the inherited environment.
    pub env: Vec<(String, String)>,
    /// Run the server in a process group of its own (Unix): `close()` and drop kill the
    /// whole group, and a SIGINT to the host's group does not reach it.
    pub own_process_group: bool,
    /// The working directory, if not the host's.
    pub cwd: Option<std::path::PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yoagent_bounds_are_the_documented_defaults() {
        let t = Timeouts::YOAGENT;
        assert_eq!(t.handshake, Some(Duration::from_secs(60)));
        assert_eq!(t.call, Some(Duration::from_secs(5 * 60)));
        // A listing is bounded as a call is (no scenario can wait out five minutes).
        assert_eq!(t.list, t.call);
        assert_eq!(t.idle_read, Duration::from_secs(120));
        assert_eq!(t.connect_retry_delay, Duration::from_millis(500));
        assert!(t.exit_settle <= Duration::from_millis(500));
        assert_eq!(Profile::Yoagent.timeouts(), t);
        assert_eq!(Profile::Strict.timeouts(), t);
    }

    #[test]
    fn kova_bounds_every_request_at_30_seconds() {
        let t = Timeouts::KOVA;
        let thirty = Some(Duration::from_secs(30));
        assert_eq!((t.handshake, t.call, t.list), (thirty, thirty, thirty));
        assert_eq!(t.connect_retry_delay, Duration::from_millis(500));
        assert_eq!(Profile::Kova.timeouts(), t);
    }

    #[test]
    fn profiles_offer_their_documented_versions() {
        assert_eq!(Profile::Yoagent.stdio_protocol_version(), "2024-11-05");
        assert_eq!(Profile::Kova.stdio_protocol_version(), "2024-11-05");
        assert_eq!(Profile::Strict.stdio_protocol_version(), "2025-11-25");
        assert!(crate::SUPPORTED_PROTOCOL_VERSIONS.contains(&crate::LATEST_PROTOCOL_VERSION));
        assert_eq!(
            ClientConfig::new(Profile::Strict).stateless_revision(),
            Some("2026-07-28")
        );
        assert_eq!(
            ClientConfig::new(Profile::Yoagent).stateless_revision(),
            None
        );
        assert_eq!(ClientConfig::new(Profile::Kova).stateless_revision(), None);
        let pinned = ClientConfig {
            revision: Some("2025-11-25".into()),
            ..ClientConfig::new(Profile::Strict)
        };
        assert_eq!(
            pinned.stateless_revision(),
            None,
            "a handshake revision pinned: no probe"
        );
        for p in Profile::ALL {
            assert_eq!(Profile::from_name(p.name()), Some(p));
        }
    }
}
