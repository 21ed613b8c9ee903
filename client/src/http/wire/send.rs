//! Sending a request: the bearer token (refreshed once on a 401), redirects, one exchange
//! and its connection.

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use url::Url;

use crate::error::Fate;
use crate::http::{Redirects, MAX_REDIRECTS};
use crate::redact::origin_of;
use crate::stdio::fmt_duration;
use crate::McpError;

use super::{bearer, AbortOnDrop, Ctx, Endpoint, Io, Outgoing, Reply};

impl Endpoint {
    /// Sends with the bearer token (refreshed once on a 401) and follows redirects.
    pub(crate) async fn send(&self, out: &Outgoing<'_>, ctx: &Ctx) -> Result<Reply, McpError> {
        if let Some(oauth) = &self.oauth {
            return self.send_authorized(out, oauth, ctx).await;
        }
        let Some(provider) = &self.token_provider else {
            return self.send_redirecting(out, None, ctx).await;
        };
        let token = bearer(self.ask_token(provider.as_ref()).await?, ctx)?;
        self.remember_secret(&token);
        let reply = self.send_redirecting(out, Some(&token), ctx).await?;
        let refreshes = reply.status == StatusCode::UNAUTHORIZED
            || self.broken_refreshes_forbidden(reply.status);
        if !refreshes || self.broken(crate::Breakage::NoRefreshOn401) {
            return Ok(reply);
        }
        drop(reply);
        tracing::debug!(target: "mcp_refclient", origin = %self.origin, "401: refreshing the token once");
        let token = bearer(provider.refresh().await?, ctx)?;
        self.remember_secret(&token);
        self.send_redirecting(out, Some(&token), ctx).await
    }

    /// Test switch `ForbiddenRefreshed`: a 403 is retried with a refreshed token, as a 401.
    fn broken_refreshes_forbidden(&self, status: StatusCode) -> bool {
        self.broken(crate::Breakage::ForbiddenRefreshed) && status == StatusCode::FORBIDDEN
    }

    /// Test switch `CustomHeadersOnPostsOnly`: the configured headers go on POSTs only.
    fn broken_headers_on_posts_only(&self, method: &Method) -> bool {
        self.broken(crate::Breakage::CustomHeadersOnPostsOnly) && *method != Method::POST
    }

