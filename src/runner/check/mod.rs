//! Checking a scenario's `[expect]` against an outcome.

mod http;
mod meaning;
mod script_played;

use super::outcome::Outcome;
use crate::probe::{received_summary, value_text};
use crate::scenario::{Expectations, StepExpect};
use crate::text::cut;
use mcp_mock_servers::script::Script;
use mcp_mock_servers::wire_log::Record;
use serde::Serialize;
use serde_json::Value;

use http::check_http;
pub use script_played::script_problem;

/// One expectation that did not hold.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Failure {
    /// What was checked (`step 2`, `received`, `logs`).
    pub what: String,
    /// What the scenario expected.
    pub expected: String,
    /// What happened.
    pub actual: String,
    /// The rules it counts against: those of `[expect.by_rule."RULE"]` for an expectation
    /// there, else every rule of the scenario the client is held to (empty until judged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
}

impl Failure {
    /// What was checked, and the rules it counts against: `step 2 (stdio.banner.skipped)`.
    pub fn label(&self) -> String {
        if self.rules.is_empty() {
            self.what.clone()
        } else {
            format!("{} ({})", self.what, self.rules.join(", "))
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: expected {}, got {}",
            self.label(),
            self.expected,
            self.actual
        )
    }
}

/// Every expectation that did not hold (empty: the scenario passed).
pub fn check(expect: &Expectations, script: &Script, outcome: &Outcome) -> Vec<Failure> {
    let mut failures = Vec::new();
    let mut fail = |what: &str, expected: String, actual: String| {
        failures.push(Failure {
            what: what.into(),
            expected,
            actual: outcome.redact(&actual),
            rules: Vec::new(),
        })
    };
    for step in &expect.steps {
        check_step(step, outcome, &mut fail);
    }
    // A step that hangs fails the scenario, whatever the scenario expects of it.
    for step in outcome
        .steps
        .iter()
        .filter(|s| matches!(&s.result, Err(e) if e.kind == super::steps::HUNG))
    {
        let text = step
            .result
            .as_ref()
            .err()
            .map(|e| e.text.clone())
            .unwrap_or_default();
        fail(
            &format!("step {}", step.number),
            "the step to end within its bound".into(),
            text,
        );
    }
    let received = received_summary(&outcome.wire);
    if let Some(sequence) = &expect.received {
        if &received != sequence {
            fail("received", format!("{sequence:?}"), format!("{received:?}"));
        }
    }
    let messages: Vec<&Value> = outcome
        .wire
        .iter()
        .filter_map(|r| match r {
            Record::Received { message } => Some(message),
            _ => None,
        })
        .collect();
    for wanted in &expect.received_includes {
        let wanted = &with_ids(wanted, &messages);
        if !messages.iter().any(|m| contains_subset(m, wanted)) {
            fail(
                "received_includes",
                wanted.to_string(),
                format!("{received:?}"),
            );
        }
    }
    if expect.distinct_request_ids {
        let mut seen = std::collections::HashSet::new();
        for message in messages.iter().filter(|m| m.get("method").is_some()) {
            if let Some(id) = message.get("id").filter(|id| !id.is_null()) {
                if !seen.insert(id.to_string()) {
                    let method = message.get("method").and_then(Value::as_str).unwrap_or("");
                    fail(
                        "distinct_request_ids",
                        "every request with an id of its own".into(),
                        format!("{method} reused id {id}"),
                    );
                }
            }
        }
    }
    for (method, count) in &expect.counts {
        let seen = received.iter().filter(|m| *m == method).count();
        if seen != *count {
            fail(
                &format!("count of `{method}`"),
                count.to_string(),
                seen.to_string(),
            );
        }
    }
    for log in &expect.logs {
        let matching = outcome
            .logs
            .iter()
            .filter(|event| {
                event.level == log.level
                    && log.target.as_ref().is_none_or(|t| &event.target == t)
                    && event.message.contains(&log.contains)
            })
            .count();
        if let Some(count) = log.count.filter(|&count| count != matching && matching > 0) {
            let what = format!(
                "{count} {} event(s) containing {:?}",
                log.level, log.contains
            );
            fail("logs", what, format!("{matching}"));
        }
        if matching == 0 && log.count != Some(0) {
            let seen: Vec<String> = outcome
                .logs
                .iter()
                .filter(|e| e.level == log.level)
                .take(5)
                .map(|e| {
                    let message = cut(&outcome.redact(&e.message), 160);
                    format!("{} {}: {}", e.level, e.target, message)
                })
                .collect();
            fail(
                "logs",
                format!("a {} event containing {:?}", log.level, log.contains),
                format!("{seen:?}"),
            );
        }
    }
    check_given_secrets(outcome, &mut fail);
    for secret in &expect.never_contains {
        if let Some(place) = find_secret(outcome, secret) {
            fail(
                "never_contains",
                format!("no trace of {secret:?}"),
                format!("found in {place}"),
            );
        }
    }
    if let Some(gone) = expect.processes_gone {
        let alive: Vec<String> = outcome
            .processes
            .iter()
            .filter(|p| p.alive_after_steps)
            .map(|p| format!("{} {}", p.role, p.pid))
            .collect();
        if gone && !alive.is_empty() {
            fail(
                "processes",
                "every process gone".into(),
                format!("still alive: {}", alive.join(", ")),
            );
        }
        if !gone && alive.is_empty() {
            fail(
                "processes",
                "some process still alive".into(),
                "all gone".into(),
            );
        }
        if outcome.processes.is_empty() {
            fail(
                "processes",
                "the server to report its processes".into(),
                "none reported".into(),
            );
        }
    }
    if expect.script_completed {
        if let Some(problem) = script_problem(&outcome.wire, script) {
            fail("script", "the script played to its end".into(), problem);
        }
    }
    check_http(expect, outcome, &mut fail);
    if let Some(launches) = expect.launches {
        if outcome.launches() != launches {
            fail(
                "launches",
                launches.to_string(),
                outcome.launches().to_string(),
            );
        }
    }
    failures
}

