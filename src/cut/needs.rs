//! What a scenario needs from a client: the transport it speaks and the capabilities its
//! configuration and steps use. Read from the scenario, never declared by hand.

use super::{Capability, TransportKind};
use crate::scenario::{ClientStep, Scenario};
use mcp_mock_servers::script::Transport;

/// The transports and capabilities a scenario needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// The transports.
    pub transports: Vec<TransportKind>,
    /// The capabilities, each once, in the order first needed.
    pub capabilities: Vec<Capability>,
}

impl Needs {
    fn add(&mut self, capability: Capability) {
        if !self.capabilities.contains(&capability) {
            self.capabilities.push(capability);
        }
    }
}

/// What `scenario` needs.
pub fn of(scenario: &Scenario) -> Needs {
    let mut needs = Needs::default();
    let client = &scenario.client;
    match scenario.server.transport {
        Transport::Stdio => needs.transports.push(TransportKind::Stdio),
        Transport::Http => needs.transports.push(TransportKind::Http),
        Transport::Https => {
            needs.transports.push(TransportKind::Http);
            needs.add(Capability::TrustedRoots);
        }
        Transport::LegacySse => needs.transports.push(TransportKind::LegacySse),
    }
    let t = &client.timeouts;
    if !t.safety_only
        && [
            t.handshake_ms,
            t.call_ms,
            t.list_ms,
            t.idle_read_ms,
            t.exit_settle_ms,
        ]
        .iter()
        .any(Option::is_some)
    {
        needs.add(Capability::ConfigurableTimeouts);
    }
    match client.revision.as_deref() {
        Some("2026-07-28") => needs.add(Capability::Stateless),
        Some(_) => needs.add(Capability::PinnedRevision),
        None => {}
    }
    if client.own_process_group {
        needs.add(Capability::ProcessGroup);
    }
    if client.faults.unwaitable_child {
        needs.add(Capability::FaultHooks);
    }
    let http = &client.http;
    if !http.headers.is_empty() {
        needs.add(Capability::CustomHeaders);
    }
    if http.redirects.is_some() {
        needs.add(Capability::RedirectPolicy);
    }
    if http.tokens.is_some() {
        needs.add(Capability::TokenProvider);
    }
    if let Some(oauth) = &http.oauth {
        needs.add(Capability::Authorization);
        if !oauth.pre_registered {
            needs.add(Capability::DynamicRegistration);
        }
        if oauth.client_metadata_url.is_some() {
            needs.add(Capability::ClientIdMetadataDocument);
        }
        if oauth.client_credentials {
            needs.add(Capability::ClientCredentials);
        }
        if oauth.private_key_pem.is_some() {
            needs.add(Capability::PrivateKeyJwt);
        }
    }
    if http.max_body_bytes.is_some() {
        needs.add(Capability::BodyCap);
    }
    if !http.trust_mock_certificate && scenario.server.transport == Transport::Https {
        needs.add(Capability::TrustedRoots);
    }
    for step in &client.steps {
        step_needs(step, &mut needs);
    }
    if drop_observed(scenario) {
        needs.add(Capability::Drop);
    }
    needs
}

/// Whether the scenario looks at what a `drop` step ended: a step after it, or the
/// processes expected gone at the end. A drop that only ends a scenario needs no more than
/// forgetting the connection.
fn drop_observed(scenario: &Scenario) -> bool {
    let steps = &scenario.client.steps;
    let Some(last_drop) = steps
        .iter()
        .rposition(|step| matches!(step, ClientStep::Drop(_)))
    else {
        return false;
    };
    let expect = &scenario.expect;
    let gone_expected = expect.tables().any(|t| t.processes_gone == Some(true));
    last_drop + 1 < steps.len() || gone_expected
}

