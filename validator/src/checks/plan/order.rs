//! Every check the validator knows, in report order, and findings put in that order.

use super::features;
use super::settings::Found;
use crate::checks::{
    auth, capabilities, http, initialize, jsonrpc, lifecycle, ping, requests, schema, stateless,
    stdio, tools,
};

/// The checks before the feature checks, in report order.
const BEFORE_FEATURES: &[&str] = &[
    initialize::RESULT,
    initialize::NEGOTIATES,
    schema::VALID,
    ping::PING,
    tools::LIST,
    tools::UNKNOWN,
    jsonrpc::UNKNOWN_METHOD,
    jsonrpc::PARSE_ERROR,
    jsonrpc::NOTIFICATION_SILENT,
    capabilities::HONEST,
    stdio::CLEAN_STDOUT,
    stdio::EXITS_ON_CLOSE,
    http::NOTIFICATION_202,
    http::ACCEPT_REQUIRED,
    http::SESSION_ID_ASCII,
    http::UNKNOWN_SESSION_404,
    http::MISSING_SESSION_400,
    http::DELETE,
    http::PROTOCOL_VERSION_HEADER,
    http::ORIGIN,
    http::GET_STREAM,
    http::BATCH,
    http::SSE_EVENT_IDS,
    http::SSE_RESUME,
    http::SSE_PRIMING,
    http::SSE_RETRY,
    auth::CHALLENGE,
    auth::RESOURCE_METADATA,
    auth::SERVER_METADATA,
    auth::PKCE_S256,
    auth::GRANT,
    auth::INVALID_TOKEN,
    auth::TOKEN_NOT_IN_QUERY,
    auth::AUDIENCE,
    auth::INSUFFICIENT_SCOPE,
    stateless::DISCOVER,
    stateless::META_REQUIRED,
    stateless::UNSUPPORTED_VERSION,
    stateless::RESULT_TYPE,
    stateless::CACHEABLE,
    stateless::SERVER_INFO,
    stateless::UNREQUESTED_LOG,
    stateless::LISTEN_ACK,
    stateless::RESOURCE_NOT_FOUND,
    stateless::HEADER_MISMATCH,
    lifecycle::BEFORE_INITIALIZE,
];

/// Every check the validator knows, in report order: those above, the feature checks of a
/// shared session ([`features::SESSION_CHECKS`]), then those of the session that declares
/// client capabilities ([`requests::CHECKS`]).
pub const ALL: &[&str] = &concat::<
    { BEFORE_FEATURES.len() + features::SESSION_CHECKS.len() + requests::CHECKS.len() },
>(&[BEFORE_FEATURES, features::SESSION_CHECKS, requests::CHECKS]);

/// The lists one after the other, in a constant.
const fn concat<const N: usize>(lists: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut list, mut at, mut i) = (0, 0, 0);
    while list < lists.len() {
        if at < lists[list].len() {
            out[i] = lists[list][at];
            i += 1;
            at += 1;
        } else {
            list += 1;
            at = 0;
        }
    }
    out
}

/// Puts findings in report order: by check, then revision.
pub fn sort(found: &mut [Found]) {
    found.sort_by_key(|f| {
        (
            ALL.iter().position(|id| *id == f.id).unwrap_or(usize::MAX),
            f.revision.clone(),
        )
    });
}
