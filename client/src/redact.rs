//! Keeping an HTTP server's URL out of error text: [`origin_of`] names the server by scheme,
//! host and port only, and [`redact`] replaces the URL's key-like parts in quoted text.
//!
//! ```
//! use mcp_refclient::redact::{origin_of, redact};
//! let url = url::Url::parse("https://mcp.example.com/mcp/sk-live-4f9a8b7c?token=abcdefgh12").unwrap();
//! assert_eq!(origin_of(&url), "https://mcp.example.com:443");
//! let text = redact("no route /mcp/sk-live-4f9a8b7c?token=abcdefgh12", &url);
//! assert_eq!(text, "no route /mcp/[redacted]?[redacted]");
//! ```

use url::Url;

/// Parts of a URL this long or longer are taken for keys.
pub const KEY_LIKE_CHARS: usize = 8;

/// What replaces a key-like part.
pub const REDACTED: &str = "[redacted]";

/// The server's origin as error text names it: `scheme://host:port`, the port always shown.
pub fn origin_of(url: &Url) -> String {
    let host = url.host_str().unwrap_or("");
    match url.port_or_known_default() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

/// The URL's key-like parts: each path segment, query pair (`k=v` whole), query value, user
/// name and password of [`KEY_LIKE_CHARS`] or more characters, as written and decoded,
/// longest first.
pub fn key_like_parts(url: &Url) -> Vec<String> {
    let mut parts = Vec::new();
    let mut add = |raw: &str| {
        for form in [raw.to_string(), decode(raw)] {
            if form.chars().count() >= KEY_LIKE_CHARS && !parts.contains(&form) {
                parts.push(form);
            }
        }
    };
    if let Some(segments) = url.path_segments() {
        segments.for_each(&mut add);
    }
    if let Some(query) = url.query() {
        for pair in query.split('&') {
            add(pair);
            if let Some((_, value)) = pair.split_once('=') {
                add(value);
            }
        }
    }
    add(url.username());
    if let Some(password) = url.password() {
        add(password);
    }
    // Longest first, so a whole pair goes before the value inside it.
    parts.sort_by_key(|p| std::cmp::Reverse(p.len()));
    parts
}

/// Percent-decodes (and `+` as space in no case: paths and queries keep it), lossily.
fn decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(byte) = hex {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `text` with every key-like part of `url` replaced by `[redacted]`, in one left-to-right
/// pass (a replacement is never searched again).
pub fn redact(text: &str, url: &Url) -> String {
    let parts = key_like_parts(url);
    if parts.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while let Some(c) = rest.chars().next() {
        for part in &parts {
            if rest.starts_with(part.as_str()) {
                out.push_str(REDACTED);
                rest = &rest[part.len()..];
                continue 'scan;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `text`, cut short by a reader's cap, without a tail that begins one of `secrets`: a secret
/// cut in two is no longer found whole by a redaction, so the start of it is hidden here
/// (`[redacted]` in its place). Tails shorter than `min_chars` are left (they tell nothing).
pub fn hide_cut_secret<'a>(
    text: &str,
    secrets: impl IntoIterator<Item = &'a str>,
    min_chars: usize,
) -> String {
    let mut cut = 0;
    for secret in secrets {
        // The longest tail of `text` that is a proper start of `secret`.
        let longest = (min_chars.max(1)..secret.len().min(text.len() + 1))
            .rev()
            .find(|&n| secret.is_char_boundary(n) && text.ends_with(&secret[..n]));
        cut = cut.max(longest.unwrap_or(0));
    }
    if cut == 0 {
        return text.to_string();
    }
    format!("{}{REDACTED}", &text[..text.len() - cut])
}

/// How much of a quoted body error text keeps, in characters.
pub(crate) const QUOTED_CHARS: usize = 300;

/// A server body or message for error text: redacted first, then trimmed and cut to
/// [`QUOTED_CHARS`].
pub(crate) fn quote(text: &str, url: &Url) -> String {
    let redacted = redact(text, url);
    let text = redacted.trim();
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_of_a_secret_cut_by_a_cap_is_hidden() {
        let secrets = ["sk-live-0123456789", "other-secret"];
        assert_eq!(
            hide_cut_secret("error: key=sk-live-01", secrets, 4),
            "error: key=[redacted]"
        );
        assert_eq!(
            hide_cut_secret("error: key=sk-live-0123456789", secrets, 4),
            "error: key=sk-live-0123456789",
            "whole: the redaction's job"
        );
        assert_eq!(
            hide_cut_secret("error: sk-", secrets, 4),
            "error: sk-",
            "shorter than min_chars"
        );
        assert_eq!(
            hide_cut_secret("error: sk-l", secrets, 4),
            "error: [redacted]"
        );
        assert_eq!(hide_cut_secret("plain text", secrets, 4), "plain text");
        assert_eq!(hide_cut_secret("…other-s", secrets, 4), "…[redacted]");
        assert_eq!(hide_cut_secret("", secrets, 4), "");
    }

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn the_origin_is_scheme_host_and_port() {
        assert_eq!(
            origin_of(&url("https://user:pw@host.example/a/b?c=d")),
            "https://host.example:443"
        );
        assert_eq!(
            origin_of(&url("http://127.0.0.1:4000/mcp")),
            "http://127.0.0.1:4000"
        );
        assert_eq!(origin_of(&url("http://[::1]:8080/")), "http://[::1]:8080");
        assert_eq!(origin_of(&url("http://localhost/")), "http://localhost:80");
    }

    #[test]
    fn short_parts_stay_and_key_like_parts_go() {
        let u = url("https://alice-the-admin:hunter2hunter2@h.example/mcp/sk-live-4f9a8b7c?a=1&apikey=0123456789&longpair=x");
        let text = "GET /mcp/sk-live-4f9a8b7c?a=1&apikey=0123456789&longpair=x by alice-the-admin:hunter2hunter2";
        assert_eq!(
            redact(text, &u),
            "GET /mcp/[redacted]?a=1&[redacted]&[redacted] by [redacted]:[redacted]"
        );
    }

    #[test]
    fn a_value_alone_is_redacted_too() {
        let u = url("http://127.0.0.1:1/mcp?key=abcdefgh");
        assert_eq!(redact("bad key abcdefgh", &u), "bad key [redacted]");
        assert_eq!(redact("bad key=abcdefgh", &u), "bad [redacted]");
    }

    #[test]
    fn decoded_forms_are_redacted() {
        let u = url("http://127.0.0.1:1/mcp/secret%20value%21");
        assert_eq!(redact("no such secret value!", &u), "no such [redacted]");
        assert_eq!(
            redact("no such secret%20value%21", &u),
            "no such [redacted]"
        );
    }

    #[test]
    fn a_replacement_is_not_redacted_again() {
        let u = url("http://127.0.0.1:1/redacted/[redacted]x");
        assert_eq!(redact("at redacted", &u), "at [redacted]");
    }

    #[test]
    fn quoted_text_is_cut_after_redaction() {
        let u = url("http://127.0.0.1:1/sk-0123456789");
        let body = format!("{} sk-0123456789", "x".repeat(400));
        let quoted = quote(&body, &u);
        assert!(!quoted.contains("sk-0123456789"));
        assert_eq!(quoted.chars().count(), QUOTED_CHARS + 1);
        assert_eq!(quote(" sk-0123456789 \n", &u), "[redacted]");
    }
}
