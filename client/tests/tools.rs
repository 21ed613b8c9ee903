//! The tool layer (adapters, tool sets, tool sources) against tiny `sh` servers that answer
//! each request by its method, and the error rules. Nothing here synchronises by sleeping.

#![cfg(unix)]

use std::sync::Arc;
use std::time::Duration;

use mcp_refclient::tools::content::{block_text, content_text};
use mcp_refclient::tools::{
    adapters_for, ToolAdapter, ToolNameCollision, ToolOutcome, ToolServer, ToolSet, ToolSource,
};
use mcp_refclient::{
    CallToolResult, ClientConfig, ErrorCode, ErrorKind, McpClient, McpError, Profile, StdioServer,
    Tool,
};
use serde_json::{json, Value};
use tracing_test::traced_test;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"sh","version":"1"}}}"#;

/// A server that, after the handshake, runs `list` for each `tools/list` (`$n` is the
/// listing's number) and `call` for each `tools/call` (`$c` the call's); both see the request
/// line as `$line` and its id as `$id`. Anything else it reads is ignored.
fn dispatch(list: &str, call: &str) -> StdioServer {
    let script = format!(
        r#"read init; echo '{INIT}'; read initialized; n=0; c=0
while read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/^{{"jsonrpc":"2.0","id":\([0-9]*\),.*/\1/p')
  case "$line" in
    *'"method":"tools/list"'*) n=$((n+1)); {list} ;;
    *'"method":"tools/call"'*) c=$((c+1)); {call} ;;
  esac
done"#
    );
    StdioServer {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        ..Default::default()
    }
}

