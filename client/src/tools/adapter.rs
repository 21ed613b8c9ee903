//! [`ToolAdapter`]: one MCP tool as a tool a model can call.

use std::sync::Arc;

use serde_json::Value;

use super::content::content_text;
use super::names::exposed_name;
use super::{ToolOutcome, ToolServer};
use crate::{McpClient, McpError, Tool};

/// One tool of a server, exposed under its original name or `prefix__name`, with its
/// description and JSON Schema parameters as listed. Calls go to the server with the
/// original name. Cheap to clone (the server is shared).
#[derive(Debug)]
pub struct ToolAdapter<S: ToolServer = McpClient> {
    server: Arc<S>,
    tool: Tool,
    exposed: String,
}

impl<S: ToolServer> Clone for ToolAdapter<S> {
    fn clone(&self) -> Self {
        ToolAdapter {
            server: Arc::clone(&self.server),
            tool: self.tool.clone(),
            exposed: self.exposed.clone(),
        }
    }
}

impl<S: ToolServer> ToolAdapter<S> {
    /// Adapts `tool` of `server`, exposed as `prefix__name` when a prefix is given.
    pub fn new(server: Arc<S>, tool: Tool, prefix: Option<&str>) -> Self {
        let exposed = exposed_name(prefix, &tool.name);
        ToolAdapter {
            server,
            tool,
            exposed,
        }
    }

    /// The name the model sees: the original, or `prefix__name`.
    pub fn name(&self) -> &str {
        &self.exposed
    }

    /// The name the server is called with.
    pub fn original_name(&self) -> &str {
        &self.tool.name
    }

    /// The description, as listed.
    pub fn description(&self) -> Option<&str> {
        let dropped =
            (self.server.test_hooks().broken).contains(&crate::Breakage::DescriptionDropped);
        self.tool.description.as_deref().filter(|_| !dropped)
    }

    /// The JSON Schema of the arguments, as listed.
    pub fn parameters(&self) -> &Value {
        &self.tool.input_schema
    }

    /// The tool as the server listed it.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// The server the tool belongs to.
    pub fn server(&self) -> &Arc<S> {
        &self.server
    }

    /// Calls the server's tool by its original name, with the client's call bound. Content
    /// becomes text ([`content_text`]); `isError: true` becomes [`ToolOutcome::Failed`] with
    /// the content's text; a failed call becomes [`ToolOutcome::Error`].
    pub async fn call(&self, arguments: Value) -> ToolOutcome {
        let broken = self.server.test_hooks().broken;
        let name = match broken.contains(&crate::Breakage::PrefixedNameCalled) {
            true => &self.exposed,
            false => &self.tool.name,
        };
        let heeds_is_error = !broken.contains(&crate::Breakage::IsErrorIgnored);
        match self.server.call_tool(name, arguments).await {
            Ok(result) if result.is_error && heeds_is_error => {
                ToolOutcome::Failed(content_text(&result.content))
            }
            Ok(result) if broken.contains(&crate::Breakage::RawContentToModel) => {
                ToolOutcome::Output(Value::from(result.content).to_string())
            }
            Ok(result) => ToolOutcome::Output(content_text(&result.content)),
            Err(error) => ToolOutcome::Error(error),
        }
    }
}

/// Lists `server`'s tools and adapts each, exposed as `prefix__name` when a prefix is given.
pub async fn adapters_for<S: ToolServer>(
    server: Arc<S>,
    prefix: Option<&str>,
) -> Result<Vec<ToolAdapter<S>>, McpError> {
    let tools = server.list_tools().await?;
    Ok(tools
        .into_iter()
        .map(|tool| ToolAdapter::new(Arc::clone(&server), tool, prefix))
        .collect())
}
