//! Tests of the JSON-RPC messages and of classify.

#[test]
fn a_server_ping_gets_an_empty_result_and_other_requests_method_not_found() {
    let none = |_| false;
    let pong = answer_server_request(Value::from(7), "ping", none).unwrap();
    assert_eq!(
        serde_json::to_value(pong).unwrap(),
        serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": {}})
    );
    let declined =
        serde_json::to_value(answer_server_request(Value::from("s"), "roots/list", none).unwrap())
            .unwrap();
    assert_eq!(declined["error"]["code"], -32601);
    assert_eq!(declined["error"]["message"], "Method not found: roots/list");
    assert!(answer_server_request(Value::from(1), "ping", |b| b
        == crate::Breakage::NoPingAnswer)
    .is_none());
    assert!(
        answer_server_request(Value::from(1), "x", |b| b == crate::Breakage::NoDecline).is_none()
    );
}

use super::*;
use serde_json::json;

#[test]
fn error_codes_are_the_spec_values() {
    assert_eq!(ErrorCode::PARSE_ERROR.0, -32700);
    assert_eq!(ErrorCode::INVALID_REQUEST.0, -32600);
    assert_eq!(ErrorCode::METHOD_NOT_FOUND.0, -32601);
    assert_eq!(ErrorCode::INVALID_PARAMS.0, -32602);
    assert_eq!(ErrorCode::INTERNAL_ERROR.0, -32603);
    assert_eq!(ErrorCode::METHOD_NOT_FOUND.to_string(), "-32601");
}

