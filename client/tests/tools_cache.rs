//! kova's tools cache and reconnects: a listing that was answered by a connection a reconnect
//! replaced before the listing read its answer is returned, but never cached (it is the old
//! server's list). The listing future is held unpolled across the reconnect(s), which only a
//! caller can arrange; every step waits on what the server wrote, nothing sleeps.

#![cfg(unix)]

use std::future::Future;
use std::pin::pin;
use std::time::Duration;

use mcp_refclient::{ClientConfig, McpClient, Profile, StdioServer};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"sh","version":"1"}}}"#;

/// Each launch answers its first `tools/list` (id 2) with one tool named after its pid, once
/// it has also read the caller's `notifications/go`; then it announces a list change.
fn server() -> StdioServer {
    let answer = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t'$$'","inputSchema":{"type":"object"}}]}}"#;
    let changed = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
    let script = format!(
        "read init; echo '{INIT}'; read initialized; \
         while read line; do case \"$line\" in *notifications/go*) echo '{answer}'; echo '{changed}';; esac; done"
    );
    StdioServer {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        ..Default::default()
    }
}

fn names(tools: &[mcp_refclient::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.clone()).collect()
}

/// `reconnects` reconnects happen between the answer reaching the client and the listing
/// reading it.
#[rstest::rstest]
#[case::one_reconnect(1)]
#[case::two_reconnects(2)]
#[tokio::test]
async fn a_listing_answered_by_a_replaced_connection_is_not_cached(#[case] reconnects: usize) {
    let client = McpClient::connect_stdio(server(), ClientConfig::new(Profile::Kova))
        .await
        .expect("handshake");
    let mut listing = pin!(client.list_tools());
    {
        // The listing writes its request first; the server answers once `go` follows it. The
        // listing is polled only until `go` is written, so it has not read the answer.
        let mut go = pin!(client.notify("notifications/go", None));
        std::future::poll_fn(|cx| {
            assert!(
                listing.as_mut().poll(cx).is_pending(),
                "the server answers only after `go`"
            );
            go.as_mut().poll(cx)
        })
        .await
        .expect("go sent");
    }
    // The answer is read (and handed to the listing) before the list change after it.
    tokio::time::timeout(Duration::from_secs(10), async {
        while client.tools_list_changes() == 0 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await
    .expect("the server answered within 10 s");
    for _ in 0..reconnects {
        client.reconnect().await.expect("reconnect");
    }
    let old = names(&listing.await.expect("the first server's answer"));
    let (now, go) = tokio::join!(client.list_tools(), client.notify("notifications/go", None));
    go.expect("go sent");
    let now = names(&now.expect("a listing of the current server"));
    assert_eq!(old.len(), 1);
    assert_eq!(now.len(), 1);
    assert_ne!(
        old, now,
        "the second listing must ask the current server, not return the first server's list"
    );
    client.close().await.expect("close");
}
