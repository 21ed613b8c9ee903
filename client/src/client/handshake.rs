//! Opening a connection: the bounded handshake, the `server/discover` probe and the fallback
//! to `initialize`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::error::Failed;
use crate::http::legacy::LegacyTransport;
use crate::http::streamable::StreamableTransport;
use crate::stateless::{self as modern, ProbeFailure};
use crate::stdio::{fmt_duration, StdioTransport};
use crate::{Breakage, ClientConfig, McpError, Profile, SUPPORTED_PROTOCOL_VERSIONS};

use super::exchange::rpc;
use super::transport::{Connection, Target, Transport};

/// The `HandshakeTimerRestarts` breakage: `bound` counted afresh from every stdout line.
async fn restarting_timeout<F: std::future::Future>(
    bound: Duration,
    transport: &Transport,
    work: F,
) -> Option<F::Output> {
    let lines = || match transport {
        Transport::Stdio(t) => t.lines_read(),
        _ => 0,
    };
    tokio::pin!(work);
    let mut seen = lines();
    let mut deadline = tokio::time::Instant::now() + bound;
    loop {
        tokio::select! {
            out = &mut work => return Some(out),
            _ = tokio::time::sleep(Duration::from_millis(5)) => {
                if lines() != seen {
                    seen = lines();
                    deadline = tokio::time::Instant::now() + bound;
                }
                if tokio::time::Instant::now() >= deadline {
                    return None;
                }
            }
        }
    }
}

/// Opens a connection to `target`: spawn or connect, then the bounded handshake. On
/// failure whatever was started is stopped.
pub(super) async fn open(
    target: &Target,
    config: &ClientConfig,
    generation: u64,
) -> Result<Connection, Failed> {
    let transport = match target {
        Target::Stdio(server) => Transport::Stdio(StdioTransport::spawn(server, config)?),
        Target::Http(server) => {
            Transport::Http(Box::new(StreamableTransport::new(server, config)?))
        }
        Target::LegacySse(server) => {
            let transport = Transport::LegacySse(LegacyTransport::connect(server, config).await?);
            if config.profile == Profile::Kova {
                let protocol_version = "2024-11-05".to_string();
                return Ok(Connection {
                    transport,
                    protocol_version,
                    stateless: false,
                    server_info: Value::Null,
                    generation,
                    carried_state: Default::default(),
                });
            }
            transport
        }
    };
    let handshake = establish(&transport, config);
    let restarts = config
        .hooks
        .broken
        .contains(&Breakage::HandshakeTimerRestarts);
    let outcome = match config.timeouts().handshake {
        Some(bound) if restarts => match restarting_timeout(bound, &transport, handshake).await {
            Some(outcome) => outcome,
            None => Err(Failed::alive(McpError::Timeout(format!(
                "MCP handshake timed out after {}",
                fmt_duration(bound)
            )))),
        },
        Some(bound) => match tokio::time::timeout(bound, handshake).await {
            Ok(outcome) => outcome,
            Err(_) => Err(Failed::alive(McpError::Timeout(format!(
                "MCP handshake with {} timed out after {}",
                transport.name(),
                fmt_duration(bound)
            )))),
        },
        None => handshake.await,
    };
    match outcome {
        Ok((protocol_version, server_info)) => {
            let stateless = crate::STATELESS_PROTOCOL_VERSIONS.contains(&protocol_version.as_str());
            if let (true, Transport::Http(t)) = (stateless, &transport) {
                // The GET stream's successor: list changes, for a server that announces them.
                if server_info.pointer("/capabilities/tools/listChanged")
                    == Some(&Value::Bool(true))
                {
                    let filter = json!({ "notifications": { "toolsListChanged": true } });
                    t.listen(modern::with_meta(Some(filter), &protocol_version, config));
                }
            }
            let server_info = match config.hooks.broken.contains(&Breakage::ServerInfoOnly) {
                true => json!({ "serverInfo": server_info.get("serverInfo") }),
                false => server_info,
            };
            Ok(Connection {
                transport,
                protocol_version,
                stateless,
                server_info,
                generation,
                carried_state: Default::default(),
            })
        }
        Err(failed) => {
            transport.close().await;
            Err(failed)
        }
    }
}

