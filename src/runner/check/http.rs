//! The `http_requests` and `http_distinct_headers` expectations: checked against the
//! requests the HTTP mock logged.

use mcp_mock_servers::wire_log::Record;
use serde_json::Value;

use crate::runner::outcome::Outcome;
use crate::scenario::{Expectations, HttpRequestExpect};

use super::json_of;

/// An HTTP request as the mock logged it.
struct SeenRequest<'a> {
    origin: &'a str,
    method: &'a str,
    path: &'a str,
    query: &'a str,
    headers: &'a [(String, String)],
    body: &'a Value,
}

fn http_requests(wire: &[Record]) -> Vec<SeenRequest<'_>> {
    let mut requests = Vec::new();
    for record in wire {
        match record {
            Record::HttpRequest {
                origin,
                method,
                path,
                headers,
                body,
                ..
            } => requests.push(SeenRequest {
                origin,
                method,
                path: path.split('?').next().unwrap_or(path),
                query: path.split_once('?').map_or("", |(_, q)| q),
                headers,
                body,
            }),
            // The request just seen was outside the rule under test (the incidental policy).
            Record::Incidental { .. } => {
                requests.pop();
            }
            _ => {}
        }
    }
    requests
}

fn request_matches(request: &SeenRequest<'_>, want: &HttpRequestExpect) -> bool {
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    };
    want.origin.as_ref().is_none_or(|o| o == request.origin)
        && want
            .method
            .as_ref()
            .is_none_or(|m| m.eq_ignore_ascii_case(request.method))
        && want.path.as_ref().is_none_or(|p| p == request.path)
        && want
            .query
            .iter()
            .all(|piece| request.query.contains(piece.as_str()))
        && want.form.iter().all(|piece| {
            request
                .body
                .as_str()
                .is_some_and(|b| b.contains(piece.as_str()))
        })
        && want.headers.iter().all(|(name, value)| {
            header(name).is_some_and(|v| {
                value == "*" || mcp_mock_servers::matcher::header_value_matches(name, value, v)
            })
        })
        && want
            .absent_headers
            .iter()
            .all(|name| header(name).is_none())
        && want
            .rpc_method
            .as_ref()
            .is_none_or(|m| request.body.get("method").and_then(Value::as_str) == Some(m))
}

/// Only names and origins are shown of a request: header values may be credentials.
fn describe_request(request: &SeenRequest<'_>) -> String {
    let names: Vec<&str> = request.headers.iter().map(|(n, _)| n.as_str()).collect();
    let rpc = request
        .body
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("-");
    format!(
        "{} {} {} ({rpc}) [{}]",
        request.method,
        request.origin,
        request.path,
        names.join(", ")
    )
}

/// Every request that reached the mock, described, for a failure's `actual`.
fn described(requests: &[SeenRequest<'_>]) -> String {
    requests
        .iter()
        .map(describe_request)
        .collect::<Vec<_>>()
        .join("; ")
}

pub(super) fn check_http(
    expect: &Expectations,
    outcome: &Outcome,
    fail: &mut impl FnMut(&str, String, String),
) {
    let requests = http_requests(&outcome.wire);
    check_http_requests(&expect.http_requests, &outcome.wire, fail);
    if let Some(want) = &expect.http_every_request {
        if let Some(odd) = requests.iter().find(|r| !request_matches(r, want)) {
            fail(
                "http_every_request",
                format!("every request matching {}", json_of(want)),
                describe_request(odd),
            );
        }
        if requests.is_empty() {
            fail(
                "http_every_request",
                "some request".into(),
                "none reached the mock".into(),
            );
        }
    }
    for unwanted in &expect.http_none {
        if let Some(odd) = requests.iter().find(|r| request_matches(r, unwanted)) {
            fail(
                "http_none",
                format!("no request matching {}", json_of(unwanted)),
                describe_request(odd),
            );
        }
    }
    check_distinct_headers(&expect.http_distinct_headers, &outcome.wire, fail);
    for (origin, count) in &expect.http_request_counts {
        let got = requests.iter().filter(|r| r.origin == origin).count();
        if got != *count {
            fail(
                &format!("requests to the {origin} origin"),
                count.to_string(),
                format!("{got}: {}", described(&requests)),
            );
        }
    }
}

/// Each of `wants` matched by a request that reached the mock, or by exactly its `count`.
pub(super) fn check_http_requests(
    wants: &[HttpRequestExpect],
    wire: &[Record],
    fail: &mut impl FnMut(&str, String, String),
) {
    let requests = http_requests(wire);
    for want in wants {
        let matching = requests.iter().filter(|r| request_matches(r, want)).count();
        let (wanted, actual) = match want.count {
            Some(count) if matching != count => (
                format!("{count} requests matching"),
                format!("{matching}: {}", described(&requests)),
            ),
            None if matching == 0 => ("a request matching".to_string(), described(&requests)),
            _ => continue,
        };
        fail(
            "http_requests",
            format!("{wanted} {}", json_of(want)),
            actual,
        );
    }
}

/// Every header of `names` on every request that reached the mock (incidental ones too),
/// with a value no other request carries.
pub(super) fn check_distinct_headers(
    names: &[String],
    wire: &[Record],
    fail: &mut impl FnMut(&str, String, String),
) {
    for name in names {
        let mut seen: Vec<&str> = Vec::new();
        for record in wire {
            let Record::HttpRequest {
                method,
                origin,
                headers,
                ..
            } = record
            else {
                continue;
            };
            let value = headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str());
            // Values and paths are not shown: they may be credentials.
            match value {
                None => fail(
                    "http_distinct_headers",
                    format!("`{name}` on every request"),
                    format!("{method} to {origin} without it"),
                ),
                Some(value) if seen.contains(&value) => fail(
                    "http_distinct_headers",
                    format!("a `{name}` of its own on every request"),
                    format!(
                        "{method} to {origin} repeats the value of request {}",
                        seen.iter().position(|v| *v == value).unwrap_or(0) + 1
                    ),
                ),
                Some(value) => seen.push(value),
            }
        }
        if seen.is_empty() {
            fail(
                "http_distinct_headers",
                format!("requests carrying `{name}`"),
                "none reached the mock".into(),
            );
        }
    }
}
