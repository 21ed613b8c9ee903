//! `server.resources.*` (when the server declares `resources`): the lists, reading listed
//! resources and templated ones, the error for an unknown URI, subscriptions where declared.

use super::common::content;
use super::common::expect::{broken, expect_code};
use super::session::peer::Peer;
use crate::fixtures::Listed;
use crate::outcome::{Failure, Finding};
use serde_json::{json, Value};

/// resources/list pages end, and every resource has a string uri and name.
pub const LIST: &str = "server.resources.list";
/// resources/templates/list pages end, and every template has a string uriTemplate and name.
pub const TEMPLATES: &str = "server.resources.templates";
/// resources/read of a listed (or templated) resource answers contents: uri, and text or base64 blob.
pub const READ: &str = "server.resources.read";
/// resources/read of an unknown URI gets -32002.
pub const UNKNOWN: &str = "server.resources.unknown";
/// resources/subscribe and resources/unsubscribe answer an empty result where `subscribe` is declared.
pub const SUBSCRIBE: &str = "server.resources.subscribe";

/// notifications/resources/updated only where `subscribe` is declared, for a URI subscribed to.
pub const UPDATED: &str = "server.resources.updated";

/// The most resources read by [`read`].
const MAX_READ: usize = 8;

/// The URI read by [`unknown`].
pub const NO_SUCH_URI: &str = "mcp-conformance://no-such-resource";

/// Judges a listing of resources (`key` = `uri`) or templates (`key` = `uriTemplate`).
pub fn judge_list(listed: &Listed, key: &str) -> Finding {
    if let Some(finding) = broken(listed) {
        return finding;
    }
    for item in &listed.items {
        if !item.get(key).is_some_and(Value::is_string)
            || !item.get("name").is_some_and(Value::is_string)
        {
            return Finding::Fail(Failure::new(
                format!("every item has a string `{key}` and `name`"),
                format!("{item}"),
            ));
        }
        if let Some(mime) = item.get("mimeType") {
            if !mime.as_str().is_some_and(content::is_mime_type) {
                return Finding::Fail(Failure::new(
                    "a mimeType of the form type/subtype",
                    format!("{item}"),
                ));
            }
        }
    }
    Finding::pass_with(format!(
        "{} item(s) on {} page(s)",
        listed.items.len(),
        listed.pages
    ))
}

