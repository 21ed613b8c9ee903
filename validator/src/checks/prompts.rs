//! `server.prompts.*` (when the server declares `prompts`): the list, getting each listed
//! prompt with its declared arguments, and the errors for a missing argument or an unknown name.

use super::common::content;
use super::common::expect::{broken, expect_invalid_params};
use super::session::peer::Peer;
use crate::fixtures::Listed;
use crate::outcome::{Failure, Finding};
use serde_json::{json, Map, Value};

/// prompts/list pages end, and every prompt has a unique string name and well-formed arguments.
pub const LIST: &str = "server.prompts.list";
/// prompts/get with the declared arguments answers messages with a role and valid content.
pub const GET: &str = "server.prompts.get";
/// prompts/get without a required argument gets -32602.
pub const MISSING_ARGUMENT: &str = "server.prompts.missing-argument";
/// prompts/get for a name the server does not have gets -32602.
pub const UNKNOWN: &str = "server.prompts.unknown";

/// The most prompts got by [`get`].
const MAX_GOT: usize = 10;

/// The name asked for by [`unknown`].
pub const NO_SUCH_PROMPT: &str = "mcp-conformance-no-such-prompt";

/// Judges the listing.
pub fn judge_list(listed: &Listed) -> Finding {
    if let Some(finding) = broken(listed) {
        return finding;
    }
    let mut names = std::collections::HashSet::new();
    for prompt in &listed.items {
        let Some(name) = prompt.get("name").and_then(Value::as_str) else {
            return Finding::Fail(Failure::new(
                "every prompt has a string `name`",
                format!("a prompt without one: {prompt}"),
            ));
        };
        if !names.insert(name) {
            return Finding::Fail(Failure::new(
                "unique prompt names",
                format!("`{name}` listed twice"),
            ));
        }
        for argument in prompt
            .get("arguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if !argument.get("name").is_some_and(Value::is_string)
                || !matches!(argument.get("required"), None | Some(Value::Bool(_)))
            {
                return Finding::Fail(Failure::new(
                    "prompt arguments with a string `name` and a boolean `required`",
                    format!("`{name}` has argument {argument}"),
                ));
            }
        }
    }
    Finding::pass_with(format!(
        "{} prompt(s) on {} page(s)",
        listed.items.len(),
        listed.pages
    ))
}

fn required(prompt: &Value) -> Vec<String> {
    prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|a| a.get("required") == Some(&json!(true)))
        .filter_map(|a| a.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Gets each listed prompt (at most [`MAX_GOT`]) with its required arguments; judges the
/// messages of each result (an error is noted: the values are the validator's own guesses).
pub async fn get(peer: &mut impl Peer, prompts: &[Value], revision: &str) -> Finding {
    if prompts.is_empty() {
        return Finding::skip("the server lists no prompt");
    }
    let mut judged = 0;
    let mut refused = Vec::new();
    for prompt in prompts.iter().take(MAX_GOT) {
        let name = prompt
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments: Map<String, Value> = required(prompt)
            .into_iter()
            .map(|a| (a, json!("mcp-conformance")))
            .collect();
        let exchange = peer
            .request(
                "prompts/get",
                Some(json!({"name": name, "arguments": arguments})),
            )
            .await;
        let fail = |why: String| {
            Finding::Fail(
                Failure::new("a GetPromptResult: `messages`, each with role user or assistant and valid content", why)
                    .sent(&exchange.sent)
                    .reply(&exchange),
            )
        };
        let Some(result) = exchange.result() else {
            if exchange.reply.is_err() {
                return fail(format!("`{name}`: no answer"));
            }
            refused.push(name.to_string());
            continue;
        };
        let Some(messages) = result.get("messages").and_then(Value::as_array) else {
            return fail(format!("`{name}`: no `messages` array"));
        };
        for (index, message) in messages.iter().enumerate() {
            if !matches!(
                message.get("role").and_then(Value::as_str),
                Some("user" | "assistant")
            ) {
                return fail(format!(
                    "`{name}` messages[{index}] has role {}",
                    message.get("role").unwrap_or(&Value::Null)
                ));
            }
            let Some(block) = message.get("content") else {
                return fail(format!("`{name}` messages[{index}] has no content"));
            };
            if let Err(why) = content::judge_block(block, revision) {
                return fail(format!("`{name}` messages[{index}]: {why}"));
            }
        }
        judged += 1;
    }
    let refused = if refused.is_empty() {
        String::new()
    } else {
        format!(
            "; refused the validator's argument values: {}",
            refused.join(", ")
        )
    };
    Finding::pass_with(format!("{judged} prompt(s) got{refused}"))
}

/// Gets a prompt with a required argument without it.
pub async fn missing_argument(peer: &mut impl Peer, prompts: &[Value]) -> Finding {
    let Some((prompt, missing)) = prompts
        .iter()
        .find_map(|p| required(p).first().cloned().map(|a| (p, a)))
    else {
        return Finding::skip("no listed prompt has a required argument");
    };
    let name = prompt
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let arguments: Map<String, Value> = required(prompt)
        .into_iter()
        .filter(|a| *a != missing)
        .map(|a| (a, json!("mcp-conformance")))
        .collect();
    let exchange = peer
        .request(
            "prompts/get",
            Some(json!({"name": name, "arguments": arguments})),
        )
        .await;
    expect_invalid_params(
        &exchange,
        &format!("`{name}` without its required argument `{missing}`"),
    )
}

/// Gets a prompt that does not exist.
pub async fn unknown(peer: &mut impl Peer) -> Finding {
    let exchange = peer
        .request("prompts/get", Some(json!({"name": NO_SUCH_PROMPT})))
        .await;
    expect_invalid_params(&exchange, &format!("the unknown prompt `{NO_SUCH_PROMPT}`"))
}
