//! [`ToolSource`]: a server whose tools change, followed turn by turn (yoagent's
//! `McpToolSource`).

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use super::{ToolAdapter, ToolOutcome, ToolServer};
use crate::log_targets::CLIENT;
use crate::McpClient;

/// The tools of one server for an agent's runs:
///
/// - [`begin_run`](ToolSource::begin_run) lists them at the start of every run;
/// - [`before_model_request`](ToolSource::before_model_request) lists them again when the
///   server announced `notifications/tools/list_changed` since the last listing;
/// - a listing that fails or times out keeps the last good list (logged at WARN);
/// - a server that exited is seen at the next turn and its tools are withdrawn for good
///   (logged once at WARN, naming the server and its prefix); a later call to one of them is
///   answered as an unknown tool without calling the server;
/// - over a transport that cannot report notifications, building the source logs a warning
///   and the tools are listed once per run.
///
/// Listings are bounded as the client bounds `tools/list` (over stdio, the call timeout).
#[derive(Debug)]
pub struct ToolSource<S: ToolServer = McpClient> {
    server: Arc<S>,
    name: String,
    prefix: Option<String>,
    state: Mutex<State<S>>,
}

/// What a source has seen so far.
#[derive(Debug)]
struct State<S: ToolServer> {
    /// The tools offered: the last good listing, empty once withdrawn.
    tools: Vec<ToolAdapter<S>>,
    /// The server's `list_changed` count when the last listing was sent; `None` before any.
    listed_at: Option<u64>,
    /// Set once the server's exit was seen and its tools withdrawn.
    withdrawn: bool,
}

impl<S: ToolServer> ToolSource<S> {
    /// A source for the server called `name` (for logs), its tools exposed as `prefix__name`
    /// when a prefix is given. Lists nothing yet; logs a warning if the server cannot report
    /// notifications.
    pub fn new(server: Arc<S>, name: impl Into<String>, prefix: Option<&str>) -> Self {
        let source = ToolSource {
            server,
            name: name.into(),
            prefix: prefix.map(str::to_string),
            state: Mutex::new(State {
                tools: Vec::new(),
                listed_at: None,
                withdrawn: false,
            }),
        };
        let quiet = (source.server.test_hooks().broken).contains(&crate::Breakage::NoNotifyWarning);
        if !source.server.reports_notifications() && !quiet {
            tracing::warn!(
                target: CLIENT,
                server = %source.name,
                "MCP server '{}'{} cannot report notifications: a change to its tools is not seen mid-run; they are listed once per run",
                source.name,
                source.prefix_text()
            );
        }
        source
    }

    /// The server's name, as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The prefix its tools are exposed with, if any.
    pub fn prefix(&self) -> Option<&str> {
        self.prefix.as_deref()
    }

    /// The start of a run: withdraws the tools if the server exited, otherwise lists them.
    pub async fn begin_run(&self) {
        if self.withdraw_if_exited() {
            return;
        }
        self.relist().await;
    }

    /// A turn, before each model request: withdraws the tools if the server exited, otherwise
    /// lists them again if the server announced a change since the last listing (never over
    /// a transport that cannot report notifications).
    pub async fn before_model_request(&self) {
        if self.withdraw_if_exited() {
            return;
        }
        let changed = {
            let state = self.state();
            match state.listed_at {
                None => true,
                Some(at) => {
                    self.server.reports_notifications() && self.server.tools_list_changes() > at
                }
            }
        };
        if changed {
            self.relist().await;
        }
    }

    /// The tools offered now, under their exposed names.
    pub fn tools(&self) -> Vec<ToolAdapter<S>> {
        self.state().tools.clone()
    }

    /// Whether the server's exit was seen and its tools withdrawn.
    pub fn withdrawn(&self) -> bool {
        self.state().withdrawn
    }

    /// Calls the tool exposed as `name`. A name not offered now (never listed, or
    /// withdrawn) is answered as an unknown tool without calling the server.
    pub async fn call(&self, name: &str, arguments: Value) -> ToolOutcome {
        let adapter = self
            .state()
            .tools
            .iter()
            .find(|t| t.name() == name)
            .cloned();
        match adapter {
            Some(adapter) => adapter.call(arguments).await,
            None => ToolOutcome::unknown_tool(name),
        }
    }

    /// Lists the tools; a failure keeps the last good list and is logged.
    async fn relist(&self) {
        let count = self.server.tools_list_changes();
        let listing = self.server.list_tools().await;
        let mut state = self.state();
        state.listed_at = Some(count);
        if state.withdrawn {
            return;
        }
        match listing {
            Ok(tools) => {
                state.tools = tools
                    .into_iter()
                    .map(|tool| ToolAdapter::new(Arc::clone(&self.server), tool, self.prefix()))
                    .collect();
            }
            Err(_)
                if (self.server.test_hooks().broken)
                    .contains(&crate::Breakage::FailedListingClears) =>
            {
                state.tools.clear();
            }
            Err(error) => tracing::warn!(
                target: CLIENT,
                server = %self.name,
                "listing the tools of MCP server '{}'{} failed: {}; keeping the last list ({} tools)",
                self.name,
                self.prefix_text(),
                error.full_text(),
                state.tools.len()
            ),
        }
    }

    /// Withdraws the tools, logging it once, if the server has exited. True when withdrawn.
    fn withdraw_if_exited(&self) -> bool {
        let mut state = self.state();
        let again = state.withdrawn
            && self
                .server
                .test_hooks()
                .broken
                .contains(&crate::Breakage::WithdrawalLoggedEachTurn);
        if state.withdrawn && !again {
            return true;
        }
        let Some(why) = self.server.exited() else {
            return false;
        };
        state.withdrawn = true;
        state.tools.clear();
        tracing::warn!(
            target: CLIENT,
            server = %self.name,
            "MCP server '{}'{} stopped ({}); its tools are withdrawn",
            self.name,
            self.prefix_text(),
            why
        );
        true
    }

    /// " (prefix 'p')", or " (no prefix)", for log lines.
    fn prefix_text(&self) -> String {
        match &self.prefix {
            Some(prefix) => format!(" (prefix '{prefix}')"),
            None => " (no prefix)".to_string(),
        }
    }

    /// The state, even if a panic poisoned its lock (it holds no invariant a panic breaks).
    fn state(&self) -> MutexGuard<'_, State<S>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}