/// How long the `server/discover` probe waits before taking a silent server for an older
/// one (spec: "the probe returns a non-modern error or times out"): half the handshake
/// bound, at most this.
const PROBE_BOUND: Duration = Duration::from_secs(10);

/// Opens the connection: strict probes `server/discover` and speaks 2026-07-28 with a
/// server that lists it, falling back to `initialize` on one that does not know the probe;
/// otherwise (and on the fallback) the handshake.
async fn establish(
    transport: &Transport,
    config: &ClientConfig,
) -> Result<(String, Value), Failed> {
    let Some(offered) = config
        .stateless_revision()
        .filter(|_| !matches!(transport, Transport::LegacySse(_)))
    else {
        return handshake(transport, config, None).await;
    };
    transport.stateless(Some(offered));
    let params = match config.hooks.broken.contains(&Breakage::NoRequestMeta) {
        true => json!({}),
        false => modern::with_meta(None, offered, config),
    };
    let bound = config
        .timeouts()
        .handshake
        .map_or(PROBE_BOUND, |b| (b / 2).min(PROBE_BOUND));
    let probe = match tokio::time::timeout(
        bound,
        transport.request_fated("server/discover", Some(params), None),
    )
    .await
    {
        Ok(Ok(outcome)) => rpc(outcome),
        // Over HTTP a 4xx (a modern error's JSON-RPC body, or an older server's refusal) fails
        // the request itself; what it says decides below.
        Ok(Err(failed)) => Err(failed.error),
        Err(_) => Err(McpError::Timeout(format!(
            "server/discover not answered within {}",
            fmt_duration(bound)
        ))),
    };
    let failure = match probe {
        Ok(result) => return discovered(transport, config, offered, result).await,
        Err(error) => error,
    };
    if let McpError::JsonRpc { code, data, .. } = &failure {
        if code.0 == modern::UNSUPPORTED_VERSION
            && !config
                .hooks
                .broken
                .contains(&Breakage::UnsupportedVersionAsRpc)
        {
            let legacy = mutual_legacy(data.as_ref().and_then(|d| d.get("supported")));
            return match legacy {
                Some(version) => fall_back(transport, config, &failure, Some(version)).await,
                None => Err(modern::unsupported_version(offered, data.as_ref()).into()),
            };
        }
    }
    match modern::classify_probe_failure(&failure) {
        ProbeFailure::Legacy if !config.hooks.broken.contains(&Breakage::NoLegacyFallback) => {
            fall_back(transport, config, &failure, None).await
        }
        ProbeFailure::Modern
            if config
                .hooks
                .broken
                .contains(&Breakage::FallbackOnModernError) =>
        {
            fall_back(transport, config, &failure, None).await
        }
        ProbeFailure::Legacy | ProbeFailure::Modern | ProbeFailure::Fatal => Err(failure.into()),
    }
}

/// A `server/discover` result: the newest version both speak, statelessly; a server that
/// lists only handshake revisions is spoken to with `initialize`.
async fn discovered(
    transport: &Transport,
    config: &ClientConfig,
    offered: &str,
    result: Value,
) -> Result<(String, Value), Failed> {
    modern::result_kind("server/discover", &result)?;
    let Some(versions) = result.get("supportedVersions").and_then(Value::as_array) else {
        // Not a DiscoverResult: a server that answers any method alike, not a modern one.
        let why =
            McpError::Protocol("the server/discover result has no supportedVersions list".into());
        return fall_back(transport, config, &why, None).await;
    };
    let listed: Vec<&str> = versions.iter().filter_map(Value::as_str).collect();
    let stateless = crate::STATELESS_PROTOCOL_VERSIONS
        .into_iter()
        .filter(|v| *v <= offered)
        .rev()
        .find(|v| {
            listed.contains(v)
                || config
                    .hooks
                    .broken
                    .contains(&Breakage::DiscoverVersionsIgnored)
        });
    if let Some(version) = stateless {
        transport.stateless(Some(version));
        return Ok((version.to_string(), result));
    }
    match mutual_legacy(result.get("supportedVersions")) {
        Some(version) => {
            let why =
                McpError::Protocol(format!("server/discover lists {} only", listed.join(", ")));
            fall_back(transport, config, &why, Some(version)).await
        }
        None => Err(McpError::Protocol(format!(
            "the server supports {}, none of which this client speaks ({}, {})",
            listed
                .iter()
                .map(|v| format!("'{}'", v.escape_debug()))
                .collect::<Vec<_>>()
                .join(", "),
            crate::STATELESS_PROTOCOL_VERSIONS.join(", "),
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        ))
        .into()),
    }
}

