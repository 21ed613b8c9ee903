//! `validate --oauth CLIENT_ID --oauth-browser`: the user-agent step played by a person. A
//! listener on a loopback port is the redirect URI (`http://127.0.0.1:PORT/callback`, the
//! native-app form of RFC 8252 Section 7.3); the authorization URL is printed on stderr for
//! the person to open, and the first request to `/callback` within the wait ends the step.
//! Any other request (a browser's `/favicon.ico`) gets a 404 and the wait goes on. What a
//! connection may send is bounded in size and time, so nothing on the port can stall the run
//! past the wait or fill memory.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use url::Url;

/// The path the redirect URI ends in.
pub const CALLBACK_PATH: &str = "/callback";

/// The most bytes of a request's head read: far more than any redirect carries.
const MAX_HEAD: usize = 16 << 10;

/// The longest one connection may take to send its request head.
const HEAD_WAIT: Duration = Duration::from_secs(10);

/// What the browser shows once it is back.
const BACK_PAGE: &str = "authorization received by mcp-conformance; this window can be closed\n";

/// Why the browser step gave no redirect: one line, lowercase.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LoopbackError {
    /// The redirect listener could not be opened.
    #[error("cannot listen for the browser on 127.0.0.1:{port}: {why}")]
    NoListener {
        /// The port asked for (`0`: any).
        port: u16,
        /// The system's reason.
        why: String,
    },
    /// No browser came back to the redirect URI within the wait.
    #[error("no browser came back to {redirect_uri} within {waited}")]
    NoBrowser {
        /// The loopback redirect URI listened on.
        redirect_uri: String,
        /// The wait, as given.
        waited: String,
    },
}

/// The redirect listener: bound before the authorization request is made, so that the
/// request can name its port.
pub struct Loopback {
    listener: TcpListener,
    redirect_uri: String,
}

impl Loopback {
    /// Listens on `127.0.0.1:port` (`0`: a free port the system picks).
    pub async fn bind(port: u16) -> Result<Self, LoopbackError> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|e| {
            LoopbackError::NoListener {
                port,
                why: e.to_string(),
            }
        })?;
        let port = listener
            .local_addr()
            .map_err(|e| LoopbackError::NoListener {
                port,
                why: e.to_string(),
            })?
            .port();
        Ok(Self {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    /// The redirect URI the authorization and token requests name.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Prints `authorization_url` for a person and waits at most `wait` for the browser to
    /// come back: the URL it came back to, with its query (`code`, `state`, `iss` or `error`).
    pub async fn wait_for_browser(
        self,
        authorization_url: &Url,
        wait: Duration,
    ) -> Result<Url, LoopbackError> {
        crate::terminal::eprint(&format!(
            "to authorize, open this URL in a browser (waiting up to {wait:?} for it to come back to {}):",
            self.redirect_uri
        ));
        crate::terminal::eprint(&format!("  {authorization_url}"));
        let deadline = Instant::now() + wait;
        loop {
            let accepted = tokio::time::timeout_at(deadline, self.listener.accept()).await;
            let Ok(accepted) = accepted else {
                return Err(LoopbackError::NoBrowser {
                    redirect_uri: self.redirect_uri.clone(),
                    waited: format!("{wait:?}"),
                });
            };
            // A failed accept (a connection reset before it was taken) is not the browser's
            // answer: wait on.
            let Ok((stream, _)) = accepted else { continue };
            if let Some(back) = self.serve(stream).await {
                return Ok(back);
            }
        }
    }

    /// Reads one request: the URL it asks for when that is the callback (answered with a
    /// short page), else none (answered 404, or dropped when it sends no request in time).
    async fn serve(&self, mut stream: TcpStream) -> Option<Url> {
        let head = tokio::time::timeout(HEAD_WAIT, read_head(&mut stream))
            .await
            .ok()?;
        let target = request_target(&head)?;
        let back = Url::parse(&self.redirect_uri)
            .and_then(|base| base.join(target))
            .ok()
            .filter(|url| url.path() == CALLBACK_PATH);
        let (status, body) = match back {
            Some(_) => ("200 OK", BACK_PAGE),
            None => ("404 Not Found", "not found\n"),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        // The browser not reading the page does not undo the redirect it made.
        let _ = tokio::time::timeout(HEAD_WAIT, stream.write_all(response.as_bytes())).await;
        back
    }
}

/// The request's head, up to the blank line, at most [`MAX_HEAD`] bytes.
async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while head.len() < MAX_HEAD && !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// The target of a `GET` request line (`GET /callback?code=… HTTP/1.1`).
fn request_target(head: &str) -> Option<&str> {
    let line = head.lines().next()?;
    let mut parts = line.split(' ');
    let (Some("GET"), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    (target.starts_with('/') && version.starts_with("HTTP/1.")).then_some(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_get_of_a_path_is_a_request_target() {
        assert_eq!(
            request_target("GET /callback?code=x HTTP/1.1\r\nHost: a\r\n\r\n"),
            Some("/callback?code=x")
        );
        assert_eq!(request_target("POST /callback HTTP/1.1\r\n\r\n"), None);
        assert_eq!(request_target("GET http://evil/ HTTP/1.1\r\n\r\n"), None);
        assert_eq!(request_target("GET /callback\r\n\r\n"), None);
        assert_eq!(request_target(""), None);
    }

    #[tokio::test]
    async fn the_callback_ends_the_wait_and_other_paths_are_refused() {
        let loopback = Loopback::bind(0).await.unwrap();
        let uri = loopback.redirect_uri().to_string();
        let port: u16 = uri
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches(CALLBACK_PATH)
            .parse()
            .unwrap();
        let browser = async move {
            let ask = |path: &'static str| async move {
                let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
                s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
                    .await
                    .unwrap();
                let mut answer = String::new();
                s.read_to_string(&mut answer).await.unwrap();
                answer
            };
            let favicon = ask("/favicon.ico").await;
            assert!(favicon.starts_with("HTTP/1.1 404"), "{favicon}");
            let back = ask("/callback?code=c-1&state=s-1").await;
            assert!(
                back.starts_with("HTTP/1.1 200") && back.ends_with(BACK_PAGE),
                "{back}"
            );
        };
        let url = Url::parse("http://127.0.0.1:1/authorize").unwrap();
        let (back, ()) = tokio::join!(
            loopback.wait_for_browser(&url, Duration::from_secs(10)),
            browser
        );
        let back = back.unwrap();
        assert_eq!(back.path(), CALLBACK_PATH);
        assert_eq!(back.query(), Some("code=c-1&state=s-1"));
    }

    #[tokio::test]
    async fn no_browser_within_the_wait_names_the_redirect_uri_and_the_wait() {
        let loopback = Loopback::bind(0).await.unwrap();
        let uri = loopback.redirect_uri().to_string();
        let url = Url::parse("http://127.0.0.1:1/authorize").unwrap();
        let err = loopback
            .wait_for_browser(&url, Duration::from_millis(50))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("no browser came back to {uri} within 50ms")
        );
    }
}
