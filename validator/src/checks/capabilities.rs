//! `server.capabilities.honest`: declared capabilities answer their list methods, undeclared
//! ones get -32601.

use super::session::Rpc;
use crate::outcome::{Failure, Finding};
use serde_json::Value;

/// declared capabilities answer their list methods; undeclared ones get -32601.
pub const HONEST: &str = "server.capabilities.honest";

/// Each capability with a list method, and the method, in the order they are asked.
pub const LISTED: [(&str, &str); 3] = [
    ("tools", "tools/list"),
    ("prompts", "prompts/list"),
    ("resources", "resources/list"),
];

/// Asks each list method and compares with what `initialize` declared.
pub async fn honest(session: &mut impl Rpc, capabilities: &Value) -> Finding {
    let mut notes = Vec::new();
    for (capability, method) in LISTED {
        let declared = capabilities.get(capability).is_some();
        let exchange = session.request(method, None).await;
        let ok = if declared {
            exchange.result().is_some()
        } else {
            exchange.error_code() == Some(-32601)
        };
        if !ok {
            let expected = if declared {
                format!("`{capability}` is declared, so `{method}` answers with a result")
            } else {
                format!("`{capability}` is not declared, so `{method}` gets -32601")
            };
            let actual = match (exchange.result(), exchange.error_code()) {
                (Some(_), _) => "a result".to_string(),
                (None, Some(code)) => format!("error code {code}"),
                _ => "no response".to_string(),
            };
            return Finding::Fail(
                Failure::new(expected, actual)
                    .sent(&exchange.sent)
                    .reply(&exchange),
            );
        }
        notes.push(format!(
            "{capability} {}",
            if declared { "declared" } else { "not declared" }
        ));
    }
    Finding::pass_with(notes.join(", "))
}