/// The newest handshake revision in a server's `supported` list that the client speaks.
fn mutual_legacy(supported: Option<&Value>) -> Option<&'static str> {
    let listed: Vec<&str> = supported?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    SUPPORTED_PROTOCOL_VERSIONS
        .into_iter()
        .rev()
        .find(|v| listed.contains(v))
}

/// The server is taken for an older one (`why`): `initialize` at `version` (the newest
/// handshake revision by default).
async fn fall_back(
    transport: &Transport,
    config: &ClientConfig,
    why: &McpError,
    version: Option<&'static str>,
) -> Result<(String, Value), Failed> {
    tracing::info!(
        target: "mcp_refclient",
        "{} does not speak {} ({}); falling back to initialize",
        transport.name(),
        crate::STATELESS_PROTOCOL_VERSION,
        why.full_text()
    );
    transport.stateless(None);
    handshake(
        transport,
        config,
        Some(version.unwrap_or(crate::LATEST_PROTOCOL_VERSION)),
    )
    .await
}

/// `initialize` (offering `offer`, else the profile's version), the version check, then
/// `notifications/initialized`.
async fn handshake(
    transport: &Transport,
    config: &ClientConfig,
    offer: Option<&str>,
) -> Result<(String, Value), Failed> {
    let mut params = json!({
        "protocolVersion": match transport {
            _ if offer.is_some() => offer.unwrap_or_default(),
            Transport::Http(_) if config.hooks.broken.contains(&Breakage::HttpOffersLatest) => crate::LATEST_PROTOCOL_VERSION,
            _ => transport.offered_version(config.profile),
        },
        "capabilities": {},
        "clientInfo": {
            "name": config.client_name.as_deref().unwrap_or(env!("CARGO_PKG_NAME")),
            "version": env!("CARGO_PKG_VERSION"),
        },
    });
    if config
        .hooks
        .broken
        .contains(&Breakage::InitializeWithoutCapabilities)
    {
        params.as_object_mut().map(|p| p.remove("capabilities"));
    }
    let result = rpc(transport
        .request_fated("initialize", Some(params), None)
        .await?)?;
    let version = match result.get("protocolVersion") {
        Some(Value::String(version)) => version.clone(),
        Some(other) => {
            return Err(McpError::Protocol(format!(
                "initialize result has a protocolVersion that is not a string: {other}"
            ))
            .into())
        }
        None => {
            return Err(
                McpError::Protocol("initialize result has no protocolVersion".into()).into(),
            )
        }
    };
    let accept_any = config.hooks.broken.contains(&Breakage::AnyVersionAccepted);
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&version.as_str()) && !accept_any {
        return Err(McpError::Protocol(format!(
            "server answered protocol version '{version}', which this client does not support ({}); disconnected",
            SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        ))
        .into());
    }
    transport.negotiated(&version);
    if !config
        .hooks
        .broken
        .contains(&Breakage::NoInitializedNotification)
    {
        let sent = transport
            .notify_fated("notifications/initialized", None)
            .await;
        if !config
            .hooks
            .broken
            .contains(&Breakage::InitializedFailureIgnored)
        {
            sent?;
        }
    }
    Ok((version, result))
}
