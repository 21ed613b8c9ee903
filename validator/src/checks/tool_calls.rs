//! `server.tools.*` beyond the listing: calling the server's own tools (only those the
//! [`CallPolicy`](crate::fixtures::CallPolicy) allows) with arguments built from
//! their `inputSchema`, and judging what comes back; probing them with arguments that violate
//! it; the names and annotations of the listed tools.

use super::common::calls::Call;
use super::common::content;
use super::session::peer::{request, Peer};
use crate::fixtures::invalid_arguments_for;
use crate::outcome::{Failure, Finding};
use serde_json::{json, Value};
use std::time::Duration;

/// a tool called with arguments valid for its inputSchema answers a result whose content blocks are valid for the revision.
pub const CALL: &str = "server.tools.call";
/// a tool failure is a result with `isError: true`, not a JSON-RPC error.
pub const ERROR_IN_RESULT: &str = "server.tools.error-in-result";
/// arguments violating the inputSchema are rejected (isError or -32602), never executed.
pub const INVALID_ARGUMENTS: &str = "server.tools.invalid-arguments";
/// structuredContent conforms to a declared outputSchema.
pub const OUTPUT_SCHEMA: &str = "server.tools.output-schema";
/// tool names follow the naming guidance (2025-11-25).
pub const NAMES: &str = "server.tools.names";
/// tool annotations are well-formed (2025-03-26).
pub const ANNOTATIONS: &str = "server.tools.annotations";
/// tool schemas are valid under their dialect, 2020-12 when none is named (2025-11-25).
pub const SCHEMA_DIALECT: &str = "server.tools.schema-dialect";

/// The revision from which a schema without `$schema` is JSON Schema 2020-12.
const DIALECT_SINCE: &str = "2025-11-25";

/// Judges the content of every answered call.
pub fn judge_calls(calls: &[Call], revision: &str) -> Finding {
    let mut judged = 0;
    let mut unanswered = Vec::new();
    for call in calls {
        let Some(result) = call.exchange.result() else {
            if call.exchange.reply.is_err() {
                unanswered.push(call.name().to_string());
            }
            continue;
        };
        if let Err(why) = content::judge_blocks(result.get("content"), revision) {
            return call.fail(
                "a CallToolResult whose content blocks are valid for the revision",
                format!("`{}`: {why}", call.name()),
            );
        }
        if !matches!(result.get("isError"), None | Some(Value::Bool(_))) {
            return call.fail(
                "`isError` a boolean",
                format!("`{}`: isError is {}", call.name(), result["isError"]),
            );
        }
        judged += 1;
    }
    if judged == 0 {
        return Finding::skip(format!(
            "no call answered with a result ({} called; unanswered: {})",
            calls.len(),
            list(&unanswered)
        ));
    }
    Finding::pass_with(format!(
        "{judged} of {} call(s) judged{}",
        calls.len(),
        not_answered(&unanswered)
    ))
}

/// Judges that calls with valid arguments failed, if at all, as results with `isError`.
pub fn judge_errors(calls: &[Call]) -> Finding {
    let answered: Vec<&Call> = calls.iter().filter(|c| c.exchange.reply.is_ok()).collect();
    if answered.is_empty() {
        return Finding::skip("no call was answered");
    }
    if let Some(call) = answered.iter().find(|c| c.exchange.error_code().is_some()) {
        return call.fail(
            "a tool failure reported as a result with `isError: true` (the arguments satisfy the inputSchema)",
            format!("`{}`: a JSON-RPC error {}", call.name(), call.exchange.error_code().unwrap_or_default()),
        );
    }
    let failed = answered
        .iter()
        .filter(|c| c.exchange.result().and_then(|r| r.get("isError")) == Some(&json!(true)))
        .count();
    Finding::pass_with(format!(
        "{} call(s) answered, {failed} of them tool errors with isError",
        answered.len()
    ))
}

