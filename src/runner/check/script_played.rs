//! Whether the mock's script played to its end, and if not, why.

use mcp_mock_servers::describe_step;
use mcp_mock_servers::script::{Script, Step};
use mcp_mock_servers::wire_log::Record;

use crate::probe::received_summary;
use crate::text::cut;

/// Whether step `index` is an `expect` that a message received after it began satisfies. The
/// server logs what it receives before it matches it and begins its next step: a server
/// stopped in between (a close under load) would otherwise look as if it never got it.
fn expect_met(wire: &[Record], script: &Script, index: usize) -> bool {
    let Some(Step::Expect(expect)) = script.steps.get(index) else {
        return false;
    };
    let Some(began) = wire
        .iter()
        .rposition(|r| matches!(r, Record::Step { index: i, .. } if *i == index))
    else {
        return false;
    };
    wire[began..].iter().any(|r| matches!(r, Record::Received { message } if mcp_mock_servers::matcher::matches(expect, message)))
}

/// Why the script did not play to its end, if it did not: a mismatch, input closed early,
/// or steps never reached (a server killed mid-script cannot say so itself).
pub fn script_problem(wire: &[Record], script: &Script) -> Option<String> {
    let reported = wire.iter().find_map(|r| match r {
        Record::Mismatch {
            index,
            expected,
            received,
        } => Some(format!(
            "step {} expected {expected}, received {}",
            index + 1,
            cut(&received.to_string(), 300)
        )),
        Record::Unfinished { expected } => Some(format!(
            "the client closed the server's input while it awaited {expected}"
        )),
        _ => None,
    });
    if reported.is_some() || !script.relaunch.is_empty() || script.steps.is_empty() {
        return reported;
    }
    if wire.iter().any(|r| matches!(r, Record::Completed {})) {
        return None;
    }
    let reached = wire
        .iter()
        .filter_map(|r| match r {
            Record::Step { index, .. } => Some(*index),
            _ => None,
        })
        .max()
        .map(|index| index + usize::from(expect_met(wire, script, index)));
    let received = received_summary(wire);
    // A server killed while it stalls cannot be blamed for not stalling to the end.
    let last = script
        .steps
        .iter()
        .rposition(|step| !optional_at_end(step))?;
    match reached {
        None => Some(format!(
            "the server never began its script; it received {received:?}"
        )),
        // The last step began, and needs nothing from the client: it played.
        Some(index) if index > last || (index == last && !awaits_input(&script.steps[last])) => {
            None
        }
        Some(index) => {
            let first_unused = if index == last || awaits_input(&script.steps[index]) {
                index
            } else {
                index + 1
            };
            Some(format!(
                "step {} ({}) and {} more never completed; the server received {received:?}",
                first_unused + 1,
                describe_step(&script.steps[first_unused]),
                last - first_unused,
            ))
        }
    }
}

/// Steps that may go unplayed at the end of a script: waiting forever, or deciding to.
fn optional_at_end(step: &Step) -> bool {
    matches!(step, Step::Stall(s) if s.ms.is_none()) || matches!(step, Step::IgnoreStdinClose(_))
}

/// Steps that cannot complete without the client.
fn awaits_input(step: &Step) -> bool {
    matches!(
        step,
        Step::Expect(_)
            | Step::Handshake(_)
            | Step::Discover(_)
            | Step::AwaitStdinClose(_)
            | Step::AwaitClose(_)
    )
}
