"""An MCP server protected by the official Python SDK's auth helpers (`mcp` 2.x: `AuthSettings`,
an `OAuthAuthorizationServerProvider`, its `RequireAuthMiddleware` and metadata routes), run by
the validator's tests over Streamable HTTP on loopback:

    venv/bin/python tests/validate/python_auth_server.py PORT     # http://127.0.0.1:PORT/mcp

The SDK serves the Protected Resource Metadata, the authorization server's metadata (issuer
`http://127.0.0.1:PORT`) and its endpoints, and answers a request without a valid token with
`401`. Its authorization endpoint approves at once: the pre-registered public client
`validate-client` (redirect URI `http://127.0.0.1/callback`) gets a code, which the SDK's
token endpoint exchanges (PKCE checked by the SDK) for a token issued for this server. The
tokens it knows besides (the provider below stands in for a real authorization server's
token store):

- `validate-token-full`: scope `mcp:tools`, issued for this server;
- `validate-token-no-scope`: no scope (a `403 insufficient_scope` where `mcp:tools` is needed);
- `validate-token-other`: scope `mcp:tools`, issued for another resource (refused: audience).
"""

import secrets
import sys
import time

from mcp.server.auth.provider import AccessToken, AuthorizationCode, construct_redirect_uri
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.types import ToolAnnotations

SCOPE = "mcp:tools"
CLIENT = OAuthClientInformationFull(
    client_id="validate-client",
    redirect_uris=["http://127.0.0.1/callback"],
    token_endpoint_auth_method="none",
    grant_types=["authorization_code"],
    response_types=["code"],
    scope=SCOPE,
)


class Provider:
    """An authorization server that approves every authorization request of its one client
    at once, and its token store (three tokens issued beforehand)."""

    def __init__(self, resource: str):
        self.codes: dict[str, AuthorizationCode] = {}
        self.tokens = {
            "validate-token-full": AccessToken(
                token="validate-token-full", client_id="validate", scopes=[SCOPE], resource=resource
            ),
            "validate-token-no-scope": AccessToken(
                token="validate-token-no-scope", client_id="validate", scopes=[], resource=resource
            ),
            "validate-token-other": AccessToken(
                token="validate-token-other",
                client_id="validate",
                scopes=[SCOPE],
                resource="http://127.0.0.1:9/other",
            ),
        }

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.tokens.get(token)

    async def get_client(self, client_id: str):
        return CLIENT if client_id == CLIENT.client_id else None

    async def register_client(self, client_info) -> None:
        raise NotImplementedError

    async def authorize(self, client, params) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client, authorization_code):
        del self.codes[authorization_code.code]
        token = secrets.token_urlsafe(24)
        self.tokens[token] = AccessToken(
            token=token,
            client_id=client.client_id,
            scopes=authorization_code.scopes,
            expires_at=int(time.time()) + 3600,
            resource=authorization_code.resource,
        )
        return OAuthToken(
            access_token=token, token_type="Bearer", expires_in=3600, scope=" ".join(authorization_code.scopes)
        )

    async def load_refresh_token(self, client, refresh_token):
        return None

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        raise NotImplementedError

    async def revoke_token(self, token) -> None:
        return None


def build(port: int) -> MCPServer:
    origin = f"http://127.0.0.1:{port}"
    server = MCPServer(
        "validate-python-auth-server",
        version="1.0.0",
        auth_server_provider=Provider(f"{origin}/mcp"),
        auth=AuthSettings(
            issuer_url=origin,
            resource_server_url=f"{origin}/mcp",
            required_scopes=[SCOPE],
            validate_token_resource=True,
        ),
    )

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def add(a: int, b: int) -> int:
        """Adds two numbers."""
        return a + b

    return server


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} PORT")
    port = int(sys.argv[1])
    build(port).run("streamable-http", host="127.0.0.1", port=port)
