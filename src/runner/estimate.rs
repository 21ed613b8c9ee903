//! How long a scenario runs at least, read from its timing values: the runner starts the
//! longest first, so the wall time of a run is not its slowest scenario started last.

use crate::scenario::{ClientStep, Expectations, Scenario};
use mcp_mock_servers::script::Step;

/// A scenario at least this long (by [`least_ms`]) mostly waits: it runs beside the
/// workers rather than taking one of them.
pub const MOSTLY_WAITING_MS: u64 = 500;

/// A scenario's least run time in milliseconds, as its file states it: the longest a step is
/// expected to take (`at_least_ms`), polls (`for_ms`), and the server's timed stalls. An
/// estimate for ordering only; nothing is judged on it. (A bound that ends a stall for good
/// is no estimate: many scenarios set one far longer than anything they wait for.)
pub fn least_ms(scenario: &Scenario) -> u64 {
    let expected = scenario.expect.tables().map(at_least).max().unwrap_or(0);
    let polled: u64 = scenario.client.steps.iter().map(polled_ms).sum();
    let stalled = scenario
        .server
        .launch_steps()
        .map(|steps| steps.iter().map(stall_ms).sum::<u64>())
        .max()
        .unwrap_or(0);
    expected.max(polled).max(stalled)
}

fn at_least(expect: &Expectations) -> u64 {
    expect
        .steps
        .iter()
        .filter_map(|step| step.at_least_ms)
        .max()
        .unwrap_or(0)
}

fn polled_ms(step: &ClientStep) -> u64 {
    match step {
        ClientStep::PollExited(poll) => poll.for_ms,
        ClientStep::Spawn(spawn) => polled_ms(&spawn.step),
        _ => 0,
    }
}

/// What a server's wait without end counts for: nothing a good client waits out, but a
/// client that does not bound its wait hangs there until the runner's guard, so such a
/// scenario starts before those that wait for nothing (a tie-break, not an estimate).
const UNBOUNDED_WAIT_MS: u64 = 1;

fn stall_ms(step: &Step) -> u64 {
    match step {
        Step::Stall(stall) => stall.ms.unwrap_or(UNBOUNDED_WAIT_MS),
        Step::Hang(_) => UNBOUNDED_WAIT_MS,
        _ => 0,
    }
}

/// The order to start `jobs` in: the longest (by `least_ms`) first, ties in the jobs' order.
pub fn longest_first<J>(jobs: &[J], least_ms: impl Fn(&J) -> u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(least_ms(&jobs[i])));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(text: &str) -> Scenario {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn the_least_run_time_is_the_longest_stated_wait() {
        let stalled = scenario(
            r#"
            rules = ["x"]
            requirement = "r"
            [server]
            steps = [{ handshake = {} }, { stall = { ms = 300 } }, { stall = { ms = 400 } }]
            [client]
            steps = [{ connect = {} }, { poll_exited = { every_ms = 20, for_ms = 500 } }]
            [expect]
            steps = [{ step = 1, at_least_ms = 100 }]
            "#,
        );
        assert_eq!(least_ms(&stalled), 700);
        let bounded = scenario(
            r#"
            rules = ["x"]
            requirement = "r"
            [server]
            steps = [{ expect = { method = "initialize" } }, { stall = {} }]
            [client]
            timeouts = { handshake_ms = 1200 }
            steps = [{ connect = {} }]
            [expect]
            steps = [{ step = 1, ok = false }]
            [expect.reference]
            steps = [{ step = 1, at_least_ms = 1150 }]
            "#,
        );
        assert_eq!(least_ms(&bounded), 1150);
        let unbounded = |step: &str| {
            scenario(&format!(
                r#"
                rules = ["x"]
                requirement = "r"
                [server]
                steps = [{{ handshake = {{}} }}, {step}]
                [client]
                steps = [{{ connect = {{}} }}]
                [expect]
                steps = [{{ step = 1, ok = true }}]
                "#
            ))
        };
        assert_eq!(least_ms(&unbounded("{ hang = {} }")), UNBOUNDED_WAIT_MS);
        assert_eq!(least_ms(&unbounded("{ stall = {} }")), UNBOUNDED_WAIT_MS);
        assert_eq!(least_ms(&unbounded("{ reply = {} }")), 0);
    }

    #[test]
    fn the_longest_start_first_and_ties_keep_their_order() {
        assert_eq!(
            longest_first(&[5u64, 900, 5, 1200, 0], |&ms| ms),
            vec![3, 1, 0, 2, 4]
        );
    }
}
