//! The proofs of the authorization flow's rules (`auth.oauth.*`), beside the table of
//! `proofs.rs`: each switch breaks one step of the reference client's flow and must fail
//! its scenario for that reason.

use mcp_refclient::Breakage;

use super::proofs::{switch, Proof};

/// Every proof of the authorization flow.
pub const AUTH_PROOFS: &[Proof] = &[
    switch(
        &["auth.oauth.challenge-metadata"],
        Breakage::ChallengeMetadataIgnored,
        "auth/prm-from-challenge",
        "step 1",
    ),
    switch(
        &["auth.oauth.prm-well-known-fallback"],
        Breakage::PrmPathAwareSkipped,
        "auth/prm-path-aware-fallback",
        "step 1",
    ),
    switch(
        &["auth.oauth.prm-resource-validated"],
        Breakage::PrmResourceUnchecked,
        "auth/resource-mismatch",
        "http_none",
    ),
    switch(
        &["auth.oauth.legacy-server-metadata"],
        Breakage::LegacyMetadataSkipped,
        "auth/2025-03-26-oauth-metadata-backcompat",
        "step 1",
    ),
    switch(
        &["auth.oauth.legacy-metadata-version-header"],
        Breakage::NoDiscoveryVersionHeader,
        "auth/2025-03-26-metadata-version-header",
        "http_requests",
    ),
    switch(
        &["auth.oauth.legacy-default-endpoints"],
        Breakage::NoDefaultEndpoints,
        "auth/2025-03-26-oauth-endpoint-fallback",
        "step 1",
    ),
    switch(
        &["auth.oauth.server-metadata-order"],
        Breakage::OAuthMetadataOnly,
        "auth/server-metadata-oidc-appended",
        "step 1",
    ),
    switch(
        &["auth.oauth.issuer-validated"],
        Breakage::IssuerUnchecked,
        "auth/metadata-issuer-mismatch",
        "step 1",
    ),
    switch(
        &["auth.oauth.pkce-verified"],
        Breakage::PkceSupportUnchecked,
        "auth/pkce-not-advertised-refused",
        "step 1",
    ),
    switch(
        &["auth.oauth.state-verified"],
        Breakage::StateUnchecked,
        "auth/state-mismatch-discarded",
        "step 1",
    ),
    switch(
        &["auth.oauth.iss-validated"],
        Breakage::IssUnchecked,
        "auth/iss-wrong-issuer",
        "step 1",
    ),
    switch(
        &["auth.oauth.iss-validated-on-errors"],
        Breakage::ErrorActedBeforeIss,
        "auth/iss-wrong-on-error-response",
        "step 1",
    ),
    switch(
        &["auth.oauth.iss-not-normalized"],
        Breakage::IssNormalized,
        "auth/iss-normalized",
        "step 1",
    ),
    switch(
        &["auth.oauth.pkce-s256"],
        Breakage::NoPkce,
        "auth/pkce-s256",
        "step 1",
    ),
    switch(
        &["auth.oauth.resource-parameter"],
        Breakage::NoResourceParameter,
        "auth/resource-in-both-requests",
        "step 1",
    ),
    switch(
        &["auth.oauth.scope-from-challenge"],
        Breakage::ChallengeScopeIgnored,
        "auth/scope-from-www-authenticate",
        "step 1",
    ),
    switch(
        &["auth.oauth.scope-fallback"],
        Breakage::ScopesSupportedIgnored,
        "auth/scope-from-scopes-supported",
        "step 1",
    ),
    switch(
        &["auth.oauth.offline-access"],
        Breakage::OfflineAccessAlways,
        "auth/offline-access-not-supported",
        "http_none",
    ),
    switch(
        &["auth.oauth.step-up"],
        Breakage::NoStepUp,
        "auth/scope-step-up",
        "step 2",
    ),
    switch(
        &["auth.oauth.step-up-scope-union"],
        Breakage::StepUpScopesReplaced,
        "auth/step-up-scope-union",
        "http_requests",
    ),
    switch(
        &["auth.oauth.step-up-limited"],
        Breakage::StepUpUnlimited,
        "auth/scope-retry-limit",
        "step 2",
    ),
    switch(
        &["auth.oauth.refresh-token"],
        Breakage::NoRefresh,
        "auth/refresh-on-expired-token",
        "http_requests",
    ),
    switch(
        &["auth.oauth.refresh-rotation"],
        Breakage::RotationIgnored,
        "auth/refresh-token-rotated",
        "http_requests",
    ),
    switch(
        &["auth.oauth.token-not-in-query"],
        Breakage::TokenInQuery,
        "auth/token-not-in-query",
        "step 1",
    ),
    switch(
        &["auth.oauth.token-only-to-resource"],
        Breakage::BearerToAuthorizationServer,
        "auth/token-not-sent-to-authorization-server",
        "http_none",
    ),
    switch(
        &["auth.oauth.client-id-metadata-document"],
        Breakage::MetadataDocumentIgnored,
        "auth/basic-cimd",
        "http_none",
    ),
    switch(
        &["auth.oauth.dynamic-registration"],
        Breakage::RegistrationSecretDropped,
        "auth/dynamic-client-registration",
        "step 1",
    ),
    switch(
        &["auth.oauth.registration-bound-to-issuer"],
        Breakage::RegistrationReused,
        "auth/authorization-server-migration",
        "http_none",
    ),
    switch(
        &["auth.oauth.registration-application-type"],
        Breakage::NoApplicationType,
        "auth/registration-application-type",
        "step 1",
    ),
    switch(
        &["auth.oauth.registration-refused"],
        Breakage::RegistrationRefusalIgnored,
        "auth/registration-refused",
        "http_none",
    ),
    switch(
        &["auth.oauth.token-endpoint-auth"],
        Breakage::SecretAlwaysBasic,
        "auth/token-endpoint-auth-post",
        "step 1",
    ),
    switch(
        &["auth.oauth.client-credentials"],
        Breakage::ClientCredentialsIgnored,
        "auth/client-credentials-basic",
        "http_none",
    ),
    switch(
        &["auth.oauth.client-credentials"],
        Breakage::AssertionAudienceResource,
        "auth/client-credentials-jwt",
        "step 1",
    ),
    switch(
        &["auth.oauth.client-credentials"],
        Breakage::AssertionReused,
        "auth/client-credentials-jwt-fresh-assertion",
        "step 2",
    ),
    switch(
        &["auth.oauth.credentials-redacted"],
        Breakage::TokenErrorQuoted,
        "auth/token-error-redacted",
        "secret",
    ),
    switch(
        &["auth.oauth.credentials-redacted"],
        Breakage::TokenErrorQuoted,
        "auth/client-assertion-echoed-hidden",
        "secret",
    ),
];