fn step_needs(step: &ClientStep, needs: &mut Needs) {
    match step {
        ClientStep::CallTool(call) if call.timeout_ms.is_some() => {
            needs.add(Capability::CallTimeout)
        }
        ClientStep::Exited(_) | ClientStep::PollExited(_) | ClientStep::WaitExited(_) => {
            needs.add(Capability::Exited)
        }
        ClientStep::ListChanged(_) | ClientStep::WaitListChanged(_) => {
            needs.add(Capability::ListChangedCount)
        }
        ClientStep::Spawn(spawn) => step_needs(&spawn.step, needs),
        ClientStep::Cancel(_) => needs.add(Capability::Cancel),
        ClientStep::InterruptHost(_) => needs.add(Capability::InterruptHost),
        ClientStep::ToolSource(_)
        | ClientStep::BeginRun(_)
        | ClientStep::NextTurn(_)
        | ClientStep::CallAdapter(_)
        | ClientStep::ToolSet(_)
        | ClientStep::CallSet(_) => needs.add(Capability::ToolLayer),
        ClientStep::Reconnect(_) => needs.add(Capability::Reconnect),
        ClientStep::Request(_) | ClientStep::Notify(_) => needs.add(Capability::RawMessages),
        ClientStep::ServerInfo(_) => needs.add(Capability::ServerInfo),
        ClientStep::ServerProcess(_) => needs.add(Capability::ServerPid),
        ClientStep::SessionId(_) => needs.add(Capability::SessionId),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(text: &str) -> Scenario {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_timeout_a_header_and_exited_are_read_from_the_scenario() {
        let s = scenario(
            r#"
            rules = ["x"]
            requirement = "r"
            [server]
            transport = "https"
            steps = []
            [client]
            http = { headers = [["X-Key", "v"]] }
            steps = [{ connect = {} }, { spawn = { name = "a", step = { call_tool = { name = "e", timeout_ms = 5 } } } }, { exited = {} }]
            [expect]
            "#,
        );
        let needs = of(&s);
        assert_eq!(needs.transports, vec![TransportKind::Http]);
        assert_eq!(
            needs.capabilities,
            vec![
                Capability::TrustedRoots,
                Capability::CustomHeaders,
                Capability::CallTimeout,
                Capability::Exited
            ]
        );
    }

    #[rstest::rstest]
    #[case::under_test("{ call_ms = 150 }", true)]
    #[case::a_safety_bound_only("{ call_ms = 5000, safety_only = true }", false)]
    #[case::none("{}", false)]
    fn client_bounds_are_needed_only_where_the_scenario_tests_them(
        #[case] timeouts: &str,
        #[case] needed: bool,
    ) {
        let s = scenario(&format!("rules = [\"x\"]\nrequirement = \"r\"\n[server]\nsteps = []\n[client]\ntimeouts = {timeouts}\nsteps = [{{ connect = {{}} }}]\n[expect]\n"));
        assert_eq!(
            of(&s)
                .capabilities
                .contains(&Capability::ConfigurableTimeouts),
            needed
        );
    }

    #[rstest::rstest]
    #[case::ending_the_scenario("[{ connect = {} }, { drop = {} }]", "", false)]
    #[case::followed_by_a_step(
        "[{ connect = {} }, { drop = {} }, { processes = { gone = true } }]",
        "",
        true
    )]
    #[case::processes_expected_gone(
        "[{ connect = {} }, { drop = {} }]",
        "processes_gone = true",
        true
    )]
    #[case::closed_not_dropped(
        "[{ connect = {} }, { close = {} }, { processes = { gone = true } }]",
        "",
        false
    )]
    fn a_drop_is_needed_where_the_scenario_looks_at_what_it_ended(
        #[case] steps: &str,
        #[case] expect: &str,
        #[case] needed: bool,
    ) {
        let s = scenario(&format!("rules = [\"x\"]\nrequirement = \"r\"\n[server]\nsteps = []\n[client]\nsteps = {steps}\n[expect]\n{expect}\n"));
        assert_eq!(of(&s).capabilities.contains(&Capability::Drop), needed);
    }
}
