//! `server.ping`: a `ping` gets an empty result.

use super::session::Rpc;
use crate::outcome::{Failure, Finding};

/// answers `ping` with an empty result.
pub const PING: &str = "server.ping";

/// Sends `ping` and judges the answer (`_meta` is allowed in an empty result).
pub async fn ping(session: &mut impl Rpc) -> Finding {
    let exchange = session.request("ping", None).await;
    let empty = exchange
        .result()
        .and_then(|r| r.as_object())
        .is_some_and(|r| r.keys().all(|k| k == "_meta"));
    if empty {
        return Finding::pass();
    }
    let actual = match (exchange.result(), exchange.error_code()) {
        (Some(result), _) => format!("a result that is not empty: {result}"),
        (None, Some(code)) => format!("an error response ({code})"),
        (None, None) => "no response".into(),
    };
    Finding::Fail(
        Failure::new("a response with result {}", actual)
            .sent(&exchange.sent)
            .reply(&exchange),
    )
}
