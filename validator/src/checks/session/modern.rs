//! A session speaking 2026-07-28: every request carries the per-request `_meta` (protocol
//! version, client capabilities, client identity), and `ping`, which the revision does not
//! have, is sent as `server/discover`.

use super::peer::{Basics, Peer};
use super::Rpc;
use crate::log::SharedLog;
use crate::schema::STATELESS;
use crate::stdio::Exchange;
use serde_json::{json, Value};
use std::future::Future;
use std::time::Instant;

/// The `_meta` key of the protocol version.
pub const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client capabilities.
pub const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of the client's identity.
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";

/// `params` with the per-request `_meta` of `version` merged in (a `_meta` already there
/// keeps its other keys).
pub fn with_meta(params: Option<Value>, version: &str) -> Value {
    let mut params = match params {
        Some(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert(VERSION_KEY.into(), json!(version));
        meta.insert(CAPABILITIES_KEY.into(), json!({}));
        meta.insert(
            CLIENT_INFO_KEY.into(),
            json!({"name": "mcp-conformance-validate", "version": env!("CARGO_PKG_VERSION")}),
        );
    }
    Value::Object(params)
}

/// A session speaking 2026-07-28: each request gets the per-request `_meta`, and `ping`,
/// which this revision does not have, becomes `server/discover` (the request every server of
/// the revision must answer), so the checks that ask whether the server still serves read
/// the same at every revision.
pub struct Modern<'a, S>(pub &'a mut S);

/// The method sent at 2026-07-28 for `method`: `server/discover` for `ping`.
pub fn modern_method(method: &str) -> &str {
    if method == "ping" {
        "server/discover"
    } else {
        method
    }
}

impl<S: Rpc> Rpc for Modern<'_, S> {
    fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send {
        self.0
            .request(modern_method(method), Some(with_meta(params, STATELESS)))
    }

    fn request_patient(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> impl Future<Output = Exchange> + Send {
        self.0
            .request_patient(modern_method(method), Some(with_meta(params, STATELESS)))
    }

    fn stalled(&self) -> Option<crate::exchange::Unanswered> {
        self.0.stalled()
    }
}

impl<S: Peer> Basics for Modern<'_, S> {
    fn shared_log(&self) -> SharedLog {
        self.0.shared_log()
    }

    fn fresh_id(&mut self) -> i64 {
        self.0.fresh_id()
    }

    fn tell(&mut self, method: &str, params: Option<Value>) -> impl Future<Output = ()> + Send {
        self.0.tell(method, params)
    }
}

impl<S: Peer> Peer for Modern<'_, S> {
    type InFlight = S::InFlight;

    fn start(&mut self, requests: Vec<Value>) -> impl Future<Output = S::InFlight> + Send {
        let requests = requests
            .into_iter()
            .map(|mut message| {
                message["params"] = with_meta(message.get("params").cloned(), STATELESS);
                if let Some(method) = message.get("method").and_then(Value::as_str) {
                    message["method"] = json!(modern_method(method));
                }
                message
            })
            .collect();
        self.0.start(requests)
    }

    fn finish(
        &mut self,
        in_flight: S::InFlight,
        deadline: Instant,
    ) -> impl Future<Output = Vec<Exchange>> + Send {
        self.0.finish(in_flight, deadline)
    }

    fn is_stdio(&self) -> bool {
        self.0.is_stdio()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_meta_is_merged_into_the_params() {
        let params = with_meta(
            Some(json!({"name": "x", "_meta": {"progressToken": 1}})),
            STATELESS,
        );
        assert_eq!(params["name"], "x");
        assert_eq!(params["_meta"]["progressToken"], 1);
        assert_eq!(params["_meta"][VERSION_KEY], STATELESS);
        assert_eq!(params["_meta"][CAPABILITIES_KEY], json!({}));
    }
}