#[test]
fn a_result_is_a_response() {
    let got = classify(br#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#);
    assert_eq!(
        got,
        Incoming::Response {
            id: json!(3),
            outcome: Ok(json!({"tools": []}))
        }
    );
}

#[test]
fn an_error_is_a_response_keeping_code_and_message() {
    let got = classify(br#"{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad"}}"#);
    let error = ErrorObject {
        code: ErrorCode::INVALID_PARAMS,
        message: "bad".into(),
        data: None,
    };
    assert_eq!(
        got,
        Incoming::Response {
            id: json!("a"),
            outcome: Err(error)
        }
    );
}

#[test]
fn a_method_with_an_id_is_a_server_request() {
    let got = classify(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#);
    assert_eq!(
        got,
        Incoming::Request {
            id: json!(7),
            method: "ping".into(),
            params: None
        }
    );
}

#[test]
fn a_method_without_an_id_is_a_notification() {
    let got = classify(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
    let want = Incoming::Notification {
        method: "notifications/tools/list_changed".into(),
        params: None,
    };
    assert_eq!(got, want);
}

#[test]
fn a_banner_is_not_json() {
    assert!(matches!(
        classify(b"Server listening on stdio"),
        Incoming::NotJson(_)
    ));
    assert!(matches!(classify(b"\xff\xfe"), Incoming::NotJson(_)));
}

#[test]
fn json_that_is_not_json_rpc_is_invalid() {
    for line in [
        &br#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#[..],
        br#"42"#,
        br#"{"id":1,"result":{}}"#,
        br#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":1}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}"#,
        br#"{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}"#,
        br#"{"jsonrpc":"2.0","method":5}"#,
        br#"{"jsonrpc":"2.0"}"#,
    ] {
        assert!(
            matches!(classify(line), Incoming::Invalid(_)),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
}

#[test]
fn outgoing_messages_are_one_line_without_absent_members() {
    let request = Request::new(json!(1), "tools/list", None);
    assert_eq!(
        serde_json::to_string(&request).unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
    );
    let note = Notification::new("notifications/initialized", None);
    assert_eq!(
        serde_json::to_string(&note).unwrap(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    let answer = Response::ok(json!(9), json!({}));
    assert_eq!(
        serde_json::to_string(&answer).unwrap(),
        r#"{"jsonrpc":"2.0","id":9,"result":{}}"#
    );
    let decline = Response::err(json!(4), ErrorCode::METHOD_NOT_FOUND, "Method not found");
    let text = serde_json::to_string(&decline).unwrap();
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}"#
    );
    let multi = Request::new(json!(2), "tools/call", Some(json!({"text": "a\nb"})));
    assert!(!serde_json::to_string(&multi).unwrap().contains('\n'));
}

#[test]
fn a_repeated_member_counts_last_as_in_a_map() {
    let got = classify(br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#);
    assert_eq!(
        got,
        Incoming::Response {
            id: json!(2),
            outcome: Ok(json!({}))
        }
    );
    let got = classify(br#" {"jsonrpc":"1.0","jsonrpc":"2.0","method":"m","params":null}"#);
    assert_eq!(
        got,
        Incoming::Notification {
            method: "m".into(),
            params: Some(Value::Null)
        }
    );
    assert_eq!(
        classify(br#"{"jsonrpc":"2.0","id":null,"method":"m"}"#),
        Incoming::Invalid("request 'm' with a null id".into())
    );
    assert!(matches!(
        classify(br#"{"jsonrpc":"2.0","id":1,"result":{}} x"#),
        Incoming::NotJson(_)
    ));
}

#[test]
fn a_borrowed_request_is_written_as_the_owned_one() {
    let params = json!({"name": "echo", "arguments": {}});
    let owned = Request::new(json!(5), "tools/call", Some(params.clone()));
    let borrowed = RequestRef::new(&owned.id, "tools/call", Some(&params));
    assert_eq!(
        serde_json::to_string(&borrowed).unwrap(),
        serde_json::to_string(&owned).unwrap()
    );
    let bare = RequestRef::<Value>::new(&owned.id, "tools/list", None);
    assert_eq!(
        serde_json::to_string(&bare).unwrap(),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#
    );
}

/// What `classify_owned` says of a line, as `classify` would say it (a kept line read).
fn owned_verdict(line: &[u8]) -> Incoming {
    match classify_owned(line.to_vec()) {
        Sorted::Response { id, outcome } => Incoming::Response {
            id,
            outcome: outcome.map(|r| r.into_value().unwrap()),
        },
        Sorted::Other {
            incoming,
            line: kept,
        } => {
            assert_eq!(kept, line, "the line comes back whole");
            incoming
        }
    }
}

#[test]
fn a_kept_response_line_reads_as_the_general_way_does() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    let lines: Vec<&[u8]> = vec![
        br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}"#,
        br#" {"result":{"b":1,"a":[2]},"id":"x","jsonrpc":"2.0","extra":{"n":null}}"#,
        br#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":1,"result":2}"#,
        br#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":""}}"#,
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#,
        br#"{"jsonrpc":"2.0","id":7,"method":"ping","result":{}}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":"a "[[[ string"}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":{}} trailing"#,
        b"Server listening on stdio",
        deep.as_bytes(),
    ];
    for line in lines {
        assert_eq!(
            owned_verdict(line),
            classify(line),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
    assert!(
        matches!(classify(deep.as_bytes()), Incoming::NotJson(_)),
        "deeper than serde_json reads"
    );
    let kept = classify_owned(lines_plain().to_vec());
    assert!(
        matches!(
            kept,
            Sorted::Response {
                outcome: Ok(RawResult::Line(_)),
                ..
            }
        ),
        "a plain response keeps its line: {kept:?}"
    );
}

fn lines_plain() -> &'static [u8] {
    br#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}"#
}

#[test]
fn a_kept_result_reads_into_its_type_with_the_trees_error_text() {
    let Sorted::Response {
        outcome: Ok(raw), ..
    } = classify_owned(lines_plain().to_vec())
    else {
        panic!("a response")
    };
    let result: crate::CallToolResult = raw.parse().unwrap();
    assert!(result.is_error && result.content.is_empty());
    let line = br#"{"jsonrpc":"2.0","id":3,"result":{"content":7}}"#;
    let Sorted::Response {
        outcome: Ok(raw), ..
    } = classify_owned(line.to_vec())
    else {
        panic!("a response")
    };
    let from_line = raw
        .parse::<crate::CallToolResult>()
        .unwrap_err()
        .to_string();
    let from_tree = serde_json::from_value::<crate::CallToolResult>(json!({"content": 7}))
        .unwrap_err()
        .to_string();
    assert_eq!(from_line, from_tree);
}

#[test]
fn call_parameters_are_written_as_their_tree() {
    let arguments = json!({"z": 1, "a": [true, null], "s": "x\ny"});
    let borrowed = Params::Call {
        name: "echo",
        arguments: &arguments,
    };
    let tree = json!({"name": "echo", "arguments": arguments});
    assert_eq!(
        serde_json::to_string(&borrowed).unwrap(),
        serde_json::to_string(&tree).unwrap()
    );
    assert_eq!(
        serde_json::to_string(&Params::Tree(&tree)).unwrap(),
        serde_json::to_string(&tree).unwrap()
    );
}

#[test]
fn ids_match_by_value() {
    assert!(ids_match(&json!(1), &json!(1)));
    assert!(ids_match(&json!(1), &json!(1.0)));
    assert!(!ids_match(&json!(1), &json!("1")));
    assert!(!ids_match(&json!(1), &json!(2)));
}
