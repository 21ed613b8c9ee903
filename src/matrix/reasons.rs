//! Why a row's runs were not applicable, grouped: each capability or transport the client
//! does not declare, and each document whose profile-tier promises bind another profile.
//! A scenario that needs several undeclared capabilities counts under each of them.

use super::run::{Column, Mark, Matrix};
use crate::verdict::Verdict;
use std::collections::BTreeMap;

/// The groups of one not-applicable reason, as `verdict::applicable` words it
/// (`needs `a`, transport `b` (not declared by …)` from `cut::can_express`; `rule `x` is a
/// profile-tier promise of D, not of …` from `cut::sources`); any other reason is its own
/// group.
pub fn groups_of(reason: &str) -> Vec<String> {
    if let Some(needed) = reason.strip_prefix("needs ") {
        let needed = needed.split(" (not declared by ").next().unwrap_or(needed);
        return needed
            .split(", ")
            .map(|item| format!("needs {item}"))
            .collect();
    }
    if let Some(promise) = reason
        .split_once(" is a profile-tier promise of ")
        .and_then(|(_, rest)| rest.split(", not of ").next())
    {
        return vec![format!("{ANOTHER_PROFILES_PROMISE} ({promise})")];
    }
    vec![reason.to_string()]
}

/// A row's not-applicable runs by group, with their counts.
pub fn of(column: &Column) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for cell in &column.cells {
        if cell.mark != Mark::NotApplicable {
            continue;
        }
        let reason = match cell.result.as_ref().map(|r| &r.verdict) {
            Some(Verdict::NotApplicable { reason }) => reason.as_str(),
            _ => "no reason given",
        };
        for group in groups_of(reason) {
            *counts.entry(group).or_insert(0) += 1;
        }
    }
    counts
}

/// The group every reason of a run that holds another profile's promise falls under starts
/// with this.
const ANOTHER_PROFILES_PROMISE: &str = "another profile's promise";

/// A row's runs not applicable only because they hold another profile's promise: runs that
/// do not bind the client at all, as against the ones it cannot express.
pub fn not_binding(column: &Column) -> usize {
    column
        .cells
        .iter()
        .filter(|cell| cell.mark == Mark::NotApplicable)
        .filter(|cell| match cell.result.as_ref().map(|r| &r.verdict) {
            Some(Verdict::NotApplicable { reason }) => groups_of(reason)
                .iter()
                .all(|g| g.starts_with(ANOTHER_PROFILES_PROMISE)),
            _ => false,
        })
        .count()
}

/// The reason × row table: its head and one line per reason group, the most frequent
/// first; `None` where no row has a run not applicable.
pub fn table(matrix: &Matrix) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let per_row: Vec<BTreeMap<String, usize>> = matrix.columns.iter().map(of).collect();
    let mut totals: BTreeMap<&str, usize> = BTreeMap::new();
    for row in &per_row {
        for (group, n) in row {
            *totals.entry(group).or_insert(0) += n;
        }
    }
    if totals.is_empty() {
        return None;
    }
    let mut order: Vec<(&str, usize)> = totals.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut head = vec!["not applicable: why".to_string()];
    head.extend(matrix.columns.iter().map(|c| c.row.clone()));
    let lines = order
        .into_iter()
        .map(|(group, _)| {
            std::iter::once(group.to_string())
                .chain(per_row.iter().map(|row| {
                    row.get(group)
                        .map_or_else(|| "-".to_string(), usize::to_string)
                }))
                .collect()
        })
        .collect();
    Some((head, lines))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cut::{needs::Needs, Capability, Described, TransportKind};

    #[test]
    fn a_reason_is_grouped_by_each_thing_the_client_lacks_or_by_the_promise_it_holds() {
        let described = Described {
            name: "some-client".into(),
            version: "1.0".into(),
            transports: vec![TransportKind::Stdio],
            capabilities: vec![],
            profile: "strict".into(),
        };
        let needed = Needs {
            transports: vec![TransportKind::LegacySse],
            capabilities: vec![Capability::ConfigurableTimeouts, Capability::Exited],
        };
        let reason = crate::cut::can_express(&described, &needed).unwrap_err();
        assert_eq!(
            groups_of(&reason),
            [
                "needs transport `legacy-sse`",
                "needs `configurable_timeouts`",
                "needs `exited`"
            ]
        );
        let promise = "rule `headers.validated` is a profile-tier promise of yoagent's \
                       documentation, not of the `strict` profile's";
        assert_eq!(
            groups_of(promise),
            ["another profile's promise (yoagent's documentation)"]
        );
        assert_eq!(groups_of("something else"), ["something else"]);
    }
}
