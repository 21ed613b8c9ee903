//! HTTP targets: for now only reachability (a TCP connection to the URL's host and port,
//! bounded by `--timeout`); the `server.http.*` checks themselves are not run yet.

use std::time::Duration;

/// Checks the URL and connects to its host and port. The error is a one-line reason, and
/// whether it is a usage error (a malformed URL) rather than an unreachable target.
pub async fn reach(url: &str, timeout: Duration) -> Result<(), (bool, String)> {
    let parsed = url::Url::parse(url).map_err(|e| (true, format!("--url `{url}` is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err((true, format!("--url `{url}` is not an http or https URL")));
    }
    let host = parsed.host_str().ok_or_else(|| (true, format!("--url `{url}` has no host")))?.to_string();
    let port = parsed.port_or_known_default().unwrap_or(80);
    let host = host.trim_start_matches('[').trim_end_matches(']').to_string();
    match tokio::time::timeout(timeout, tokio::net::TcpStream::connect((host.as_str(), port))).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err((false, format!("cannot connect to {host}:{port}: {e}"))),
        Err(_) => Err((false, format!("cannot connect to {host}:{port}: no answer within {timeout:?}"))),
    }
}
