//! kova-sdk 0.10's MCP client (`kova_sdk::mcp`, pinned) as a client under test, under the
//! `kova` profile, written against kova-sdk's and mcp-conformance's public APIs only.
//!
//! What it declares is what kova's documentation ("Connecting MCP Servers") offers: stdio,
//! Streamable HTTP and the legacy HTTP+SSE transport; a per-call timeout
//! (`tools_call_with_timeout`); `reconnect()`; static headers; its one request timeout
//! (`McpClient::connect_with_timeout`) and a bearer-token provider (its `TokenProvider`
//! trait, on Streamable HTTP). kova has no `close()`: a stdio child "is killed on drop", so
//! closing is dropping the client. No timeout, retry or redaction of the adapter's own.

use kova_sdk::error::KovaError;
use kova_sdk::mcp::{McpClient, McpTransport, TokenProvider};
use mcp_conformance::cut::{
    Capability, ClientUnderTest, Described, Settings, StepError, StepResult, Target, TransportKind,
};
use mcp_conformance::scenario::{TimeoutOverrides, Tokens};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// kova-sdk's MCP client under test.
#[derive(Default)]
pub struct Adapter {
    client: RefCell<Option<Rc<McpClient>>>,
}

fn text(error: impl std::fmt::Display) -> StepError {
    StepError::new(error.to_string())
}

impl Adapter {
    fn client(&self) -> Result<Rc<McpClient>, StepError> {
        self.client
            .borrow()
            .clone()
            .ok_or_else(|| StepError::new("not connected"))
    }
}

impl ClientUnderTest for Adapter {
    fn describe(&self) -> Described {
        Described {
            name: "kova-sdk".into(),
            version: "0.10.1".into(),
            transports: vec![
                TransportKind::Stdio,
                TransportKind::Http,
                TransportKind::LegacySse,
            ],
            capabilities: vec![
                Capability::CallTimeout,
                Capability::Reconnect,
                Capability::CustomHeaders,
                Capability::Drop,
                // `McpClient::connect_with_timeout(transport, request_timeout)`: one bound on
                // every request (the handshake, `tools/list`, each `tools/call`).
                Capability::ConfigurableTimeouts,
                // `McpTransport::StreamableHttp { auth: Option<Arc<dyn TokenProvider>> }`:
                // `token()` before each request, `refresh()` once on a 401.
                Capability::TokenProvider,
            ],
            profile: "kova".into(),
        }
    }

    async fn connect(&self, target: &Target, settings: &Settings) -> StepResult {
        let transport = match target {
            Target::Stdio(stdio) => McpTransport::Stdio {
                command: stdio.command.clone(),
                args: stdio.args.clone(),
                env: stdio.env.clone().into_iter().collect(),
            },
            Target::Http(http) => {
                // A name set again replaces its value. kova takes a `HashMap<String, String>`,
                // whose keys differ by case where header names do not: the caller keeps one
                // entry per name (else both would go out, in the map's random order).
                let mut headers: HashMap<String, String> = HashMap::new();
                for [name, value] in &http.headers {
                    headers.retain(|old, _| !old.eq_ignore_ascii_case(name));
                    headers.insert(name.clone(), value.clone());
                }
                if http.legacy_sse {
                    McpTransport::HttpSse {
                        url: http.url.clone(),
                        headers,
                    }
                } else {
                    McpTransport::StreamableHttp {
                        url: http.url.clone(),
                        headers,
                        auth: http.tokens.as_ref().map(|tokens| {
                            Arc::new(ScriptedTokens::new(tokens)) as Arc<dyn TokenProvider>
                        }),
                    }
                }
            }
        };
        let client = match request_timeout(&settings.timeouts) {
            Some(timeout) => McpClient::connect_with_timeout(transport, timeout).await,
            None => McpClient::connect(transport).await,
        }
        .map_err(text)?;
        *self.client.borrow_mut() = Some(Rc::new(client));
        Ok(json!("connected"))
    }

    async fn list_tools(&self) -> StepResult {
        let tools = self.client()?.tools_list().await.map_err(text)?;
        Ok(json!(tools))
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> StepResult {
        let client = self.client()?;
        let (content, is_error) = match timeout {
            None => client.tools_call(name, arguments).await,
            Some(timeout) => {
                client
                    .tools_call_with_timeout(name, arguments, timeout)
                    .await
            }
        }
        .map_err(text)?;
        Ok(json!({ "text": content, "isError": is_error }))
    }

    async fn close(&self) -> StepResult {
        // kova-sdk has no close(): dropping the client kills its stdio child.
        let client = self
            .client
            .borrow_mut()
            .take()
            .ok_or_else(|| StepError::new("not connected"))?;
        drop(client);
        Ok(json!("dropped"))
    }

    async fn drop_connection(&self) -> StepResult {
        Ok(json!(self.client.borrow_mut().take().is_some()))
    }

    async fn reconnect(&self) -> StepResult {
        self.client()?.reconnect().await.map_err(text)?;
        Ok(json!("reconnected"))
    }
}

/// kova's one request timeout from the scenario's bounds: the tightest it sets (0, unbounded,
/// counts as none). kova bounds every request and an HTTP stall with it; it has no exit
/// settle bound. `None`: kova's default (30 s).
fn request_timeout(timeouts: &TimeoutOverrides) -> Option<Duration> {
    [
        timeouts.handshake_ms,
        timeouts.call_ms,
        timeouts.list_ms,
        timeouts.idle_read_ms,
    ]
    .into_iter()
    .flatten()
    .filter(|&ms| ms > 0)
    .min()
    .map(Duration::from_millis)
}

type Answer<'a> = Pin<Box<dyn Future<Output = Result<String, KovaError>> + Send + 'a>>;

/// The scenario's scripted tokens as kova's `TokenProvider`: the first token, then one more
/// per refresh; with `rotate`, every ask gets a token of its own (`<token>-1`, `<token>-2`).
#[derive(Debug)]
struct ScriptedTokens {
    tokens: Vec<String>,
    current: AtomicUsize,
    /// `rotate`: how many times `token()` was asked.
    asks: Option<AtomicUsize>,
}

impl ScriptedTokens {
    fn new(tokens: &Tokens) -> Self {
        let mut all = vec![tokens.token.clone()];
        all.extend(tokens.refreshed.iter().cloned());
        ScriptedTokens {
            tokens: all,
            current: AtomicUsize::new(0),
            asks: tokens.rotate.then(|| AtomicUsize::new(0)),
        }
    }
}

// kova declares the trait with `#[async_trait]`: these are the methods it expands to.
impl TokenProvider for ScriptedTokens {
    fn token<'a, 'b>(&'a self) -> Answer<'b>
    where
        'a: 'b,
        Self: 'b,
    {
        let token = self
            .tokens
            .get(self.current.load(Ordering::SeqCst))
            .cloned();
        let token = match &self.asks {
            Some(asks) => token.map(|t| format!("{t}-{}", asks.fetch_add(1, Ordering::SeqCst) + 1)),
            None => token,
        };
        Box::pin(async move {
            token.ok_or_else(|| KovaError::Mcp("the token provider has no token left".into()))
        })
    }

    fn refresh<'a, 'b>(&'a self) -> Answer<'b>
    where
        'a: 'b,
        Self: 'b,
    {
        let next = self.current.fetch_add(1, Ordering::SeqCst) + 1;
        let token = self.tokens.get(next).cloned();
        Box::pin(async move {
            token.ok_or_else(|| KovaError::Mcp("the token provider could not refresh".into()))
        })
    }
}