/// A `printf` answering the current request with `result` (JSON without `'` or `%`, except
/// `%s` placeholders whose arguments the caller appends).
fn reply(result: &str) -> String {
    format!(r#"printf '{{"jsonrpc":"2.0","id":%s,"result":{result}}}\n' "$id""#)
}

/// A `printf` answering the current request with a JSON-RPC error.
fn reply_error(code: i32, message: &str) -> String {
    format!(
        r#"printf '{{"jsonrpc":"2.0","id":%s,"error":{{"code":{code},"message":"{message}"}}}}\n' "$id""#
    )
}

/// An `echo` of `notifications/tools/list_changed`.
const NOTIFY_CHANGED: &str =
    r#"echo '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'"#;

/// A `tools/list` result offering `names`, each described as "the NAME tool".
fn tools(names: &[&str]) -> String {
    let tools: Vec<Value> = names
        .iter()
        .map(|name| {
            json!({"name": name, "description": format!("the {name} tool"), "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}})
        })
        .collect();
    json!({ "tools": tools }).to_string()
}

/// A `tools/call` result with one text block.
fn text_result(text: &str) -> String {
    json!({"content": [{"type": "text", "text": text}]}).to_string()
}

async fn connect_with(server: StdioServer, config: ClientConfig) -> Arc<McpClient> {
    Arc::new(
        McpClient::connect_stdio(server, config)
            .await
            .expect("handshake"),
    )
}

async fn connect(server: StdioServer) -> Arc<McpClient> {
    connect_with(
        server,
        ClientConfig {
            revision: Some(mcp_refclient::LATEST_PROTOCOL_VERSION.into()),
            ..ClientConfig::new(Profile::Strict)
        },
    )
    .await
}

fn names<S: ToolServer>(adapters: &[ToolAdapter<S>]) -> Vec<String> {
    adapters.iter().map(|a| a.name().to_string()).collect()
}

/// Exactly one WARN line of this test's log (captured by tracing-test) contains `needle`,
/// and it contains each of `parts`.
fn one_warning(lines: &[&str], needle: &str, parts: &[&str]) -> Result<(), String> {
    let warned: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains(" WARN ") && l.contains(needle))
        .collect();
    if warned.len() != 1 {
        return Err(format!(
            "{} WARN lines contain {needle:?}, wanted one:\n{}",
            warned.len(),
            lines.join("\n")
        ));
    }
    match parts.iter().find(|part| !warned[0].contains(*part)) {
        Some(part) => Err(format!("{part:?} is missing from {}", warned[0])),
        None => Ok(()),
    }
}

fn output(outcome: ToolOutcome) -> String {
    match outcome {
        ToolOutcome::Output(text) => text,
        other => panic!("expected output, got {other:?}"),
    }
}

fn failed(outcome: ToolOutcome) -> String {
    match outcome {
        ToolOutcome::Failed(text) => text,
        other => panic!("expected a failed tool result, got {other:?}"),
    }
}

// ---- tools.adapter.names, tools.prefix ----

#[tokio::test]
async fn adapters_keep_names_descriptions_and_schemas() {
    let list = r#"{"tools":[{"name":"search","description":"Search the docs","inputSchema":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}},{"name":"bare","inputSchema":{"type":"object"}}]}"#;
    let client = connect(dispatch(&reply(list), "")).await;
    let adapters = adapters_for(Arc::clone(&client), None).await.unwrap();
    assert_eq!(names(&adapters), ["search", "bare"]);
    assert_eq!(adapters[0].original_name(), "search");
    assert_eq!(adapters[0].description(), Some("Search the docs"));
    assert_eq!(
        adapters[0].parameters(),
        &json!({"type":"object","properties":{"query":{"type":"string"}},"required":["query"]})
    );
    assert_eq!(adapters[1].description(), None);
    assert_eq!(adapters[1].parameters(), &json!({"type": "object"}));

    let prefixed = adapters_for(client, Some("docs")).await.unwrap();
    assert_eq!(names(&prefixed), ["docs__search", "docs__bare"]);
    assert_eq!(prefixed[0].original_name(), "search");
    assert_eq!(prefixed[0].description(), Some("Search the docs"));
    assert_eq!(prefixed[0].parameters(), adapters[0].parameters());
}

#[tokio::test]
async fn a_prefixed_tool_calls_the_server_with_its_original_name() {
    let call = format!(
        r#"case "$line" in *'"params":{{"name":"search","arguments":{{"q":"rust"}}}}'*) {};; *) {};; esac"#,
        reply(&text_result("called search")),
        reply(&text_result("called by another name"))
    );
    let client = connect(dispatch(&reply(&tools(&["search"])), &call)).await;
    let adapters = adapters_for(client, Some("docs")).await.unwrap();
    assert_eq!(adapters[0].name(), "docs__search");
    assert_eq!(
        output(adapters[0].call(json!({"q": "rust"})).await),
        "called search"
    );
}

#[tokio::test]
async fn two_servers_with_one_tool_name_coexist_with_prefixes_and_collide_without() {
    let docs = connect(dispatch(
        &reply(&tools(&["search", "read"])),
        &reply(&text_result("from docs")),
    ))
    .await;
    let web = connect(dispatch(
        &reply(&tools(&["search"])),
        &reply(&text_result("from web")),
    ))
    .await;

    let mut set = ToolSet::new();
    set.add(
        "docs",
        adapters_for(Arc::clone(&docs), Some("docs")).await.unwrap(),
    )
    .unwrap();
    set.add(
        "web",
        adapters_for(Arc::clone(&web), Some("web")).await.unwrap(),
    )
    .unwrap();
    assert_eq!(
        names(set.tools()),
        ["docs__search", "docs__read", "web__search"]
    );
    assert_eq!(set.server_of("web__search"), Some("web"));
    assert_eq!(
        output(set.call("docs__search", json!({})).await),
        "from docs"
    );
    assert_eq!(output(set.call("web__search", json!({})).await), "from web");
    assert_eq!(
        failed(set.call("search", json!({})).await),
        "unknown tool 'search'"
    );

    let mut bare = ToolSet::new();
    bare.add("docs", adapters_for(docs, None).await.unwrap())
        .unwrap();
    let err = bare
        .add("web", adapters_for(web, None).await.unwrap())
        .unwrap_err();
    assert_eq!(
        err,
        ToolNameCollision {
            name: "search".into(),
            first: "docs".into(),
            second: "web".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "tool name 'search' offered by 'docs' and 'web'; give one a prefix"
    );
    assert_eq!(
        names(bare.tools()),
        ["search", "read"],
        "a refused server adds none of its tools"
    );
}

// ---- tools.is-error ----

#[tokio::test]
async fn is_error_fails_through_the_adapter_and_is_data_when_called_directly() {
    let result = r#"{"content":[{"type":"text","text":"bad input"},{"type":"text","text":"q is required"}],"isError":true}"#;
    let client = connect(dispatch("", &reply(result))).await;
    let tool = Tool {
        name: "lookup".into(),
        description: None,
        input_schema: json!({"type": "object"}),
    };
    let adapter = ToolAdapter::new(Arc::clone(&client), tool, None);
    let outcome = adapter.call(json!({})).await;
    assert!(outcome.is_error());
    assert_eq!(outcome.text(), "bad input\nq is required");
    assert_eq!(failed(outcome), "bad input\nq is required");

    let direct: CallToolResult = client
        .call_tool("lookup", json!({}), None)
        .await
        .expect("data, not an error");
    assert!(direct.is_error);
    assert_eq!(direct.content.len(), 2);
}

// ---- tools.content.kinds ----

#[tokio::test]
async fn each_content_kind_reaches_the_model_as_text() {
    let big = "QUJD".repeat(512); // 2 KiB of base64
    let result = json!({"content": [
        {"type": "text", "text": "plain"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "resource text"}},
        {"type": "image", "data": big, "mimeType": "image/png"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
    ]})
    .to_string();
    let client = connect(dispatch(&reply(&tools(&["media"])), &reply(&result))).await;
    let adapters = adapters_for(client, None).await.unwrap();
    let text = output(adapters[0].call(json!({})).await);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "plain");
    assert_eq!(lines[1], "resource text");
    assert_eq!(
        lines[2],
        r#"{"type":"image","data":"[base64, 2048 bytes]","mimeType":"image/png"}"#
    );
    assert_eq!(
        lines[3],
        r#"{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}"#
    );
    assert_eq!(lines.len(), 4);
    assert!(
        !text.contains("QUJD"),
        "the payload itself must not reach the model"
    );
}

#[test]
fn a_blob_resource_and_unknown_kinds_are_json_with_large_payloads_sized() {
    let blob = "A".repeat(1025);
    let block = json!({"type": "resource", "resource": {"uri": "file:///a.bin", "blob": blob}});
    assert_eq!(
        block_text(&block),
        r#"{"type":"resource","resource":{"uri":"file:///a.bin","blob":"[base64, 1025 bytes]"}}"#
    );
    let at_limit = "A".repeat(1024);
    let block = json!({"type": "resource", "resource": {"uri": "file:///a.bin", "blob": at_limit}});
    assert!(
        block_text(&block).contains(&at_limit),
        "1 KiB exactly is not large"
    );
    let unknown =
        json!({"type": "hologram", "frames": [{"data": "B".repeat(4000)}], "note": "kept"});
    assert_eq!(
        block_text(&unknown),
        r#"{"type":"hologram","frames":[{"data":"[base64, 4000 bytes]"}],"note":"kept"}"#
    );
    let prose = "a sentence with spaces, ".repeat(100);
    let long_text_field = json!({"type": "note", "body": prose});
    assert!(
        block_text(&long_text_field).contains("a sentence with spaces"),
        "text is not base64"
    );
    assert_eq!(content_text(&[]), "");
}

// ---- tools.source.relist ----

/// Listing 1 offers `a` and `change`, later ones add `b`; `a` answers how many listings the
/// server has seen; `change` announces a change before its answer.
fn changing_server(failing_later_listings: Option<&str>) -> StdioServer {
    let later = failing_later_listings
        .map(str::to_string)
        .unwrap_or_else(|| reply(&tools(&["a", "change", "b"])));
    let list = format!(
        r#"case $n in 1) {};; *) {};; esac"#,
        reply(&tools(&["a", "change"])),
        later
    );
    let call = format!(
        r#"case "$line" in *'"name":"change"'*) {NOTIFY_CHANGED}; {};; *) {} "$n";; esac"#,
        reply(&text_result("changed")),
        reply(r#"{"content":[{"type":"text","text":"listings=%s"}]}"#)
    );
    dispatch(&list, &call)
}

#[tokio::test]
async fn a_source_relists_after_list_changed_and_only_then() {
    let client = connect(changing_server(None)).await;
    let source = ToolSource::new(Arc::clone(&client), "srv", None);
    source.begin_run().await;
    assert_eq!(names(&source.tools()), ["a", "change"]);

    source.before_model_request().await;
    assert_eq!(
        output(source.call("a", json!({})).await),
        "listings=1",
        "no change, no listing"
    );

    assert_eq!(output(source.call("change", json!({})).await), "changed");
    assert_eq!(client.tools_list_changes(), 1);
    source.before_model_request().await;
    assert_eq!(names(&source.tools()), ["a", "change", "b"]);
    assert_eq!(output(source.call("a", json!({})).await), "listings=2");

    source.before_model_request().await;
    assert_eq!(
        output(source.call("a", json!({})).await),
        "listings=2",
        "a change is listed once"
    );

    source.begin_run().await;
    assert_eq!(
        output(source.call("a", json!({})).await),
        "listings=3",
        "every run lists"
    );
}

#[tokio::test]
#[traced_test]
async fn a_failing_listing_keeps_the_last_list() {
    let client = connect(changing_server(Some(&reply_error(-32603, "listing broke")))).await;
    let source = ToolSource::new(Arc::clone(&client), "srv", Some("s"));
    source.begin_run().await;
    assert_eq!(names(&source.tools()), ["s__a", "s__change"]);
    output(source.call("s__change", json!({})).await);
    source.before_model_request().await;
    assert_eq!(names(&source.tools()), ["s__a", "s__change"]);
    assert_eq!(
        output(source.call("s__a", json!({})).await),
        "listings=2",
        "the listing was tried"
    );
    logs_assert(|lines| {
        one_warning(
            lines,
            "listing the tools of MCP server 'srv'",
            &[
                "server error -32603: listing broke",
                "keeping the last list (2 tools)",
            ],
        )
    });
}

#[tokio::test]
#[traced_test]
async fn a_listing_that_times_out_keeps_the_last_list() {
    let mut config = ClientConfig {
        revision: Some(mcp_refclient::LATEST_PROTOCOL_VERSION.into()),
        ..ClientConfig::new(Profile::Strict)
    };
    let mut timeouts = config.timeouts();
    timeouts.list = Some(Duration::from_millis(200));
    config.timeouts = Some(timeouts);
    // Later listings are never answered.
    let client = connect_with(changing_server(Some(":")), config).await;
    let source = ToolSource::new(Arc::clone(&client), "slow", None);
    source.begin_run().await;
    output(source.call("change", json!({})).await);
    source.before_model_request().await;
    assert_eq!(names(&source.tools()), ["a", "change"]);
    logs_assert(|lines| {
        one_warning(
            lines,
            "listing the tools of MCP server 'slow'",
            &["timed out"],
        )
    });
}

// ---- tools.source.withdraw-exited ----

#[tokio::test]
#[traced_test]
async fn an_exited_server_has_its_tools_withdrawn_once_and_calls_answered_as_unknown() {
    let call = "echo 'out of memory' >&2; exit 3";
    let client = connect(dispatch(&reply(&tools(&["a"])), call)).await;
    let source = ToolSource::new(Arc::clone(&client), "docs-server", Some("docs"));
    source.begin_run().await;
    assert_eq!(names(&source.tools()), ["docs__a"]);

    let outcome = source.call("docs__a", json!({})).await;
    match &outcome {
        ToolOutcome::Error(e) => assert_eq!(e.kind(), ErrorKind::Transport),
        other => panic!("expected the transport error, got {other:?}"),
    }
    assert!(
        outcome
            .text()
            .starts_with("MCP call failed: Connection closed: MCP server 'sh' exited"),
        "{}",
        outcome.text()
    );
    assert!(client.exited().is_some());

    source.before_model_request().await;
    assert!(source.withdrawn());
    assert!(source.tools().is_empty());
    source.before_model_request().await;
    source.begin_run().await;
    assert!(
        source.tools().is_empty(),
        "a new run does not bring them back"
    );

    assert_eq!(
        failed(source.call("docs__a", json!({})).await),
        "unknown tool 'docs__a'"
    );
    logs_assert(|lines| {
        one_warning(
            lines,
            "withdrawn",
            &["MCP server 'docs-server' (prefix 'docs')", "out of memory"],
        )
    });
}

#[tokio::test]
async fn an_unlisted_name_is_an_unknown_tool() {
    let client = connect(dispatch(&reply(&tools(&["a"])), "exit 9")).await;
    let source = ToolSource::new(client, "srv", Some("p"));
    assert_eq!(
        failed(source.call("p__a", json!({})).await),
        "unknown tool 'p__a'",
        "nothing listed yet"
    );
    source.begin_run().await;
    assert_eq!(
        failed(source.call("a", json!({})).await),
        "unknown tool 'a'",
        "only the exposed name is offered"
    );
}

// ---- tools.source.no-notify-warn ----

/// A client over a transport that cannot report notifications.
struct Deaf(McpClient);

impl ToolServer for Deaf {
    async fn list_tools(&self) -> Result<Vec<Tool>, McpError> {
        self.0.list_tools().await
    }

    async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, McpError> {
        self.0.call_tool(name, arguments, None).await
    }

    fn exited(&self) -> Option<String> {
        self.0.exited()
    }

    fn tools_list_changes(&self) -> u64 {
        self.0.tools_list_changes()
    }

    fn reports_notifications(&self) -> bool {
        false
    }
}

#[tokio::test]
#[traced_test]
async fn a_source_without_notifications_warns_and_lists_once_per_run() {
    let client = McpClient::connect_stdio(
        changing_server(None),
        ClientConfig {
            revision: Some(mcp_refclient::LATEST_PROTOCOL_VERSION.into()),
            ..ClientConfig::new(Profile::Strict)
        },
    )
    .await
    .unwrap();
    let source = ToolSource::new(Arc::new(Deaf(client)), "deaf", None);
    logs_assert(|lines| one_warning(lines, "cannot report notifications", &["MCP server 'deaf'"]));

    source.begin_run().await;
    output(source.call("change", json!({})).await);
    source.before_model_request().await;
    assert_eq!(names(&source.tools()), ["a", "change"]);
    assert_eq!(output(source.call("a", json!({})).await), "listings=1");
    source.begin_run().await;
    assert_eq!(names(&source.tools()), ["a", "change", "b"]);
}

// ---- errors.rpc-code-kept, errors.kinds ----

#[tokio::test]
async fn a_json_rpc_error_from_a_tool_call_keeps_code_and_message() {
    let client = connect(dispatch(
        &reply(&tools(&["a"])),
        &reply_error(-32602, "Invalid params: q"),
    ))
    .await;
    let adapters = adapters_for(Arc::clone(&client), None).await.unwrap();
    let outcome = adapters[0].call(json!({})).await;
    assert_eq!(
        outcome.text(),
        "MCP call failed: server error -32602: Invalid params: q"
    );
    let ToolOutcome::Error(error) = outcome else {
        panic!("expected the JSON-RPC error")
    };
    assert_eq!(error.kind(), ErrorKind::JsonRpc);
    assert_eq!(error.http_status(), None);
    match &error {
        McpError::JsonRpc {
            code,
            message,
            data,
        } => {
            assert_eq!(*code, ErrorCode::INVALID_PARAMS);
            assert_eq!(message, "Invalid params: q");
            assert_eq!(data, &None);
        }
        other => panic!("expected JsonRpc, got {other:?}"),
    }
    assert_eq!(error.full_text(), "server error -32602: Invalid params: q");
}

#[test]
fn json_rpc_error_text_is_not_prefixed_twice() {
    let error = McpError::JsonRpc {
        code: ErrorCode(-32000),
        message: "Tool failed".into(),
        data: Some(json!({"x": 1})),
    };
    assert_eq!(error.to_string(), "server error -32000: Tool failed");
    assert_eq!(error.full_text(), error.to_string());
    assert_eq!(error.full_text().matches("-32000").count(), 1);
    assert_eq!(error.full_text().matches("server error").count(), 1);
}

#[test]
fn error_kinds_have_their_neutral_names() {
    let cases = [
        (
            McpError::Transport("Connection closed: x".into()),
            "transport",
        ),
        (
            McpError::Http {
                status: 401,
                message: "unauthorized".into(),
            },
            "http",
        ),
        (McpError::Protocol("bad".into()), "protocol"),
        (
            McpError::JsonRpc {
                code: ErrorCode::METHOD_NOT_FOUND,
                message: "m".into(),
                data: None,
            },
            "json-rpc",
        ),
        (
            McpError::Serialization(serde_json::from_str::<Value>("{").unwrap_err()),
            "serialization",
        ),
        (
            McpError::Io {
                context: "writing".into(),
                source: std::io::Error::other("pipe"),
            },
            "io",
        ),
        (
            McpError::ConnectionClosed("gone".into()),
            "connection-closed",
        ),
        (McpError::Timeout("timed out".into()), "timeout"),
    ];
    for (error, name) in &cases {
        assert_eq!(error.kind().name(), *name, "{error:?}");
    }
    assert_eq!(cases[1].0.http_status(), Some(401));
    assert_eq!(cases[0].0.http_status(), None);
    assert_eq!(cases[2].0.full_text(), "protocol error: bad");
    assert_eq!(cases[6].0.full_text(), "connection closed: gone");
}