/// A template's URI with every `{variable}` (any RFC 6570 operator) replaced by `1`.
pub fn expand(template: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        match rest[start..].find('}') {
            Some(end) => {
                out.push('1');
                rest = &rest[start + end + 1..];
            }
            None => {
                rest = &rest[start..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Reads up to [`MAX_READ`] listed resources, then one URI from each template; judges the
/// contents of every result. A listed resource that cannot be read is noted (a server may
/// refuse one for its own reasons), a malformed answer fails.
pub async fn read(peer: &mut impl Peer, resources: &[Value], templates: &[Value]) -> Finding {
    let mut uris: Vec<String> = resources
        .iter()
        .filter_map(|r| r.get("uri").and_then(Value::as_str))
        .take(MAX_READ)
        .map(str::to_string)
        .collect();
    uris.extend(
        templates
            .iter()
            .filter_map(|t| t.get("uriTemplate").and_then(Value::as_str))
            .take(MAX_READ)
            .map(expand),
    );
    if uris.is_empty() {
        return Finding::skip("the server lists no resource and no template");
    }
    let (mut text, mut blob, mut refused) = (0, 0, Vec::new());
    for uri in &uris {
        let exchange = peer
            .request("resources/read", Some(json!({"uri": uri})))
            .await;
        let fail = |why: String| {
            Finding::Fail(
                Failure::new(
                    "a ReadResourceResult: `contents`, each with a uri and a text or base64 blob",
                    why,
                )
                .sent(&exchange.sent)
                .reply(&exchange),
            )
        };
        let Some(result) = exchange.result() else {
            if exchange.reply.is_err() {
                return fail(format!("`{uri}`: no answer"));
            }
            refused.push(uri.clone());
            continue;
        };
        let Some(contents) = result.get("contents").and_then(Value::as_array) else {
            return fail(format!("`{uri}`: no `contents` array"));
        };
        for item in contents {
            if let Err(why) = content::judge_resource_contents(item) {
                return fail(format!("`{uri}`: {why}"));
            }
            if item.get("blob").is_some() {
                blob += 1;
            } else {
                text += 1;
            }
        }
    }
    let refused = if refused.is_empty() {
        String::new()
    } else {
        format!("; refused: {}", refused.join(", "))
    };
    Finding::pass_with(format!(
        "{} URI(s) read: {text} text and {blob} blob contents{refused}",
        uris.len()
    ))
}

/// The last revision whose "resource not found" code is -32002; later ones (SEP-2164) ask
/// for -32602.
pub const RESOURCE_NOT_FOUND_32002_UNTIL: &str = "2025-11-25";

/// Reads a URI no server has: -32002 up to 2025-11-25, -32602 after.
pub async fn unknown(peer: &mut impl Peer, revision: &str) -> Finding {
    let exchange = peer
        .request("resources/read", Some(json!({"uri": NO_SUCH_URI})))
        .await;
    let what = format!("the unknown URI `{NO_SUCH_URI}` at {revision}");
    if revision > RESOURCE_NOT_FOUND_32002_UNTIL {
        expect_code(
            &exchange,
            &what,
            -32602,
            "-32602 (Invalid params: resource not found)",
        )
    } else {
        expect_code(&exchange, &what, -32002, "-32002 (Resource not found)")
    }
}

/// Subscribes to the first listed resource and unsubscribes.
pub async fn subscribe(peer: &mut impl Peer, capabilities: &Value, resources: &[Value]) -> Finding {
    if capabilities.pointer("/resources/subscribe") != Some(&json!(true)) {
        return Finding::skip("the server does not declare `resources.subscribe`");
    }
    let Some(uri) = resources
        .iter()
        .find_map(|r| r.get("uri").and_then(Value::as_str))
    else {
        return Finding::skip("the server lists no resource to subscribe to");
    };
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        let exchange = peer.request(method, Some(json!({"uri": uri}))).await;
        let empty = exchange
            .result()
            .and_then(Value::as_object)
            .is_some_and(|r| r.keys().all(|k| k == "_meta"));
        if !empty {
            return Finding::Fail(
                Failure::new(
                    format!("`{method}` answered with an empty result"),
                    format!("`{uri}`: {}", exchange.received()),
                )
                .sent(&exchange.sent)
                .reply(&exchange),
            );
        }
    }
    Finding::pass_with(format!("subscribed to and unsubscribed from `{uri}`"))
}

/// Judges the `notifications/resources/updated` in `log`: only from a server declaring
/// `resources.subscribe`, each for a URI the validator subscribed to (`subscribed`).
pub fn judge_updated(log: &[Value], capabilities: &Value, subscribed: &[String]) -> Finding {
    let mut seen = 0;
    for message in log {
        if message.get("method").and_then(Value::as_str) != Some("notifications/resources/updated")
        {
            continue;
        }
        seen += 1;
        let uri = message
            .pointer("/params/uri")
            .and_then(Value::as_str)
            .unwrap_or("(none)");
        let why = if capabilities.pointer("/resources/subscribe") != Some(&json!(true)) {
            "the server does not declare `resources.subscribe`".to_string()
        } else if !subscribed.iter().any(|s| s == uri) {
            format!("`{uri}` was never subscribed to")
        } else {
            continue;
        };
        return Finding::Fail(
            Failure::new(
                "`notifications/resources/updated` only for a resource subscribed to",
                why,
            )
            .received(Some(message.to_string())),
        );
    }
    Finding::pass_with(format!("{seen} resources/updated notification(s)"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn templates_expand_every_variable() {
        assert_eq!(super::expand("demo://r/{id}/x{?q,r}"), "demo://r/1/x1");
        assert_eq!(super::expand("file:///{+path}"), "file:///1");
        assert_eq!(super::expand("plain://a"), "plain://a");
    }
}
