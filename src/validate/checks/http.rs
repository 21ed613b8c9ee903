//! `server.http.*`: the Streamable HTTP checks (ids; HTTP targets are not run yet).

/// a notification POST gets 202.
pub const NOTIFICATION_202: &str = "server.http.notification-202";
/// a POST without both Accept types gets 406.
pub const ACCEPT_REQUIRED: &str = "server.http.accept-required";
/// a session id is visible ASCII.
pub const SESSION_ID_ASCII: &str = "server.http.session-id-ascii";
/// a request with a session id the server never issued gets 404.
pub const UNKNOWN_SESSION_404: &str = "server.http.unknown-session-404";
/// a non-initialize request without a session id, when sessions are in use, gets 400.
pub const MISSING_SESSION_400: &str = "server.http.missing-session-400";
/// DELETE ends the session (then 404), or answers 405.
pub const DELETE: &str = "server.http.delete";
/// an unsupported `MCP-Protocol-Version` gets 400.
pub const PROTOCOL_VERSION_HEADER: &str = "server.http.protocol-version-header";
/// a request with a foreign `Origin` gets 403.
pub const ORIGIN: &str = "server.http.origin";
/// GET answers an SSE stream or 405.
pub const GET_STREAM: &str = "server.http.get-stream";
/// a JSON array is rejected from 2025-06-18 on.
pub const BATCH: &str = "server.http.batch";