/// Judges `structuredContent` against each called tool's `outputSchema`.
pub fn judge_output(calls: &[Call], listed: &[Value], revision: &str) -> Finding {
    if revision < "2025-06-18" {
        return Finding::skip(format!(
            "outputSchema is from 2025-06-18; the session speaks {revision}"
        ));
    }
    for tool in listed {
        if let Some(schema) = tool.get("outputSchema") {
            if schema.get("type") != Some(&json!("object")) {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                return Finding::Fail(Failure::new(
                    "an outputSchema with `type: \"object\"`",
                    format!(
                        "`{name}` has outputSchema {}",
                        crate::outcome::excerpt(&schema.to_string())
                    ),
                ));
            }
        }
    }
    let mut judged = 0;
    for call in calls {
        let (Some(schema), Some(result)) = (call.tool.get("outputSchema"), call.exchange.result())
        else {
            continue;
        };
        if result.get("isError") == Some(&json!(true)) {
            continue;
        }
        let Some(structured) = result.get("structuredContent") else {
            return call.fail(
                "`structuredContent` (the tool declares an outputSchema)",
                format!("`{}`: none", call.name()),
            );
        };
        let validator = match jsonschema::validator_for(schema) {
            Ok(validator) => validator,
            Err(e) => {
                return call.fail(
                    "an outputSchema that compiles",
                    format!("`{}`: {e}", call.name()),
                );
            }
        };
        if let Some(error) = validator.iter_errors(structured).next() {
            return call.fail(
                "`structuredContent` valid against the tool's outputSchema",
                format!("`{}`: {error} at {}", call.name(), error.instance_path),
            );
        }
        judged += 1;
    }
    if judged == 0 {
        return Finding::skip("no called tool with an outputSchema answered a successful result");
    }
    Finding::pass_with(format!("{judged} structured result(s) valid"))
}

/// Probes every tool of `tools` whose schema makes a demand with arguments violating it.
pub async fn probe_invalid(peer: &mut impl Peer, tools: &[Value], patience: Duration) -> Finding {
    let mut messages = Vec::new();
    let mut probes = Vec::new();
    for tool in tools {
        let Some((arguments, how)) =
            invalid_arguments_for(tool.get("inputSchema").unwrap_or(&json!({})))
        else {
            continue;
        };
        let id = peer.fresh_id();
        messages.push(request(
            id,
            "tools/call",
            Some(json!({"name": tool["name"], "arguments": arguments})),
        ));
        probes.push((tool["name"].as_str().unwrap_or_default().to_string(), how));
    }
    if messages.is_empty() {
        return Finding::skip("no callable tool's inputSchema requires a property or types one");
    }
    let exchanges = peer.all_at_once(messages, patience).await;
    let mut judged = 0;
    for ((name, how), exchange) in probes.iter().zip(&exchanges) {
        let rejected = exchange.error_code().is_some()
            || exchange.result().and_then(|r| r.get("isError")) == Some(&json!(true));
        if rejected {
            judged += 1;
        } else if exchange.result().is_some() {
            return Finding::Fail(
                Failure::new(
                    "a tool error (`isError: true`) or a JSON-RPC error (-32602) for arguments that violate the inputSchema",
                    format!("`{name}` ({how}) answered a result without isError: it ran"),
                )
                .sent(&exchange.sent)
                .reply(&exchange),
            );
        }
    }
    if judged == 0 {
        return Finding::skip(format!("no probe answered within {patience:?}"));
    }
    Finding::pass_with(format!("{judged} of {} probe(s) rejected", probes.len()))
}

/// Judges the listed tools' names against the 2025-11-25 naming guidance.
pub fn judge_names(tools: &[Value], revision: &str) -> Finding {
    if revision < "2025-11-25" {
        return Finding::skip(format!(
            "the tool naming guidance is from 2025-11-25; the session speaks {revision}"
        ));
    }
    for tool in tools {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        let length = name.chars().count();
        let bad = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')));
        if !(1..=128).contains(&length) || bad.is_some() {
            let why = match bad {
                Some(c) => format!("`{}` has the character {c:?}", name.escape_debug()),
                None => format!("`{}` is {length} characters long", name.escape_debug()),
            };
            return Finding::Fail(Failure::new(
                "tool names of 1-128 characters from A-Z, a-z, 0-9, _, - and .",
                why,
            ));
        }
    }
    if tools.is_empty() {
        return Finding::skip("the server lists no tool");
    }
    Finding::pass_with(format!("{} name(s)", tools.len()))
}

