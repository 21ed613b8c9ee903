//! HTTP scenarios: the scripted HTTP(S) mock in-process, and the target a client is given,
//! built from the scenario's `[client.http]`.

use crate::scenario::HttpClientPart;
use mcp_mock_servers::script::Transport;
use mcp_mock_servers::HttpMock;

/// Where the client connects, and what it may trust.
#[derive(Clone, Debug)]
pub(super) struct HttpTarget {
    /// The mock's own endpoint URL.
    pub url: String,
    /// `scheme://host:port` of each listener: primary, second, plain (https only).
    pub origins: Vec<(&'static str, String)>,
    /// The mock's CA certificate (https).
    pub ca_pem: Option<String>,
    /// Legacy HTTP+SSE rather than Streamable HTTP.
    pub legacy: bool,
}

impl HttpTarget {
    /// The target of a started mock.
    pub fn of(mock: &HttpMock, transport: Transport) -> HttpTarget {
        let mut origins = vec![
            ("primary", origin(&mock.url())),
            ("second", origin(&mock.second_origin_url())),
        ];
        if let Some(plain) = mock.plain_url() {
            origins.push(("plain", origin(&plain)));
        }
        HttpTarget {
            url: mock.url(),
            origins,
            ca_pem: mock.ca_certificate_pem(),
            legacy: transport == Transport::LegacySse,
        }
    }

    /// The URL the client is given: the scenario's template with `${primary}` … filled in,
    /// else the mock's own.
    pub fn client_url(&self, part: &HttpClientPart) -> String {
        let Some(template) = &part.url else {
            return self.url.clone();
        };
        let mut url = template.clone();
        for (name, origin) in &self.origins {
            url = url.replace(&format!("${{{name}}}"), origin);
        }
        // `${port}`: the primary listener's port, for a URL built by hand (with userinfo).
        if let Some(port) = self
            .origins
            .first()
            .and_then(|(_, origin)| origin.rsplit_once(':'))
            .map(|(_, p)| p)
        {
            url = url.replace("${port}", port);
        }
        url
    }

    /// Port redactions for transcripts: `127.0.0.1:41234` → `127.0.0.1:[PORT1]`, …; the
    /// `localhost` listener also as `127.0.0.1` (a redirect to it by port only).
    pub fn redactions(&self) -> Vec<(String, String)> {
        let mut redactions = Vec::new();
        for (i, (_, origin)) in self.origins.iter().enumerate() {
            let Some((host, port)) = origin
                .split_once("://")
                .and_then(|(_, rest)| rest.rsplit_once(':'))
            else {
                continue;
            };
            redactions.push((format!("{host}:{port}"), format!("{host}:[PORT{}]", i + 1)));
            // As a query or form value (the authorization flow's `resource`).
            redactions.push((
                format!("{host}%3A{port}"),
                format!("{host}%3A[PORT{}]", i + 1),
            ));
            if host == "localhost" {
                redactions.push((
                    format!("127.0.0.1:{port}"),
                    format!("127.0.0.1:[PORT{}]", i + 1),
                ));
            }
        }
        redactions
    }
}

/// `scheme://host:port` of a URL.
fn origin(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    format!("{scheme}://{authority}")
}

impl HttpTarget {
    /// The target a client is given: the URL, and what `[client.http]` sets.
    pub fn client_target(&self, part: &HttpClientPart) -> crate::cut::HttpTarget {
        crate::cut::HttpTarget {
            url: self.client_url(part),
            legacy_sse: self.legacy,
            headers: part.headers.clone(),
            redirects: part.redirects,
            tokens: part.tokens.clone(),
            trusted_roots_pem: if part.trust_mock_certificate {
                self.ca_pem.iter().cloned().collect()
            } else {
                Vec::new()
            },
            max_body_bytes: part.max_body_bytes,
            oauth: part.oauth.clone().map(Box::new),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_and_port_redactions() {
        assert_eq!(
            origin("http://127.0.0.1:4000/mcp?x=1"),
            "http://127.0.0.1:4000"
        );
        let target = HttpTarget {
            url: "http://127.0.0.1:4000/mcp".into(),
            origins: vec![
                ("primary", "http://127.0.0.1:4000".into()),
                ("second", "http://localhost:4001".into()),
            ],
            ca_pem: None,
            legacy: false,
        };
        let part = HttpClientPart {
            url: Some("${second}/sk-live-12345678/mcp".into()),
            ..Default::default()
        };
        assert_eq!(
            target.client_url(&part),
            "http://localhost:4001/sk-live-12345678/mcp"
        );
        assert_eq!(
            target.redactions(),
            vec![
                (
                    "127.0.0.1:4000".to_string(),
                    "127.0.0.1:[PORT1]".to_string()
                ),
                ("127.0.0.1%3A4000".into(), "127.0.0.1%3A[PORT1]".into()),
                ("localhost:4001".into(), "localhost:[PORT2]".into()),
                ("localhost%3A4001".into(), "localhost%3A[PORT2]".into()),
                ("127.0.0.1:4001".into(), "127.0.0.1:[PORT2]".into()),
            ]
        );
    }
}
