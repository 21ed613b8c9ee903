//! The reference client (`mcp-refclient`) as a client under test: one adapter, under each
//! of its three profiles.

use super::{
    Capability, ClientUnderTest, Described, HttpTarget, ScriptedTokens, ServerProbe, Settings,
    StdioTarget, StepError, StepResult, Target, ToolLayerStep, TransportKind,
};
use crate::scenario::{RedirectPolicy, TimeoutOverrides};
use mcp_refclient::{
    BoxFuture, ClientConfig, HeaderList, HttpServer, McpClient, McpError, Profile, Redirects,
    StdioServer, TestHooks, Timeouts, TokenProvider,
};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The reference client under one profile.
pub struct ReferenceClient {
    profile: Profile,
    hooks: TestHooks,
    /// The `mcp-conformance` binary, whose `host-client` command hosts the client for
    /// `interrupt_host`.
    host_program: PathBuf,
    client: RefCell<Option<Arc<McpClient>>>,
    source: RefCell<Option<Arc<super::tool_layer::Source>>>,
    set: RefCell<Option<Arc<super::tool_layer::Set>>>,
}

impl ReferenceClient {
    /// The reference client under `profile`, with test hooks (deliberate breakage), hosted
    /// by `host_program` where a scenario interrupts its host.
    pub fn new(profile: Profile, hooks: TestHooks, host_program: PathBuf) -> Self {
        ReferenceClient {
            profile,
            hooks,
            host_program,
            client: RefCell::new(None),
            source: RefCell::new(None),
            set: RefCell::new(None),
        }
    }

    /// The adapter's description, without an instance.
    pub fn described(profile: Profile) -> Described {
        Described {
            name: "mcp-refclient".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            transports: vec![
                TransportKind::Stdio,
                TransportKind::Http,
                TransportKind::LegacySse,
            ],
            capabilities: ALL_CAPABILITIES.to_vec(),
            profile: profile.name().into(),
        }
    }

    fn connected(&self) -> Result<Arc<McpClient>, StepError> {
        self.client.borrow().clone().ok_or_else(not_run)
    }

    fn config(&self, settings: &Settings) -> ClientConfig {
        let mut config = ClientConfig::new(self.profile);
        config.timeouts = Some(timeouts(self.profile.timeouts(), &settings.timeouts));
        config.hooks = self.hooks.clone();
        config.hooks.unwaitable_child |= settings.faults.unwaitable_child;
        // A scenario at a handshake revision pins it, so the strict client does not probe.
        config.revision = Some(
            settings
                .revision
                .clone()
                .unwrap_or_else(|| mcp_refclient::LATEST_PROTOCOL_VERSION.into()),
        );
        config
    }
}

/// Every capability: the reference client expresses them all.
const ALL_CAPABILITIES: &[Capability] = &[
    Capability::CallTimeout,
    Capability::ConfigurableTimeouts,
    Capability::Cancel,
    Capability::Exited,
    Capability::Reconnect,
    Capability::ListChangedCount,
    Capability::CustomHeaders,
    Capability::TokenProvider,
    Capability::Authorization,
    Capability::DynamicRegistration,
    Capability::ClientIdMetadataDocument,
    Capability::ClientCredentials,
    Capability::PrivateKeyJwt,
    Capability::PinnedRevision,
    Capability::RedirectPolicy,
    Capability::TrustedRoots,
    Capability::BodyCap,
    Capability::ProcessGroup,
    Capability::ToolLayer,
    Capability::InterruptHost,
    Capability::FaultHooks,
    Capability::Stateless,
    Capability::Drop,
    Capability::RawMessages,
    Capability::ServerInfo,
    Capability::ServerPid,
    Capability::SessionId,
];

impl ClientUnderTest for ReferenceClient {
    fn describe(&self) -> Described {
        Self::described(self.profile)
    }

    async fn connect(&self, target: &Target, settings: &Settings) -> StepResult {
        let config = self.config(settings);
        let connected = match target {
            Target::Stdio(stdio) => McpClient::connect_stdio(stdio_server(stdio), config).await,
            Target::Http(http) => match http_server(http) {
                Ok(server) if http.legacy_sse => {
                    McpClient::connect_legacy_sse(server, config).await
                }
                Ok(server) => McpClient::connect_http(server, config).await,
                Err(e) => Err(e),
            },
        }
        .map_err(|e| error(&e))?;
        let value = json!({ "protocolVersion": connected.protocol_version() });
        *self.client.borrow_mut() = Some(Arc::new(connected));
        Ok(value)
    }

