//! [`ToolSet`]: several servers' tools in one list, no two with one exposed name.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{ToolAdapter, ToolNameCollision, ToolOutcome, ToolServer};
use crate::McpClient;

/// The tools of several servers, each exposed name offered once.
#[derive(Debug)]
pub struct ToolSet<S: ToolServer = McpClient> {
    /// The adapters, in the order added.
    tools: Vec<ToolAdapter<S>>,
    /// Exposed name → (index in `tools`, the server that offered it).
    index: HashMap<String, (usize, String)>,
}

impl<S: ToolServer> Default for ToolSet<S> {
    fn default() -> Self {
        ToolSet {
            tools: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<S: ToolServer> ToolSet<S> {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the tools of the server called `server`, all or none: a tool whose exposed name
    /// is already offered (by another server, or twice by this one) is refused, naming both
    /// servers.
    pub fn add(
        &mut self,
        server: &str,
        adapters: Vec<ToolAdapter<S>>,
    ) -> Result<(), ToolNameCollision> {
        let mut seen: HashSet<&str> = HashSet::new();
        for adapter in &adapters {
            let name = adapter.name();
            let first = match self.index.get(name) {
                Some((_, first)) => Some(first.as_str()),
                None if seen.contains(name) => Some(server),
                None => None,
            };
            if let Some(first) = first {
                return Err(ToolNameCollision {
                    name: name.to_string(),
                    first: first.to_string(),
                    second: server.to_string(),
                });
            }
            seen.insert(name);
        }
        for adapter in adapters {
            self.index.insert(
                adapter.name().to_string(),
                (self.tools.len(), server.to_string()),
            );
            self.tools.push(adapter);
        }
        Ok(())
    }

    /// Every tool, in the order added.
    pub fn tools(&self) -> &[ToolAdapter<S>] {
        &self.tools
    }

    /// The tool exposed as `name`.
    pub fn get(&self, name: &str) -> Option<&ToolAdapter<S>> {
        self.index.get(name).map(|(i, _)| &self.tools[*i])
    }

    /// The server that offers the tool exposed as `name`.
    pub fn server_of(&self, name: &str) -> Option<&str> {
        self.index.get(name).map(|(_, server)| server.as_str())
    }

    /// Calls the tool exposed as `name`; an unknown name is answered as an unknown tool.
    pub async fn call(&self, name: &str, arguments: Value) -> ToolOutcome {
        match self.get(name) {
            Some(adapter) => adapter.call(arguments).await,
            None => ToolOutcome::unknown_tool(name),
        }
    }
}
