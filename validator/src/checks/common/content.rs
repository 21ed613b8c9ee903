//! Content blocks (tool results, prompt messages) and resource contents, judged beyond the
//! wire schema: the types of the negotiated revision, base64 that decodes, MIME types that
//! read as `type/subtype`.

use serde_json::Value;

/// The content types a revision defines.
pub fn content_types(revision: &str) -> &'static [&'static str] {
    if revision >= "2025-06-18" {
        &["text", "image", "audio", "resource", "resource_link"]
    } else if revision >= "2025-03-26" {
        &["text", "image", "audio", "resource"]
    } else {
        &["text", "image", "resource"]
    }
}

/// Whether `text` is standard base64 (padding required, whitespace not allowed).
pub fn is_base64(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() % 4 != 0 {
        return false;
    }
    let body = text.trim_end_matches('=');
    bytes.len() - body.len() <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// Whether `mime` reads as `type/subtype` (parameters allowed).
pub fn is_mime_type(mime: &str) -> bool {
    let essence = mime.split(';').next().unwrap_or("").trim();
    let token = |t: &str| {
        !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b))
    };
    matches!(essence.split_once('/'), Some((kind, sub)) if token(kind) && token(sub))
}

/// Judges one resource contents object (`resources/read`, an embedded resource).
pub fn judge_resource_contents(item: &Value) -> Result<(), String> {
    if !item.get("uri").is_some_and(Value::is_string) {
        return Err(format!("resource contents without a string `uri`: {item}"));
    }
    match (item.get("text"), item.get("blob")) {
        (Some(Value::String(_)), None) => {}
        (None, Some(Value::String(blob))) if is_base64(blob) => {}
        (None, Some(Value::String(_))) => {
            return Err(format!("a `blob` that is not base64 (uri {})", item["uri"]))
        }
        _ => {
            return Err(format!(
                "resource contents with neither a string `text` nor a `blob` (uri {})",
                item["uri"]
            ))
        }
    }
    match item.get("mimeType") {
        None => Ok(()),
        Some(Value::String(mime)) if is_mime_type(mime) => Ok(()),
        Some(other) => Err(format!(
            "mimeType {other} is not type/subtype (uri {})",
            item["uri"]
        )),
    }
}

/// Judges one content block at `revision`.
pub fn judge_block(block: &Value, revision: &str) -> Result<(), String> {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("(none)");
    if !content_types(revision).contains(&kind) {
        return Err(format!(
            "content type `{kind}` is not one of {} at {revision}",
            content_types(revision).join(", ")
        ));
    }
    let string = |key: &str| block.get(key).and_then(Value::as_str);
    match kind {
        "text" if string("text").is_none() => Err("a text block without a string `text`".into()),
        "image" | "audio" => match (string("data"), string("mimeType")) {
            (Some(data), Some(mime)) if is_base64(data) && is_mime_type(mime) => Ok(()),
            (Some(data), Some(_)) if !is_base64(data) => {
                Err(format!("an {kind} block whose `data` is not base64"))
            }
            (Some(_), Some(mime)) => Err(format!(
                "an {kind} block with mimeType `{mime}`, not type/subtype"
            )),
            _ => Err(format!(
                "an {kind} block without string `data` and `mimeType`"
            )),
        },
        "resource" => match block.get("resource") {
            Some(resource) => judge_resource_contents(resource),
            None => Err("a resource block without `resource`".into()),
        },
        "resource_link" if string("uri").is_none() || string("name").is_none() => {
            Err("a resource_link without string `uri` and `name`".into())
        }
        _ => Ok(()),
    }
}

/// Judges every block of a `content` array.
pub fn judge_blocks(content: Option<&Value>, revision: &str) -> Result<usize, String> {
    let Some(blocks) = content.and_then(Value::as_array) else {
        return Err("no `content` array".into());
    };
    for (index, block) in blocks.iter().enumerate() {
        judge_block(block, revision).map_err(|why| format!("content[{index}]: {why}"))?;
    }
    Ok(blocks.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base64_and_mime_types_are_told_from_their_lookalikes() {
        assert!(is_base64("aGk=") && is_base64("") && is_base64("aGVsbG8h"));
        assert!(!is_base64("aGk") && !is_base64("a b=") && !is_base64("aG=k"));
        assert!(is_mime_type("image/png") && is_mime_type("text/plain; charset=utf-8"));
        assert!(!is_mime_type("png") && !is_mime_type("image/") && !is_mime_type("a b/c"));
    }

    #[test]
    fn content_types_follow_the_revision() {
        let link = json!({"type": "resource_link", "uri": "file:///a", "name": "a"});
        assert!(judge_block(&link, "2025-06-18").is_ok());
        assert!(judge_block(&link, "2025-03-26")
            .unwrap_err()
            .contains("not one of"));
        let audio = json!({"type": "audio", "data": "aGk=", "mimeType": "audio/wav"});
        assert!(
            judge_block(&audio, "2024-11-05").is_err() && judge_block(&audio, "2025-03-26").is_ok()
        );
        let bad = json!({"type": "image", "data": "not base64!", "mimeType": "image/png"});
        assert!(judge_block(&bad, "2025-11-25")
            .unwrap_err()
            .contains("not base64"));
    }
}