/// `wanted` with every `"${id:METHOD}"` string replaced by the id of the first received
/// request of that method (left as it is when there is none, so it matches nothing).
fn with_ids(wanted: &Value, messages: &[&Value]) -> Value {
    match wanted {
        Value::String(text) => {
            let method = text
                .strip_prefix("${id:")
                .and_then(|rest| rest.strip_suffix('}'));
            let id = method.and_then(|method| {
                messages
                    .iter()
                    .find(|m| m.get("method").and_then(Value::as_str) == Some(method))?
                    .get("id")
                    .cloned()
            });
            id.unwrap_or_else(|| wanted.clone())
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|item| with_ids(item, messages)).collect())
        }
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), with_ids(v, messages)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn json_of(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn check_step(expect: &StepExpect, outcome: &Outcome, fail: &mut impl FnMut(&str, String, String)) {
    let what = format!("step {}", expect.step);
    let Some(record) = outcome.steps.iter().find(|s| s.number == expect.step) else {
        fail(&what, "the step to run".into(), "it did not run".into());
        return;
    };
    // Redacted before it is cut: a long secret (a client assertion) cut in two is no longer
    // found whole.
    let describe = |r: &Result<Value, super::ErrorRecord>| match r {
        Ok(value) => format!("ok {}", cut(&outcome.redact(&value.to_string()), 300)),
        Err(e) => format!("{} error: {}", e.kind, cut(&outcome.redact(&e.text), 300)),
    };
    if let Some(ok) = expect.ok {
        if record.result.is_ok() != ok {
            fail(
                &what,
                if ok {
                    "success".into()
                } else {
                    "an error".into()
                },
                describe(&record.result),
            );
        }
    }
    if let Some(kind) = &expect.error {
        match &record.result {
            Err(e) if &e.kind == kind => {}
            other => fail(&what, format!("a {kind} error"), describe(other)),
        }
    }
    let text = match &record.result {
        Ok(value) => value_text(value),
        Err(e) => e.text.clone(),
    };
    // Checked as the client wrote it: only what varies run to run is named.
    let text = outcome.normalize(&text);
    for needle in &expect.contains {
        if !text.contains(needle.as_str()) {
            fail(
                &what,
                format!("text containing {needle:?}"),
                describe(&record.result),
            );
        }
    }
    for needle in &expect.lacks {
        if text.contains(needle.as_str()) {
            fail(
                &what,
                format!("text without {needle:?}"),
                describe(&record.result),
            );
        }
    }
    let named = meaning::numbers(&text);
    for number in &expect.numbers {
        if !named.contains(number) {
            fail(
                &what,
                format!("text naming the number {number}"),
                describe(&record.result),
            );
        }
    }
    if let Some(ms) = expect.duration_ms {
        if !meaning::names_duration(&text, ms) {
            fail(
                &what,
                format!("text naming a duration of {ms} ms"),
                describe(&record.result),
            );
        }
    }
    if let Some(wanted) = &expect.value {
        match &record.result {
            Ok(value) if contains_subset(value, wanted) => {}
            other => fail(
                &what,
                format!("a value containing {wanted}"),
                describe(other),
            ),
        }
    }
    if let Some(ms) = expect.within_ms {
        if record.elapsed.as_millis() > u128::from(ms) {
            fail(
                &what,
                format!("done within {ms} ms"),
                format!("took {} ms", record.elapsed.as_millis()),
            );
        }
    }
    if let Some(ms) = expect.at_least_ms {
        if record.elapsed.as_millis() < u128::from(ms) {
            fail(
                &what,
                format!("taking at least {ms} ms"),
                format!("took {} ms", record.elapsed.as_millis()),
            );
        }
    }
    for (field, max) in &expect.value_at_most {
        let value = record.result.as_ref().ok();
        let actual = value
            .and_then(|v| {
                v.get("metrics")
                    .and_then(|m| m.get(field))
                    .or_else(|| v.get(field))
            })
            .and_then(Value::as_f64);
        match actual {
            Some(actual) if actual <= *max => {}
            _ => fail(
                &what,
                format!("`{field}` at most {max}"),
                describe(&record.result),
            ),
        }
    }
}

/// Whether `value` contains `wanted`: objects key by key (an empty object only an empty
/// one: `result = {}` pins an empty result), arrays element-wise, else equal.
pub fn contains_subset(value: &Value, wanted: &Value) -> bool {
    match (value, wanted) {
        (Value::Object(have), Value::Object(want)) if want.is_empty() => have.is_empty(),
        (Value::Object(have), Value::Object(want)) => want
            .iter()
            .all(|(k, w)| have.get(k).is_some_and(|h| contains_subset(h, w))),
        (Value::Array(have), Value::Array(want)) => {
            have.len() == want.len() && have.iter().zip(want).all(|(h, w)| contains_subset(h, w))
        }
        _ => value == wanted,
    }
}

/// Every secret the scenario gave the client that appears in what the client produced
/// fails the scenario, whatever else it expects.
fn check_given_secrets(outcome: &Outcome, fail: &mut impl FnMut(&str, String, String)) {
    for secret in &outcome.secrets {
        if let Some(place) = client_output_with(outcome, &secret.value) {
            fail(
                "secret",
                format!("no trace of {} in what the client produced", secret.source),
                format!("found in {place}"),
            );
        }
    }
}

/// The first step result or log line (any level) of the client that contains `needle`, as
/// the client wrote it.
fn client_output_with(outcome: &Outcome, needle: &str) -> Option<String> {
    for step in &outcome.steps {
        let text = match &step.result {
            Ok(v) => v.to_string(),
            Err(e) => e.text.clone(),
        };
        if text.contains(needle) {
            return Some(format!("step {}", step.number));
        }
    }
    let event = outcome.logs.iter().find(|e| e.message.contains(needle))?;
    Some(format!("a {} log line", event.level))
}

fn find_secret(outcome: &Outcome, secret: &str) -> Option<String> {
    client_output_with(outcome, secret).or_else(|| {
        super::transcript::render(outcome)
            .contains(secret)
            .then(|| "the transcript".to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::http::{check_distinct_headers, check_http_requests};
    use super::*;
    use crate::scenario::HttpRequestExpect;
    use serde_json::json;

    #[test]
    fn subset_compares_objects_by_key_and_arrays_by_element() {
        let value = json!({"a": 1, "b": {"c": [1, 2], "d": "x"}});
        assert!(contains_subset(&value, &json!({"b": {"c": [1, 2]}})));
        assert!(!contains_subset(&value, &json!({"b": {"c": [1]}})));
        assert!(!contains_subset(&value, &json!({"z": 1})));
        assert!(contains_subset(&json!("x"), &json!("x")));
        assert!(contains_subset(
            &json!({"result": {}}),
            &json!({"result": {}})
        ));
        assert!(!contains_subset(
            &json!({"result": {"pong": true}}),
            &json!({"result": {}})
        ));
    }

    #[test]
    fn an_id_placeholder_stands_for_the_first_request_of_its_method() {
        let list = json!({"method": "tools/list", "id": 2});
        let call = json!({"method": "tools/call", "id": "c-3"});
        let wanted = json!({"params": {"requestId": "${id:tools/call}", "other": ["${id:tools/list}", "${id:ping}"]}});
        let resolved = with_ids(&wanted, &[&list, &call]);
        assert_eq!(
            resolved,
            json!({"params": {"requestId": "c-3", "other": [2, "${id:ping}"]}})
        );
    }

    /// A server stopped after logging the awaited message but before beginning its next step
    /// (a close under load: the scenario `process/exited-none-while-running` once failed so)
    /// played its script; a message that does not satisfy the step leaves it unplayed.
    #[test]
    fn an_expect_met_by_a_logged_message_counts_as_played_though_the_next_step_never_began() {
        let script: Script = toml::from_str(
            r#"steps = [{ handshake = {} }, { expect = { method = "tools/call" } }, { stall = {} }]"#,
        )
        .unwrap();
        let step = |index: usize| Record::Step {
            index,
            describe: String::new(),
        };
        let received = |method: &str| Record::Received {
            message: json!({"jsonrpc": "2.0", "id": 2, "method": method}),
        };
        let cut = [
            step(0),
            received("initialize"),
            step(1),
            received("tools/call"),
        ];
        assert_eq!(script_problem(&cut, &script), None);
        let other = [
            step(0),
            received("initialize"),
            step(1),
            received("tools/list"),
        ];
        let problem = script_problem(&other, &script).expect("an unmet expect is reported");
        assert!(
            problem.starts_with("step 2 (expect tools/call) and 0 more never completed"),
            "{problem}"
        );
        let before = [step(0), received("tools/call"), step(1)];
        assert!(
            script_problem(&before, &script).is_some(),
            "a message logged before the step began does not meet it"
        );
    }

    #[test]
    fn a_request_count_is_exact_and_a_request_without_one_is_at_least_one() {
        let request = |path: &str| Record::HttpRequest {
            seq: 0,
            origin: "second".into(),
            method: "POST".into(),
            path: path.into(),
            headers: Vec::new(),
            body: Value::Null,
        };
        let token = |count: Option<usize>| HttpRequestExpect {
            path: Some("/token".into()),
            count,
            ..HttpRequestExpect::default()
        };
        let run = |wants: &[HttpRequestExpect], wire: &[Record]| {
            let mut failures = Vec::new();
            check_http_requests(wants, wire, &mut |what: &str, want, got| {
                failures.push(format!("{what}: {want} / {got}"))
            });
            failures
        };
        let twice = [
            request("/token"),
            request("/authorize"),
            request("/token?x=1"),
        ];
        assert!(run(&[token(Some(2)), token(None)], &twice).is_empty());
        let failures = run(&[token(Some(3)), token(Some(1))], &twice);
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(
            failures[0].starts_with("http_requests: 3 requests matching"),
            "{failures:?}"
        );
        assert!(
            failures[1].contains("/ 2: POST second /token"),
            "{failures:?}"
        );
        let none = run(&[token(None), token(Some(0))], &[request("/authorize")]);
        assert_eq!(none.len(), 1, "{none:?}");
        assert!(
            none[0].starts_with("http_requests: a request matching"),
            "{none:?}"
        );
    }

    #[test]
    fn distinct_headers_fail_on_a_missing_or_repeated_value_and_never_show_it() {
        let request = |token: Option<&str>| Record::HttpRequest {
            seq: 0,
            origin: "primary".into(),
            method: "POST".into(),
            path: "/mcp".into(),
            headers: token
                .map(|t| ("authorization".to_string(), t.to_string()))
                .into_iter()
                .collect(),
            body: Value::Null,
        };
        let run = |wire: &[Record]| {
            let mut failures = Vec::new();
            check_distinct_headers(
                &["Authorization".into()],
                wire,
                &mut |_: &str, _: String, actual: String| failures.push(actual),
            );
            failures
        };
        assert!(run(&[request(Some("t1")), request(Some("t2"))]).is_empty());
        let repeated = run(&[
            request(Some("t1")),
            request(Some("t2")),
            request(Some("t1")),
        ]);
        assert_eq!(repeated, ["POST to primary repeats the value of request 1"]);
        assert_eq!(
            run(&[request(Some("t1")), request(None)]),
            ["POST to primary without it"]
        );
        assert_eq!(run(&[]).len(), 1);
    }
}
