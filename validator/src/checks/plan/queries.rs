//! The query checks: they only ask questions, so they share one session, one after the
//! other; those that read the same over every transport are asked through [`Rpc`].

use crate::checks::session::{not_asked, Rpc};
use crate::checks::{capabilities, jsonrpc, ping, tools};
use crate::outcome::Finding;
use crate::stdio::Session;
use crate::timeline;
use serde_json::Value;
use std::time::Instant;

/// The checks run in one shared session, one after the other: they only ask questions, so
/// none disturbs the next.
pub const QUERIES: &[&str] = &[
    ping::PING,
    tools::LIST,
    tools::UNKNOWN,
    jsonrpc::UNKNOWN_METHOD,
    jsonrpc::NOTIFICATION_SILENT,
    capabilities::HONEST,
];

/// One query check that reads the same over every transport (the notification check does
/// not: it lives beside each transport's session).
pub async fn query(id: &str, session: &mut impl Rpc, capabilities: &Value) -> Finding {
    match id {
        ping::PING => ping::ping(session).await,
        tools::LIST => tools::list(session, capabilities).await,
        tools::UNKNOWN => tools::unknown(session, capabilities).await,
        jsonrpc::UNKNOWN_METHOD => jsonrpc::unknown_method(session).await,
        capabilities::HONEST => capabilities::honest(session, capabilities).await,
        _ => Finding::HarnessFault {
            reason: format!("{id} is not a query check"),
        },
    }
}

/// The query checks, one after the other, on an initialized session.
pub(crate) async fn queries_on(
    session: &mut Session,
    revision: &str,
    capabilities: &Value,
    queries: &[&'static str],
) -> Vec<(&'static str, String, Finding, u128)> {
    let mut out = Vec::new();
    for id in queries {
        let started = Instant::now();
        timeline::event("check", id);
        let finding = match *id {
            _ if session.stalled.is_some() => {
                not_asked(session.stalled.as_ref().map_or("", |why| why.why.as_str()))
            }
            jsonrpc::NOTIFICATION_SILENT => jsonrpc::notification_silent(session).await,
            other => query(other, session, capabilities).await,
        };
        timeline::event("done", id);
        out.push((
            *id,
            revision.to_string(),
            finding,
            started.elapsed().as_millis(),
        ));
    }
    out
}
