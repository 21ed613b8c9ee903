//! The options of `mcp-conformance validate`.

use std::path::PathBuf;
use std::time::Duration;

/// Validate a third-party MCP server: which server rules does it keep?
///
/// Targets: `validate -- COMMAND [ARGS...]` (stdio), `validate --url URL` (Streamable HTTP),
/// `validate --config FILE [NAME...]` (an `mcpServers` config file), `validate
/// --authorization-server URL` (an OAuth 2.1 authorization server on its own).
/// Exit codes: 0 clean, 1 failures, 2 usage, 3 harness fault (an unwritable report too),
/// 4 target unreachable, 5 inconclusive (nothing failed, a check only ran out of time),
/// 128 + the signal's number when SIGINT, SIGTERM or SIGHUP stop it.
#[derive(Clone, Debug, clap::Args)]
#[command(
    override_usage = "mcp-conformance validate [OPTIONS] -- COMMAND [ARGS...]\n       \
    mcp-conformance validate [OPTIONS] --url URL [--header 'Name: value']...\n       \
    mcp-conformance validate [OPTIONS] --config FILE [NAME...]\n       \
    mcp-conformance validate [OPTIONS] --authorization-server URL [--oauth CLIENT_ID]"
)]
pub struct ValidateArgs {
    /// With --config: the servers to validate (all when none is named).
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// The server command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
    /// An environment variable for the command, KEY=VALUE (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// A Streamable HTTP endpoint to validate.
    #[arg(long, value_name = "URL", conflicts_with = "config")]
    pub url: Option<String>,
    /// An OAuth 2.1 authorization server to validate on its own, named by its issuer
    /// identifier: its metadata (found in the specification's order, well-formed, with
    /// `S256`) and, with --oauth CLIENT_ID, the authorization-code grant with PKCE.
    #[arg(long = "authorization-server", value_name = "URL")]
    pub authorization_server: Option<String>,
    /// A header for every HTTP request, 'Name: value' (repeatable).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// With --url: obtain the access token through the authorization-code grant with PKCE,
    /// headless, as the pre-registered public client CLIENT_ID, for a test authorization
    /// server that approves at once (its redirect to http://127.0.0.1/callback is read, never
    /// opened; --oauth-browser for a person instead); every check then runs with it, as with
    /// --header 'Authorization: Bearer …'.
    /// With --authorization-server: the grant is judged (server.auth.authorization-code-grant).
    #[arg(long, value_name = "CLIENT_ID")]
    pub oauth: Option<String>,
    /// With --oauth and --url: a person plays the user agent. The authorization URL is
    /// printed on stderr to be opened in a browser, and the redirect URI is
    /// http://127.0.0.1:PORT/callback, a listener on a loopback port (RFC 8252), which the
    /// browser comes back to with the code. For an authorization server that asks a person
    /// to sign in.
    #[arg(long = "oauth-browser")]
    pub oauth_browser: bool,
    /// With --oauth-browser: the loopback port of the redirect URI, for an authorization
    /// server that registered the client's redirect URI with its port (default: any free port).
    #[arg(long = "oauth-redirect-port", value_name = "PORT")]
    pub oauth_redirect_port: Option<u16>,
    /// With --oauth-browser: the longest wait for the browser to come back.
    #[arg(long = "oauth-wait", value_name = "DURATION", default_value = "300s", value_parser = parse_duration)]
    pub oauth_wait: Duration,
    /// With --url: an access token the server's authorization server issued for another
    /// resource (a secret, never shown); `server.auth.audience` checks that the server refuses
    /// it with 401.
    #[arg(long = "token-for-other-resource", value_name = "TOKEN")]
    pub token_for_other_resource: Option<String>,
    /// With --url: an access token of the server's authorization server without the scope
    /// the server needs (a secret, never shown); `server.auth.insufficient-scope` checks that
    /// it gets 403 with `error="insufficient_scope"` and the `scope` needed.
    #[arg(long = "token-without-scope", value_name = "TOKEN")]
    pub token_without_scope: Option<String>,
    /// HTTPS: a PEM file of CA certificates to trust besides the system roots
    /// (verification is never turned off).
    #[arg(long = "ca-cert", value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// An `mcpServers` JSON config file (as desktop hosts write them).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The protocol revision(s) to judge at: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25,
    /// 2026-07-28 (comma-separated or repeated; the checks run once per revision). Default:
    /// 2026-07-28 if the server speaks it (answers `server/discover`), and 2025-11-25 if it
    /// answers `initialize`.
    #[arg(long = "revision", value_name = "REV", value_delimiter = ',')]
    pub revisions: Vec<String>,
    /// Also call this tool (repeatable). By default only tools annotated `readOnlyHint: true`
    /// are called; a tool named here may change things (write files, send mail), so name it
    /// only when that is safe. Probes with invalid arguments are calls too.
    #[arg(long = "call-tool", value_name = "NAME")]
    pub call_tools: Vec<String>,
    /// Judge every check as must (should-failures fail the run).
    #[arg(long)]
    pub strict: bool,
    /// Run only the checks whose id starts with this prefix (repeatable).
    #[arg(long = "only", value_name = "PREFIX")]
    pub only: Vec<String>,
    /// A TOML file of expected failures with reasons; an entry that passes fails the run.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write a JSON report to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report to this file.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// The bound on every single wait (a response, a write, an HTTP request, a server's exit
    /// after stdin closes), however busy the stream: 10s, 500ms, 2.5; from 1ms to 86400s.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub timeout: Duration,
}

/// The shortest `--timeout`: shorter bounds cannot be told from scheduling noise.
pub const MIN_TIMEOUT: Duration = Duration::from_millis(1);
/// The longest `--timeout`: a day.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);

/// Parses `10s`, `500ms`, `2.5` (seconds), from 1ms to 86400s.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, scale) = if let Some(ms) = text.strip_suffix("ms") {
        (ms, 0.001)
    } else if let Some(s) = text.strip_suffix('s') {
        (s, 1.0)
    } else {
        (text, 1.0)
    };
    let seconds = match number.trim().parse::<f64>() {
        Ok(n) if n.is_finite() => n * scale,
        _ => return Err(format!("`{text}` is not a duration (e.g. 10s, 500ms)")),
    };
    if seconds < MIN_TIMEOUT.as_secs_f64() {
        return Err(format!("`{text}` is shorter than the least bound, 1ms"));
    }
    if seconds > MAX_TIMEOUT.as_secs_f64() {
        return Err(format!(
            "`{text}` is longer than the greatest bound, 86400s (a day)"
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_seconds_or_milliseconds() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2.5"), Ok(Duration::from_millis(2500)));
        assert!(parse_duration("0").is_err());
        assert_eq!(parse_duration("86400s"), Ok(MAX_TIMEOUT));
        assert_eq!(parse_duration("1ms"), Ok(MIN_TIMEOUT));
        assert!(parse_duration("1e-300")
            .unwrap_err()
            .contains("shorter than the least bound"));
        assert!(parse_duration("86401")
            .unwrap_err()
            .contains("longer than the greatest bound"));
        assert!(parse_duration("NaN")
            .unwrap_err()
            .contains("not a duration"));
        assert!(parse_duration("soon").is_err());
    }
}
