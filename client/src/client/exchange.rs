//! One request and its result at the connection's revision, and the paged `tools/list`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::error::Failed;
use crate::jsonrpc::ErrorObject;
use crate::stateless::{self as modern, ResultKind};
use crate::tool::{Tool, ToolsPage};
use crate::{Breakage, ClientConfig, McpError};

use super::transport::Connection;

/// More pages than this in one listing is taken for a server looping on its cursor.
const MAX_PAGES: usize = 10_000;

/// Every page of `tools/list` the profile reads.
pub(super) async fn list_all(
    connection: &Connection,
    config: &ClientConfig,
) -> Result<Vec<Tool>, Failed> {
    let transport = &connection.transport;
    let invalid = |text: String| {
        if config
            .hooks
            .broken
            .contains(&Breakage::InvalidResultAsTransport)
        {
            McpError::Transport(text)
        } else {
            McpError::Protocol(text)
        }
    };
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let bound = transport.list_bound(config);
    for _ in 0..MAX_PAGES {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let result = exchange(connection, config, "tools/list", params, bound).await?;
        let page: ToolsPage = serde_json::from_value(result)
            .map_err(|e| invalid(format!("invalid tools/list result: {e}")))?;
        tools.extend(page.tools);
        match page.next_cursor {
            Some(next)
                if (config.profile.paginates()
                    || config
                        .hooks
                        .broken
                        .contains(&Breakage::EveryProfilePaginates))
                    && !config.hooks.broken.contains(&Breakage::FirstPageOnly) =>
            {
                if cursor.as_deref() == Some(next.as_str()) {
                    return Err(McpError::Protocol(format!(
                        "tools/list returned its own cursor '{next}' again"
                    ))
                    .into());
                }
                cursor = Some(next);
            }
            _ => return Ok(tools),
        }
    }
    Err(McpError::Protocol(format!("tools/list did not end within {MAX_PAGES} pages")).into())
}

/// A JSON-RPC error response as [`rpc`] makes it; under the test switch `RpcErrorAsProtocol`
/// a protocol error, its code lost.
pub(super) fn rpc_error(config: &ClientConfig, e: ErrorObject) -> McpError {
    match config.hooks.broken.contains(&Breakage::RpcErrorAsProtocol) {
        true => McpError::Protocol(e.message),
        false => rpc(Err(e)).unwrap_err(),
    }
}

/// Turns a JSON-RPC error response into [`McpError::JsonRpc`], code and message kept.
pub(super) fn rpc(outcome: Result<Value, ErrorObject>) -> Result<Value, McpError> {
    outcome.map_err(|e| McpError::JsonRpc {
        code: e.code,
        message: e.message,
        data: e.data,
    })
}

/// One request and its result. At 2026-07-28: `_meta` added, `resultType` read (absent is
/// complete), an `input_required` result retried as a new request with `requestState`
/// echoed (bounded rounds), an unsupported-version error made clear.
pub(super) async fn exchange(
    connection: &Connection,
    config: &ClientConfig,
    method: &str,
    params: Option<Value>,
    bound: Option<Duration>,
) -> Result<Value, Failed> {
    let transport = &connection.transport;
    if !connection.stateless {
        let outcome = transport.request_fated(method, params, bound).await?;
        return outcome.map_err(|e| rpc_error(config, e).into());
    }
    let version = connection.protocol_version.as_str();
    let mut params = params.unwrap_or_else(|| json!({}));
    let carries = config
        .hooks
        .broken
        .contains(&Breakage::RequestStateCarriedOver);
    if let (true, Some(p)) = (carries, params.as_object_mut()) {
        if let Some(state) = super::lock(&connection.carried_state).clone() {
            p.entry("requestState").or_insert(state);
        }
    }
    for _ in 0..modern::MAX_INPUT_ROUNDS {
        let sent = match config.hooks.broken.contains(&Breakage::NoRequestMeta) {
            true => params.clone(),
            false => modern::with_meta(Some(params.clone()), version, config),
        };
        let result = match transport.request_fated(method, Some(sent), bound).await? {
            Ok(result) => result,
            Err(e) if e.code.0 == modern::UNSUPPORTED_VERSION => {
                return Err(modern::unsupported_version(version, e.data.as_ref()).into())
            }
            Err(e) => return Err(rpc(Err(e)).unwrap_err().into()),
        };
        if result.get("resultType").is_none()
            && config.hooks.broken.contains(&Breakage::ResultTypeRequired)
        {
            return Err(McpError::Protocol(format!("'{method}' result has no resultType")).into());
        }
        match modern::result_kind(method, &result)? {
            ResultKind::Complete => return Ok(result),
            ResultKind::InputRequired if matches!(method, "tools/call" | "prompts/get" | "resources/read") => {
                params = modern::input_retry(method, &params, &result)?;
                if carries {
                    *super::lock(&connection.carried_state) = params.get("requestState").cloned();
                }
            }
            ResultKind::InputRequired
                if config.hooks.broken.contains(&Breakage::InputRequiredTakenAsComplete) =>
            {
                return Ok(result)
            }
            ResultKind::InputRequired => {
                return Err(McpError::Protocol(format!(
                    "'{method}' was answered input_required, which only tools/call, prompts/get and resources/read may be"
                ))
                .into())
            }
        }
    }
    Err(McpError::Protocol(format!(
        "'{method}' still asked for input after {} rounds; given up",
        modern::MAX_INPUT_ROUNDS
    ))
    .into())
}
