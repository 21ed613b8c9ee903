//! Redaction holds end to end: for generated URLs carrying key-like parts and credentials,
//! served by the HTTP mock and quoted back in its error bodies, no error text, log line or
//! transcript (what a snapshot holds) contains any of them, and the origin is still named.

use super::support::*;
use mcp_conformance::runner::transcript;
use mcp_conformance::scenario::{self, LoadedScenario};
use mcp_conformance::verdict;
use mcp_refclient::{Profile, TestHooks};

/// A small deterministic generator (xorshift), so a failure names a reproducible round.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A key-like token: 8 to 24 characters of URL-safe alphabet, with a recognizable head.
    fn key(&mut self, head: &str) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
        let len = 8 + (self.next() % 17) as usize;
        let tail: String = (0..len)
            .map(|_| ALPHABET[(self.next() % ALPHABET.len() as u64) as usize] as char)
            .collect();
        format!("{head}{tail}")
    }
}

/// One generated case: the scenario text and the secrets it carries.
fn case(rng: &mut Rng, round: usize) -> (String, Vec<String>) {
    let segment = rng.key("sk-");
    let query_value = rng.key("qv");
    let pair_key = rng.key("token");
    let user = rng.key("u");
    let password = rng.key("p");
    let path = format!("/v1/{segment}/mcp?api_key={query_value}&{pair_key}=x");
    let how = round % 3;
    let (url, body) = match how {
        // The key-like parts quoted back through the URL the request reached.
        0 => (
            format!("${{primary}}{path}"),
            "upstream refused ${url}".to_string(),
        ),
        // The server quotes them verbatim, with the caller's user name and password.
        1 => (
            format!("http://{user}:{password}@127.0.0.1:${{port}}{path}"),
            format!("bad credentials {user}:{password} for {segment} and {query_value}"),
        ),
        // A JSON-RPC-shaped body naming the path.
        _ => (
            format!("${{primary}}{path}"),
            format!("{{\"error\": \"no such key {segment}\", \"path\": \"${{path}}\"}}"),
        ),
    };
    let text = format!(
        r#"
rules = ["redaction.key-like-parts"]
requirement = "generated"
profiles = ["strict"]

[server]
transport = "http"
http = {{ path = {path:?} }}
steps = [{{ expect = {{ method = "initialize" }} }}, {{ respond = {{ status = 500, body = {body:?} }} }}]

[client]
http = {{ url = {url:?} }}
steps = [{{ connect = {{}} }}]

[expect]
steps = [{{ step = 1, error = "http" }}]
"#
    );
    let mut secrets = vec![segment, query_value, pair_key];
    if how == 1 {
        secrets.extend([user, password]);
    }
    (text, secrets)
}

fn load_text(text: &str) -> LoadedScenario {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("generated.toml");
    std::fs::write(&path, text).unwrap();
    scenario::load(folder.path(), &path)
        .unwrap_or_else(|e| panic!("{}\n{text}", mcp_conformance::error_chain(&e)))
}

#[test]
fn no_key_like_part_or_credential_of_thousands_of_generated_urls_reaches_an_error_a_log_or_a_transcript(
) {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    const ROUNDS: usize = 2000;
    for round in 0..ROUNDS {
        let (text, secrets) = case(&mut rng, round);
        let loaded = load_text(&text);
        let (_, outcome) =
            verdict::run_one(&loaded, Profile::Strict, &launcher(), &TestHooks::default());
        let error = match &outcome.steps[0].result {
            Err(e) => e.text.clone(),
            Ok(v) => panic!("round {round}: connect succeeded: {v}\n{text}"),
        };
        assert!(
            error.contains("HTTP error reaching http://127.0.0.1:"),
            "round {round}: the origin is not named: {error}"
        );
        let logs: Vec<String> = outcome.logs.iter().map(|e| e.message.clone()).collect();
        let shown = transcript::render(&outcome);
        for secret in &secrets {
            assert!(
                !error.contains(secret.as_str()),
                "round {round}: {secret} in the error: {error}"
            );
            assert!(
                !logs.iter().any(|l| l.contains(secret.as_str())),
                "round {round}: {secret} in a log line: {logs:?}"
            );
            assert!(
                !shown.contains(secret.as_str()),
                "round {round}: {secret} in the transcript:\n{shown}"
            );
        }
    }
}