    pub(super) async fn send_redirecting(
        &self,
        out: &Outgoing<'_>,
        token: Option<&HeaderValue>,
        ctx: &Ctx,
    ) -> Result<Reply, McpError> {
        let mut url = out.url.clone();
        let mut method = out.method.clone();
        let mut body = out.body.clone();
        for hop in 0..=MAX_REDIRECTS {
            let same_host = url.host_str() == self.url.host_str()
                && url.port_or_known_default() == self.url.port_or_known_default()
                || self.broken(crate::Breakage::CredentialsKeptOnRedirect);
            let mut headers = HeaderMap::new();
            for (name, value) in self.headers.entries() {
                if !same_host && (name == header::AUTHORIZATION || name == header::COOKIE) {
                    continue;
                }
                if self.broken_headers_on_posts_only(&out.method) {
                    continue;
                }
                headers.insert(name.clone(), value.clone());
            }
            if let (Some(token), true) = (token, same_host) {
                headers.insert(header::AUTHORIZATION, token.clone());
            }
            for (name, value) in &out.extra {
                headers.insert(name.clone(), value.clone());
            }
            let reply = self
                .send_once(&url, &method, body.clone(), headers, ctx)
                .await?;
            let status = reply.status.as_u16();
            if !matches!(status, 301 | 302 | 303 | 307 | 308) {
                return Ok(reply);
            }
            let from = origin_of(&url);
            let location = reply
                .headers
                .get(header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .map(str::to_owned);
            drop(reply);
            let Some(location) = location else {
                return Err(ctx.protocol(format!(
                    "a {status} redirect from {from} without a valid Location"
                )));
            };
            let next = url.join(&location).map_err(|_| {
                ctx.protocol(format!(
                    "a {status} redirect from {from} to an invalid Location"
                ))
            })?;
            let to = match self.broken(crate::Breakage::RedirectNamesFullUrl) {
                true => next.to_string(),
                false => origin_of(&next),
            };
            if !matches!(next.scheme(), "http" | "https") {
                return Err(ctx.transport(format!(
                    "redirect from {from} to {} refused: not http or https",
                    next.scheme()
                )));
            }
            match self.redirects {
                Redirects::None if !self.broken(crate::Breakage::RedirectsNoneIgnored) => {
                    return Err(ctx.transport(format!(
                        "redirect from {from} to {to} refused: redirects are disabled"
                    )))
                }
                Redirects::SameOrigin if !self.same_origin(&url, &next) => {
                    let why = if url.scheme() == "https" && next.scheme() == "http" {
                        "another origin (https to http)"
                    } else {
                        "another origin"
                    };
                    return Err(
                        ctx.transport(format!("redirect from {from} to {to} refused: {why}"))
                    );
                }
                _ => {}
            }
            // The test switch `RedirectLimitOffByOne` counts the first hop as the second.
            let hops_taken = hop + usize::from(self.broken(crate::Breakage::RedirectLimitOffByOne));
            if hops_taken == MAX_REDIRECTS {
                return Err(ctx.transport(format!(
                    "too many redirects: more than {MAX_REDIRECTS} (the limit is {MAX_REDIRECTS}), the last from {from} to {to}"
                )));
            }
            if method == Method::POST
                && matches!(status, 301..=303)
                && !self.broken(crate::Breakage::PostResentOnAnyRedirect)
            {
                return Err(ctx.transport(format!(
                    "redirect from {from} to {to} refused: a {status} turns the POST into a GET, which an MCP endpoint cannot answer (a server should redirect with 307 or 308)"
                )));
            }
            if self.broken(crate::Breakage::BodyDroppedOnRedirect) {
                body = None;
            }
            if status == 303 && method != Method::GET {
                method = Method::GET;
                body = None;
            }
            tracing::debug!(target: "mcp_refclient", "following a {status} redirect from {from} to {to}");
            url = next;
        }
        unreachable!("the loop returns at its last hop")
    }

    /// One request on a fresh connection; waits for the response head, bounded by the idle
    /// timeout.
    pub(super) async fn send_once(
        &self,
        url: &Url,
        method: &Method,
        body: Option<Bytes>,
        headers: HeaderMap,
        ctx: &Ctx,
    ) -> Result<Reply, McpError> {
        let idle = self.idle;
        let stalled = || {
            McpError::Timeout(format!(
                "{}: no response for {} (idle read timeout) to '{}'; the server may still carry it out",
                ctx.prefix,
                fmt_duration(idle),
                ctx.method
            ))
        };
        let io = tokio::time::timeout(idle, self.connect(url, ctx))
            .await
            .map_err(|_| {
                ctx.transport(format!(
                    "connecting timed out after {} (idle read timeout)",
                    fmt_duration(idle)
                ))
            })??;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake::<_, Full<Bytes>>(TokioIo::new(io))
                .await
                .map_err(|e| ctx.dead(Fate::DeadUnsent, e))?;
        let task = AbortOnDrop(tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(target: "mcp_refclient", "HTTP connection ended: {e}");
            }
        }));
        let host = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or("")),
            None => url.host_str().unwrap_or("").to_string(),
        };
        let target = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        };
        let mut request = Request::builder()
            .method(method.clone())
            .uri(target)
            .header(header::HOST, host)
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|e| ctx.transport(format!("invalid request: {e}")))?;
        request.headers_mut().extend(headers);
        let response = tokio::time::timeout(idle, sender.send_request(request))
            .await
            .map_err(|_| stalled())?
            // Some of the request may have gone out before the connection broke.
            .map_err(|e| ctx.dead(Fate::DeadMaybeSent, e))?;
        let (parts, body) = response.into_parts();
        Ok(Reply {
            status: parts.status,
            headers: parts.headers,
            body,
            url: url.clone(),
            _conn: task,
        })
    }

    async fn connect(&self, url: &Url, ctx: &Ctx) -> Result<Box<dyn Io>, McpError> {
        let port = url.port_or_known_default().unwrap_or(80);
        let tcp = match url.host() {
            Some(url::Host::Ipv4(ip)) => TcpStream::connect((ip, port)).await,
            Some(url::Host::Ipv6(ip)) => TcpStream::connect((ip, port)).await,
            Some(url::Host::Domain(name)) => TcpStream::connect((name, port)).await,
            None => return Err(ctx.transport("the URL has no host")),
        }
        .map_err(|e| ctx.dead(Fate::DeadUnsent, e))?;
        let _ = tcp.set_nodelay(true);
        if url.scheme() != "https" {
            return Ok(Box::new(tcp));
        }
        let name = match url.host() {
            Some(url::Host::Ipv4(ip)) => {
                rustls_pki_types::ServerName::IpAddress(std::net::IpAddr::V4(ip).into())
            }
            Some(url::Host::Ipv6(ip)) => {
                rustls_pki_types::ServerName::IpAddress(std::net::IpAddr::V6(ip).into())
            }
            Some(url::Host::Domain(name)) => {
                rustls_pki_types::ServerName::try_from(name.to_string())
                    .map_err(|e| ctx.transport(format!("invalid TLS server name: {e}")))?
            }
            None => return Err(ctx.transport("the URL has no host")),
        };
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|e| ctx.transport(format!("TLS handshake failed: {e}")))?;
        Ok(Box::new(tls))
    }
}