    async fn list_tools(&self) -> StepResult {
        let client = self.connected()?;
        client
            .list_tools()
            .await
            .map(|tools| serde_json::to_value(tools).unwrap_or(Value::Null))
            .map_err(|e| error(&e))
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> StepResult {
        let client = self.connected()?;
        client
            .call_tool(name, arguments, timeout)
            .await
            .map(|result| serde_json::to_value(result).unwrap_or(Value::Null))
            .map_err(|e| error(&e))
    }

    async fn close(&self) -> StepResult {
        let client = self.connected()?;
        client
            .close()
            .await
            .map(|()| json!("closed"))
            .map_err(|e| error(&e))
    }

    async fn drop_connection(&self) -> StepResult {
        self.source.borrow_mut().take();
        Ok(json!(self.client.borrow_mut().take().is_some()))
    }

    async fn exited(&self) -> Result<Option<String>, StepError> {
        Ok(self.connected()?.exited())
    }

    async fn list_changed_count(&self) -> Result<u64, StepError> {
        Ok(self.connected()?.tools_list_changes())
    }

    async fn reconnect(&self) -> StepResult {
        let client = self.connected()?;
        client
            .reconnect()
            .await
            .map(|()| json!({ "protocolVersion": client.protocol_version() }))
            .map_err(|e| error(&e))
    }

    async fn request(&self, method: &str, params: Option<Value>) -> StepResult {
        self.connected()?
            .request(method, params)
            .await
            .map_err(|e| error(&e))
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> StepResult {
        self.connected()?
            .notify(method, params)
            .await
            .map(|()| json!("sent"))
            .map_err(|e| error(&e))
    }

    async fn server_info(&self) -> StepResult {
        Ok(self.connected()?.server_info())
    }

    async fn server_pid(&self) -> Result<Option<u32>, StepError> {
        Ok(self.connected()?.server_pid())
    }

    async fn session_id(&self) -> Result<Option<String>, StepError> {
        Ok(self.connected()?.session_id())
    }

    async fn tool_layer(&self, step: ToolLayerStep) -> StepResult {
        use super::tool_layer;
        let source = self.source.borrow().clone();
        match (step, source) {
            (
                ToolLayerStep::Build {
                    name,
                    prefix,
                    reports_notifications,
                },
                _,
            ) => {
                let client = self.connected()?;
                let built =
                    tool_layer::build(client, &name, prefix.as_deref(), reports_notifications);
                let value = tool_layer::built(&built);
                *self.source.borrow_mut() = Some(Arc::new(built));
                Ok(value)
            }
            (ToolLayerStep::Set { servers }, _) => {
                let (set, value) = tool_layer::build_set(self.connected()?, &servers).await;
                *self.set.borrow_mut() = Some(Arc::new(set));
                Ok(value)
            }
            (ToolLayerStep::CallSet { name, arguments }, _) => {
                let set = self.set.borrow().clone();
                match set {
                    Some(set) => Ok(tool_layer::outcome_value(&set.call(&name, arguments).await)),
                    None => Err(StepError {
                        kind: Some("harness".into()),
                        text: "call_set needs a `tool_set` step first".into(),
                    }),
                }
            }
            (_, None) => Err(StepError {
                kind: Some("harness".into()),
                text: "a tool-layer step needs a `tool_source` step first".into(),
            }),
            (ToolLayerStep::BeginRun, Some(source)) => {
                source.begin_run().await;
                Ok(tool_layer::offered(&source))
            }
            (ToolLayerStep::NextTurn, Some(source)) => {
                source.before_model_request().await;
                Ok(tool_layer::offered(&source))
            }
            (ToolLayerStep::Call { name, arguments }, Some(source)) => {
                Ok(tool_layer::call(&source, &name, arguments).await)
            }
        }
    }

    async fn interrupt_host(
        &self,
        target: &Target,
        settings: &Settings,
        server: &ServerProbe,
    ) -> StepResult {
        let Target::Stdio(stdio) = target else {
            return Err(StepError::new("interrupt_host needs a stdio server"));
        };
        let mut command = vec![stdio.command.clone()];
        command.extend(stdio.args.iter().cloned());
        super::host::interrupt_host(super::host::HostPlan {
            program: &self.host_program,
            profile: self.profile.name(),
            revision: self.config(settings).revision.unwrap_or_default(),
            own_process_group: stdio.own_process_group,
            server: command,
            log_path: &server.log_path,
        })
        .await
    }
}

fn stdio_server(target: &StdioTarget) -> StdioServer {
    StdioServer {
        command: target.command.clone(),
        args: target.args.clone(),
        env: target
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        own_process_group: target.own_process_group,
        cwd: None,
    }
}

/// The client's `HttpServer`: headers are validated here, as the caller's `with_header` does.
fn http_server(target: &HttpTarget) -> Result<HttpServer, McpError> {
    let mut headers = HeaderList::new();
    for [name, value] in &target.headers {
        headers = headers.with_header(name, value)?;
    }
    let mut server = HttpServer::new(target.url.clone());
    server.headers = headers;
    server.redirects = match target.redirects {
        None | Some(RedirectPolicy::SameOrigin) => Redirects::SameOrigin,
        Some(RedirectPolicy::None) => Redirects::None,
        Some(RedirectPolicy::Any) => Redirects::Any,
    };
    server.token_provider = target
        .tokens
        .as_ref()
        .map(|t| Arc::new(ScriptedProvider(ScriptedTokens::new(t))) as Arc<dyn TokenProvider>);
    let private_key = match target
        .oauth
        .as_ref()
        .and_then(|c| c.private_key_pem.as_deref())
    {
        Some(pem) => Some(
            mcp_refclient::oauth::ClientKey::from_pem(pem)
                .map_err(|e| McpError::Transport(format!("the OAuth client's private key: {e}")))?,
        ),
        None => None,
    };
    server.oauth = target.oauth.as_ref().map(|client| {
        let authorizer = mcp_refclient::oauth::FollowRedirects {
            redirect_uri: client.redirect_uri.clone(),
        };
        let mut settings = mcp_refclient::oauth::OAuthSettings::new(
            client.client_id.clone(),
            client.redirect_uri.clone(),
            Arc::new(authorizer),
        );
        settings.client_secret = client.client_secret.clone();
        settings.client_metadata_url = client.client_metadata_url.clone();
        settings.client_credentials = client.client_credentials;
        settings.private_key = private_key;
        if !client.pre_registered {
            settings.client_id = None;
            settings.client_secret = None;
            settings.private_key = None;
        }
        settings
    });
    server.root_certificates = target
        .trusted_roots_pem
        .iter()
        .map(|pem| pem.as_bytes().to_vec())
        .collect();
    if let Some(cap) = target.max_body_bytes {
        server.max_body_bytes = cap;
    }
    Ok(server)
}

fn timeouts(mut base: Timeouts, overrides: &TimeoutOverrides) -> Timeouts {
    let bound = |ms: u64| (ms > 0).then(|| Duration::from_millis(ms));
    if let Some(ms) = overrides.handshake_ms {
        base.handshake = bound(ms);
    }
    if let Some(ms) = overrides.call_ms {
        base.call = bound(ms);
    }
    if let Some(ms) = overrides.list_ms {
        base.list = bound(ms);
    }
    if let Some(ms) = overrides.idle_read_ms {
        base.idle_read = Duration::from_millis(ms);
    }
    if let Some(ms) = overrides.exit_settle_ms {
        base.exit_settle = Duration::from_millis(ms);
    }
    base
}

fn error(error: &McpError) -> StepError {
    StepError {
        kind: Some(error.kind().name().into()),
        text: error.full_text(),
    }
}

/// The client's own failure (a connect that failed) left nothing to run a step on.
fn not_run() -> StepError {
    StepError {
        kind: Some("not-run".into()),
        text: "no connected client".into(),
    }
}

/// The scenario's tokens as the reference client's token provider (see [`ScriptedTokens`]).
struct ScriptedProvider(ScriptedTokens);

impl TokenProvider for ScriptedProvider {
    fn token(&self) -> BoxFuture<'_, Result<String, McpError>> {
        let token = self.0.token();
        Box::pin(async move {
            token.ok_or_else(|| McpError::Transport("the token provider has no token left".into()))
        })
    }

    fn refresh(&self) -> BoxFuture<'_, Result<String, McpError>> {
        let token = self.0.refresh();
        Box::pin(async move {
            token.ok_or_else(|| McpError::Transport("the token provider could not refresh".into()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_client_declares_every_capability_a_scenario_can_need() {
        // `reusable` is the driver protocol's, never a scenario's need.
        let schema = serde_json::to_value(schemars::schema_for!(Capability)).unwrap();
        let mut every: Vec<String> = schema["oneOf"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(schema["enum"].as_array().into_iter().flatten())
            .flat_map(|v| {
                v.as_str()
                    .map(|s| vec![s.to_string()])
                    .or_else(|| {
                        v["enum"].as_array().map(|e| {
                            e.iter()
                                .filter_map(|s| s.as_str().map(String::from))
                                .collect()
                        })
                    })
                    .unwrap_or_default()
            })
            .filter(|name| name != "reusable")
            .collect();
        every.sort();
        let mut declared: Vec<String> = ALL_CAPABILITIES.iter().map(|c| c.name()).collect();
        declared.sort();
        assert!(
            every.len() > 10,
            "the schema lists the capabilities: {every:?}"
        );
        assert_eq!(declared, every);
    }
}
