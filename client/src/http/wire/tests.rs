//! Tests of the redaction of URLs, tokens and secrets in the transport's errors.

use super::*;
use crate::redact::KEY_LIKE_CHARS;

/// A small deterministic PRNG (xorshift64*), so the property test needs no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A key-like word: a `sk-`/`tok_` style prefix and enough random characters.
    fn key(&mut self) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
        let prefix = ["sk-live-", "tok_", "key", "Zx9"][self.below(4) as usize];
        let len = KEY_LIKE_CHARS + self.below(20) as usize;
        let mut key = prefix.to_string();
        while key.len() < len {
            key.push(ALPHABET[self.below(ALPHABET.len() as u64) as usize] as char);
        }
        key
    }

    /// A short part (under 8 characters), which stays.
    fn short(&mut self) -> String {
        ["mcp", "v1", "api", "a", "x=1", "rpc"][self.below(6) as usize].to_string()
    }
}

#[test]
fn no_key_like_part_of_thousands_of_urls_reaches_an_error() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..5000 {
        let mut keys = Vec::new();
        let host = ["127.0.0.1", "localhost", "[::1]"][rng.below(3) as usize];
        let port = 1024 + rng.below(60000);
        let scheme = if rng.below(2) == 0 { "http" } else { "https" };
        let mut userinfo = String::new();
        if rng.below(3) == 0 {
            let (user, pass) = (rng.key(), rng.key());
            userinfo = format!("{user}:{pass}@");
            keys.extend([user, pass]);
        }
        let mut path = String::new();
        for _ in 0..1 + rng.below(4) {
            let segment = if rng.below(2) == 0 {
                rng.short()
            } else {
                rng.key()
            };
            if segment.len() >= KEY_LIKE_CHARS {
                keys.push(segment.clone());
            }
            path.push('/');
            path.push_str(&segment);
        }
        let mut pairs = Vec::new();
        for _ in 0..rng.below(4) {
            let (name, value) = if rng.below(2) == 0 {
                ("k", rng.key())
            } else {
                ("apikey", rng.short())
            };
            let pair = format!("{name}={value}");
            if value.len() >= KEY_LIKE_CHARS {
                keys.push(value.clone());
            }
            if pair.len() >= KEY_LIKE_CHARS {
                keys.push(pair.clone());
            }
            pairs.push(pair);
        }
        let query = if pairs.is_empty() {
            String::new()
        } else {
            format!("?{}", pairs.join("&"))
        };
        let text = format!("{scheme}://{userinfo}{host}:{port}{path}{query}");
        let url = Url::parse(&text).unwrap();
        let origin = crate::redact::origin_of(&url);
        // A body that quotes the URL, its parts one by one, and a JSON-RPC-ish message.
        let body = format!(
            "no route for {text}; parts: {}; {{\"error\":{{\"message\":\"bad key {}\"}}}}",
            keys.join(" / "),
            keys.first().cloned().unwrap_or_default()
        );
        let status = [400u16, 401, 403, 404, 500, 502][rng.below(6) as usize];
        let prefix = format!("HTTP error reaching {origin}");
        let message = status_text(
            &prefix,
            StatusCode::from_u16(status).unwrap(),
            "",
            &body,
            &url,
        );
        assert!(
            message.starts_with(&format!("HTTP error reaching {origin}: {status}")),
            "round {round}: {message}"
        );
        for key in &keys {
            assert!(
                !message.contains(key.as_str()),
                "round {round}: '{key}' in {message}"
            );
        }
        let note = crate::redact::redact(&body, &url);
        for key in &keys {
            assert!(
                !note.contains(key.as_str()),
                "round {round}: '{key}' in {note}"
            );
        }
    }
}

#[test]
fn short_parts_stay_readable() {
    let url = Url::parse("http://127.0.0.1:4000/mcp?a=1").unwrap();
    let text = status_text(
        "HTTP error reaching http://127.0.0.1:4000",
        StatusCode::NOT_FOUND,
        "",
        "no /mcp?a=1 here",
        &url,
    );
    assert_eq!(
        text,
        "HTTP error reaching http://127.0.0.1:4000: 404 Not Found: no /mcp?a=1 here"
    );
}
