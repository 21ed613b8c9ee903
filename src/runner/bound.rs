//! How long one scenario may run, whatever its client does: every wait of the runner is
//! bounded, so a scenario's wall time (its wait for a place beside the others excluded) is
//! at most the sum of these bounds. A client that hangs fails the step it hangs in, and a
//! third-party client is asked nothing more once it has.

use super::steps;
use crate::cut::driver::pool::{LEFT_BEHIND_BOUND, RESET_BOUND};
use crate::scenario::Scenario;
use std::time::Duration;

/// The runner's own work around the steps, beside the bounded waits: the temp folder, the
/// mock's start and stop, the script and log files, judging.
pub const MARGIN: Duration = Duration::from_secs(5);

/// The longest scenario `scenario` may take with a step guard of `step_guard` (the hello of
/// a driver started for it is bounded by the same guard):
///
/// - the driver's hello, one step guard;
/// - each step, its own guard (its `within_ms` and one second of slack, else the step guard);
/// - the closing drop of a client the steps left connected, one step guard;
/// - the runtime's shutdown, one second;
/// - the wait for the server's processes to go, where the scenario asks
///   ([`super::PROCESS_SETTLE`]);
/// - a reusable driver's `reset` ([`RESET_BOUND`]) and the check that nothing of the
///   scenario outlived it ([`LEFT_BEHIND_BOUND`]);
/// - and [`MARGIN`].
pub fn wall_bound(scenario: &Scenario, step_guard: Duration) -> Duration {
    let steps: Duration = (1..=scenario.client.steps.len())
        .map(|number| steps::step_guard(scenario, number, step_guard))
        .sum();
    let facts = scenario
        .expect
        .processes_gone_asked()
        .map_or(Duration::ZERO, |_| super::PROCESS_SETTLE);
    step_guard
        + steps
        + step_guard
        + steps::RUNTIME_SHUTDOWN
        + facts
        + RESET_BOUND
        + LEFT_BEHIND_BOUND
        + MARGIN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_is_the_sum_of_the_step_guards_and_the_runner_own_waits() {
        let scenario: Scenario = toml::from_str(
            r#"
            rules = ["x"]
            requirement = "r"
            [server]
            steps = [{ handshake = {} }, { hang = {} }]
            [client]
            steps = [{ connect = {} }, { call_tool = { name = "slow" } }, { close = {} }]
            [expect]
            steps = [{ step = 2, error = "timeout", within_ms = 500 }]
            processes_gone = true
            "#,
        )
        .unwrap();
        let guard = Duration::from_millis(300);
        // hello + connect + (500 ms + 1 s slack) + close + closing drop + shutdown + settle
        // + reset + left behind + margin.
        let expected = guard * 4
            + Duration::from_millis(1_500)
            + Duration::from_secs(1)
            + Duration::from_secs(5)
            + Duration::from_secs(5)
            + Duration::from_secs(2)
            + Duration::from_secs(5);
        assert_eq!(wall_bound(&scenario, guard), expected);
    }

    #[test]
    fn a_step_left_unbounded_gets_a_second_per_mib_the_server_writes_in_bulk() {
        let scenario: Scenario = toml::from_str(
            r#"
            rules = ["x"]
            requirement = "r"
            [server]
            steps = [
              { handshake = {} },
              { expect = { method = "tools/call" } },
              { long_line = { bytes = 16777216 } },
              { stderr_flood = { bytes = 4194304 } },
              { reply = {} },
            ]
            [client]
            steps = [{ connect = {} }, { call_tool = { name = "echo" } }, { close = {} }]
            [expect]
            steps = [{ step = 3, within_ms = 500 }]
            "#,
        )
        .unwrap();
        let guard = Duration::from_millis(300);
        // 16 MiB of line and 4 MiB of stderr: 20 s more on each step without a `within_ms`.
        let allowance = Duration::from_secs(20);
        assert_eq!(steps::bulk_allowance(&scenario), allowance);
        assert_eq!(steps::step_guard(&scenario, 2, guard), guard + allowance);
        assert_eq!(
            steps::step_guard(&scenario, 3, guard),
            Duration::from_millis(1_500)
        );
    }
}