/// Judges the listed tools' `inputSchema` and `outputSchema` against the meta-schema of their
/// dialect: the one `$schema` names, JSON Schema 2020-12 when it names none (2025-11-25 on). A
/// draft-04 or draft-07 schema sent without its `$schema` (`exclusiveMinimum: true`, an
/// array of `items`) fails; a dialect the validator does not know is noted, not judged.
pub fn judge_schema_dialect(tools: &[Value], revision: &str) -> Finding {
    if revision < DIALECT_SINCE {
        return Finding::skip(format!(
            "2020-12 is the default dialect from {DIALECT_SINCE}; the session speaks {revision}"
        ));
    }
    let (mut judged, mut unknown) = (0, Vec::new());
    for tool in tools {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        for key in ["inputSchema", "outputSchema"] {
            let Some(schema) = tool.get(key).filter(|s| s.is_object()) else {
                continue;
            };
            match jsonschema::meta::try_validate(schema) {
                Err(_) => unknown.push(format!("`{}` {key}", name.escape_debug())),
                Ok(Ok(())) => judged += 1,
                Ok(Err(error)) => {
                    let dialect = schema
                        .get("$schema")
                        .and_then(Value::as_str)
                        .map_or("JSON Schema 2020-12 (no `$schema`)".to_string(), |d| {
                            format!("its `$schema` {}", d.escape_debug())
                        });
                    return Finding::Fail(
                        Failure::new(
                            "tool schemas valid under their dialect: the one `$schema` names, 2020-12 when none",
                            format!(
                                "`{}` {key} is not valid under {dialect}: {error} (at {})",
                                name.escape_debug(),
                                error.instance_path
                            ),
                        )
                        .received(Some(schema.to_string())),
                    );
                }
            }
        }
    }
    let note = match unknown.len() {
        0 => String::new(),
        n => format!(
            "; {n} in a dialect the validator does not know, not judged: {}",
            unknown.join(", ")
        ),
    };
    if judged == 0 {
        return Finding::skip(format!("no tool schema to judge{note}"));
    }
    Finding::pass_with(format!("{judged} schema(s) valid{note}"))
}

/// Judges the listed tools' annotations (2025-03-26 on).
pub fn judge_annotations(tools: &[Value], revision: &str) -> Finding {
    if revision < "2025-03-26" {
        return Finding::skip(format!(
            "tool annotations are from 2025-03-26; the session speaks {revision}"
        ));
    }
    let mut annotated = 0;
    for tool in tools {
        let Some(annotations) = tool.get("annotations") else {
            continue;
        };
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        let fail = |why: String| {
            Finding::Fail(Failure::new(
                "annotations an object: `title` a string, `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint` booleans",
                format!("`{name}`: {why}"),
            ))
        };
        let Some(map) = annotations.as_object() else {
            return fail(format!("annotations is {annotations}"));
        };
        for (key, value) in map {
            let ok = match key.as_str() {
                "title" => value.is_string(),
                "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint" => {
                    value.is_boolean()
                }
                _ => true,
            };
            if !ok {
                return fail(format!("`{key}` is {value}"));
            }
        }
        annotated += 1;
    }
    if annotated == 0 {
        return Finding::skip(format!(
            "none of the {} listed tool(s) has annotations",
            tools.len()
        ));
    }
    Finding::pass_with(format!("{annotated} annotated tool(s)"))
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

fn not_answered(names: &[String]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!("; not answered in time (cancelled): {}", names.join(", "))
    }
}
