//! Keeping the run's secrets out of everything the validator prints or writes: the values of
//! `--header` and of a config file's `headers`, `--env` and config `env` values, and the
//! credentials and key-like parts of a target URL (the reference client's rules,
//! [`mcp_refclient::redact`]). A server that echoes a header, hands a token back as its
//! `Mcp-Session-Id` or puts it in an error message gets `[redacted]` in the report.
//!
//! The secrets are registered once, before any server is contacted, and every text a server
//! sent is scrubbed before it is cut to an excerpt (so no prefix of a secret survives a cut),
//! then each report field again before it is rendered.

use mcp_refclient::redact::{redact, REDACTED};
use std::sync::Mutex;
use url::Url;

/// A header value this long or longer is a secret (the reference client's bound).
pub const MIN_HEADER_SECRET: usize = 4;
/// An environment value this long or longer is a secret (shorter ones are flags: `1`, `true`).
pub const MIN_ENV_SECRET: usize = mcp_refclient::redact::KEY_LIKE_CHARS;

#[derive(Default)]
struct Secrets {
    values: Vec<String>,
    urls: Vec<Url>,
}

static SECRETS: Mutex<Secrets> = Mutex::new(Secrets {
    values: Vec::new(),
    urls: Vec::new(),
});

fn secrets() -> std::sync::MutexGuard<'static, Secrets> {
    SECRETS.lock().unwrap_or_else(|e| e.into_inner())
}

fn add_value(value: &str, min: usize) {
    let value = value.trim();
    let mut secrets = secrets();
    // A bearer or basic value is also hidden without its scheme word.
    let bare = value
        .split_once(' ')
        .map(|(_, rest)| rest.trim())
        .unwrap_or("");
    for part in [value, bare] {
        if part.chars().count() >= min && !secrets.values.iter().any(|v| v == part) {
            secrets.values.push(part.to_string());
        }
    }
    // Longest first, so a whole value goes before a part of it.
    secrets.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
}

/// Registers a header value (`--header`, config `headers`).
pub fn header_value(value: &str) {
    add_value(value, MIN_HEADER_SECRET);
}

/// Registers an environment value (`--env`, config `env`).
pub fn env_value(value: &str) {
    add_value(value, MIN_ENV_SECRET);
}

/// Registers a target URL: its user name and password (any length) and its key-like parts.
pub fn url(text: &str) {
    let Ok(url) = Url::parse(text) else { return };
    for part in [url.username(), url.password().unwrap_or("")] {
        add_value(part, MIN_HEADER_SECRET);
    }
    let mut secrets = secrets();
    if !secrets.urls.contains(&url) {
        secrets.urls.push(url);
    }
}

/// `text` with every registered secret replaced by `[redacted]`.
pub fn scrub(text: &str) -> String {
    let secrets = secrets();
    let mut text = text.to_string();
    for url in &secrets.urls {
        text = redact(&text, url);
    }
    for value in &secrets.values {
        if text.contains(value.as_str()) {
            text = text.replace(value.as_str(), REDACTED);
        }
    }
    text
}

/// A URL as reports name it: user name and password replaced, then scrubbed.
pub fn public_url(text: &str) -> String {
    match Url::parse(text) {
        Ok(mut url) if !url.username().is_empty() || url.password().is_some() => {
            let _ = url.set_password(None);
            let _ = url.set_username("");
            let shown = url.to_string();
            let shown = shown.replacen("://", &format!("://{REDACTED}@"), 1);
            scrub(&shown)
        }
        _ => scrub(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_values_and_url_parts_are_scrubbed() {
        header_value("Bearer tok-hdr-123");
        env_value("short");
        env_value("env-secret-value");
        url("http://alice:pw12@127.0.0.1:1/mcp?token=url-secret-99");
        let text = "echo tok-hdr-123 / Bearer tok-hdr-123 / env-secret-value / token=url-secret-99 / short / pw12";
        assert_eq!(
            scrub(text),
            "echo [redacted] / [redacted] / [redacted] / [redacted] / short / [redacted]"
        );
        assert_eq!(
            public_url("http://alice:pw12@127.0.0.1:1/mcp"),
            "http://[redacted]@127.0.0.1:1/mcp"
        );
    }
}
