//! Tool-layer steps: a tool source over the connected client, runs and turns, and calls
//! through the adapters, as an agent loop drives them (without a model).

use mcp_refclient::tools::{adapters_for, ToolOutcome, ToolServer, ToolSet, ToolSource};
use mcp_refclient::{CallToolResult, McpClient, McpError, Tool};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::Arc;

/// The connected client as the tool layer sees it: the client's own [`ToolServer`]
/// implementation, every answer delegated to it (so the scenarios test the client, not
/// this wrapper), except that `notifications: false` stands for a transport that cannot
/// report server notifications.
pub(crate) struct ScenarioServer {
    client: Arc<McpClient>,
    notifications: bool,
}

impl ToolServer for ScenarioServer {
    fn list_tools(&self) -> impl Future<Output = Result<Vec<Tool>, McpError>> + Send {
        let client = self.client.clone();
        async move { ToolServer::list_tools(&*client).await }
    }

    fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> impl Future<Output = Result<CallToolResult, McpError>> + Send {
        let client = self.client.clone();
        let name = name.to_string();
        async move { ToolServer::call_tool(&*client, &name, arguments).await }
    }

    fn exited(&self) -> Option<String> {
        ToolServer::exited(&*self.client)
    }

    fn tools_list_changes(&self) -> u64 {
        ToolServer::tools_list_changes(&*self.client)
    }

    fn reports_notifications(&self) -> bool {
        self.notifications && ToolServer::reports_notifications(&*self.client)
    }

    fn test_hooks(&self) -> mcp_refclient::TestHooks {
        ToolServer::test_hooks(&*self.client)
    }
}

/// The tool source a scenario built.
pub(crate) type Source = ToolSource<ScenarioServer>;

/// Builds a tool source over the client.
pub(crate) fn build(
    client: Arc<McpClient>,
    name: &str,
    prefix: Option<&str>,
    notifications: bool,
) -> Source {
    ToolSource::new(
        Arc::new(ScenarioServer {
            client,
            notifications,
        }),
        name,
        prefix,
    )
}

/// The source as built: the server's name and the prefix, as the source keeps them.
pub(crate) fn built(source: &Source) -> Value {
    json!({ "source": source.name(), "prefix": source.prefix() })
}

/// The tools a source offers, as the model would see them (each with the name the server is
/// called with), and whether the server's tools were withdrawn.
pub(crate) fn offered(source: &Source) -> Value {
    let tools: Vec<Value> = source
        .tools()
        .iter()
        .map(|t| {
            json!({
                "name": t.name(),
                "original_name": t.original_name(),
                "description": t.description(),
                "parameters": t.parameters(),
            })
        })
        .collect();
    json!({ "tools": tools, "withdrawn": source.withdrawn() })
}

/// A tool set a scenario built.
pub(crate) type Set = ToolSet<ScenarioServer>;

/// Builds a tool set: the client's tools listed (`adapters_for`) and added once per server,
/// in order. The value: every tool of the set with the server that offers it (`get` and
/// `server_of`), and `refused`: the refusal of an add whose name was taken, if one was.
pub(crate) async fn build_set(
    client: Arc<McpClient>,
    servers: &[crate::scenario::ToolSetServer],
) -> (Set, Value) {
    let server = Arc::new(ScenarioServer {
        client,
        notifications: true,
    });
    let mut set = ToolSet::new();
    let mut refused = None;
    for entry in servers {
        let added = match adapters_for(Arc::clone(&server), entry.prefix.as_deref()).await {
            Ok(adapters) => set.add(&entry.name, adapters).map_err(|e| e.to_string()),
            Err(e) => Err(e.full_text()),
        };
        if let Err(text) = added {
            refused = Some(text);
            break;
        }
    }
    let tools: Vec<Value> = set
        .tools()
        .iter()
        .map(|t| {
            let found = set.get(t.name()).map(|a| a.original_name());
            json!({ "name": t.name(), "server": set.server_of(t.name()), "calls": found })
        })
        .collect();
    let value = match refused {
        Some(text) => json!({ "tools": tools, "refused": text }),
        None => json!({ "tools": tools }),
    };
    (set, value)
}

/// A call through the source, as the agent loop makes it.
pub(crate) async fn call(source: &Source, name: &str, arguments: Value) -> Value {
    outcome_value(&source.call(name, arguments).await)
}

/// An outcome as the model sees it.
pub(crate) fn outcome_value(outcome: &ToolOutcome) -> Value {
    // What the model sees is the outcome's own `is_error()` and `text()`: read through them.
    match outcome {
        ToolOutcome::Error(e) => json!({ "error": e.kind().name(), "text": e.full_text() }),
        _ if outcome.is_error() => json!({ "failed": outcome.text() }),
        _ => json!({ "output": outcome.text() }),
    }
}
