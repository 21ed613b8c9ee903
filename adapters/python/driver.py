"""The official Python SDK's client (PyPI `mcp`, pinned in tests/validate/install-servers.sh)
under the scenarios, through the driver protocol (protocol/driver.schema.json).

Run with the interpreter of the venv the SDK is installed in:

    mcp-conformance run --client 'target/validate-servers/venv/bin/python adapters/python/driver.py'

Each step is the SDK's own call, configured as an application would configure it, and
nothing else: no timeout, retry or redaction of ours around the client. The hello declares
only what the SDK can express:

- transports: stdio (`StdioServerParameters`), Streamable HTTP (a URL), legacy HTTP+SSE
  (`mcp.client.sse.sse_client`);
- `call_timeout`: `Client.call_tool(read_timeout_seconds=…)`;
- `configurable_timeouts`: `Client(read_timeout_seconds=…)`, the SDK's one bound on every
  request's answer (the handshake's, each listing's and each call's), set to the tightest the
  scenario gives, and the httpx2 client's read timeout as the HTTP idle bound (`sse_client`'s
  `sse_read_timeout` over legacy HTTP+SSE); the SDK has no exit settle bound;
- `custom_headers`, `trusted_roots`: the httpx2 client the transports take;
- `cancel`: the asyncio task of a call is cancelled, as an application cancels one;
- `list_changed_count`: the `notifications/tools/list_changed` the SDK hands the
  application's message handler;
- `authorization`: the SDK's OAuth client, `mcp.client.auth.OAuthClientProvider` (an
  `httpx2.Auth`) on the httpx2 client the transport takes, for a pre-registered client: the
  storage gives the stored client record (`client_id`, and a confidential client's secret with
  `client_secret_basic`, RFC 7591's default method), so the SDK never registers; tokens are
  kept in memory. The user-agent step is the driver's: the `redirect_handler` opens the
  authorization URL and follows the authorization server's redirects up to the redirect URI,
  without requesting it, and the `callback_handler` hands the SDK that redirect's `code`,
  `state` and `iss` (the SDK checks `state` and `iss` itself);
- `dynamic_registration`: the same provider over a storage holding no client record: the
  SDK registers at the authorization server's `registration_endpoint` with the
  `client_metadata` (name and redirect URI; `application_type` is the SDK's default,
  `native`) and keeps what it was given through `set_client_info`; the SDK binds the record
  to its issuer and registers again at another authorization server;
- `client_id_metadata_document`: `OAuthClientProvider(..., client_metadata_url=...)`, taken
  for the client id where the authorization server's metadata says
  `client_id_metadata_document_supported`, registering otherwise;
- `client_credentials`: the SDK's machine-to-machine providers in
  `mcp.client.auth.extensions.client_credentials` — `ClientCredentialsOAuthProvider`
  (`client_secret_basic`) or, with a private key, `PrivateKeyJWTOAuthProvider` signing with
  `SignedJWTParameters` (ES256) — no user agent; without `issuer`, which the scenario's client
  is not told (deprecated, the SDK warns);
- `private_key_jwt`: the key signs the client-credentials exchange's assertion as above; the
  SDK's authorization-code flow holds no key (`oauth2.py`: "only `PrivateKeyJWTOAuthProvider`
  signs the assertion, and only in its client-credentials exchange"), so a key given there is
  not used;
- `stateless`: revision 2026-07-28 — `mcp.Client`'s default `mode="auto"` probes
  `server/discover` and falls back to `initialize`, in every scenario; spoken at 2026-07-28
  with a server that declares tool-list changes, the driver opens `Client.listen` as the
  SDK's docs show and counts that stream's changes.

Not declared (so those scenarios are not applicable): `exited`, `reconnect`, a token provider, a redirect policy (the
SDK's is fixed: same origin, method kept), a body cap, a process group, a tool layer, and
`pinned_revision`: the `initialize` handshake always offers the SDK's newest handshake
revision (`ClientSession.initialize`, `protocol_version=LATEST_HANDSHAKE_VERSION`), and
`Client(mode=...)` takes `legacy`, `auto` or a 2026-07-28-or-later revision only.

`drop` (declared) cancels the task that holds the client's `async with` block: what becomes
of a client whose owner is cancelled; Python has no other way to forget one, and leaving the
block ends the transport and the server as a Rust client's drop does.

`reusable` (declared): between two scenarios, `reset` cancels the steps still running and
drops every connection the scenario opened (each leaves its `async with` block, which ends
the transport and a stdio server), then answers; the process serves the next scenario.
"""

import asyncio
import importlib.metadata
import json
import ssl
import sys
import traceback
from urllib.parse import parse_qsl, urljoin, urlsplit

import mcp
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

import httpx2

HELLO = {
    "hello": {
        "name": "python-sdk",
        "version": importlib.metadata.version("mcp"),
        "transports": ["stdio", "http", "legacy-sse"],
        "capabilities": [
            "call_timeout",
            "configurable_timeouts",
            "custom_headers",
            "trusted_roots",
            "cancel",
            "list_changed_count",
            "authorization",
            "dynamic_registration",
            "client_id_metadata_document",
            "client_credentials",
            "private_key_jwt",
            "stateless",
            "drop",
            "reusable",
        ],
        "profile": "strict",
    }
}

out_lock = asyncio.Lock()


async def emit(message):
    async with out_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def error_text(error):
    """The client's error as it reads: type, message and causes, as a traceback would name them."""
    parts = []
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        text = "".join(traceback.format_exception_only(type(error), error)).strip()
        # A JSON-RPC error's code is a field of the SDK's error (`MCPError.code`), as the
        # application reads it.
        if isinstance(getattr(error, "code", None), int):
            text = f"{text} (code {error.code})"
        parts.append(text)
        if isinstance(error, BaseExceptionGroup):
            parts.extend(error_text(e) for e in error.exceptions)
        error = error.__cause__ or error.__context__
    return ": caused by ".join(parts) or type(error).__name__


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def headers_of(target):
    """The caller's headers in order; a name set again replaces its value."""
    headers = {}
    for name, value in target.get("headers", []):
        for old in [k for k in headers if k.lower() == name.lower()]:
            del headers[old]
        headers[name] = value
    return headers


def request_bound(timeouts):
    """The SDK's one request bound (`read_timeout_seconds`) from the scenario's: the tightest
    of the handshake, call and list bounds it sets (0, unbounded, counts as none)."""
    bounds = [timeouts.get(k) for k in ("handshake_ms", "call_ms", "list_ms")]
    bounds = [ms for ms in bounds if ms]
    return min(bounds) / 1000 if bounds else None


def idle_bound(timeouts):
    """The HTTP idle read bound the scenario sets, in seconds, if any."""
    ms = timeouts.get("idle_read_ms")
    return ms / 1000 if ms else None


# At most this many redirects are followed by the user agent.
MAX_REDIRECTS = 10


class UserAgent:
    """The user-agent step of the authorization flow: `redirect` opens the authorization URL
    and follows the authorization server's redirects until one leads to the redirect URI,
    which it keeps without requesting it; `callback` hands the SDK that redirect's parameters."""

    def __init__(self, redirect_uri):
        self.redirect_uri = redirect_uri
        self.landed = None

    async def redirect(self, url):
        self.landed = None
        async with httpx2.AsyncClient(follow_redirects=False) as browser:
            for _ in range(MAX_REDIRECTS + 1):
                if url.startswith(self.redirect_uri):
                    self.landed = url
                    return
                response = await browser.get(url)
                location = response.headers.get("location")
                if not response.is_redirect or location is None:
                    origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
                    raise RuntimeError(f"the authorization server at {origin} answered {response.status_code} instead of a redirect")
                url = urljoin(url, location)
        raise RuntimeError("the authorization server never redirected to the redirect URI")

    async def callback(self):
        from mcp.shared.auth import AuthorizationCodeResult

        landed, self.landed = self.landed, None
        query = dict(parse_qsl(urlsplit(landed or "").query))
        if "code" not in query:
            raise RuntimeError(f"the authorization was refused: {query.get('error', 'no code')}: {query.get('error_description', '')}")
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


class MemoryStorage:
    """The SDK's `TokenStorage`, in memory, holding the pre-registered client's record, or
    none until the SDK registers one."""

    def __init__(self, client_info):
        self.tokens = None
        self.client_info = client_info

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


def oauth_provider(url, oauth):
    """The SDK's OAuth client as an application configures it: for a pre-registered client,
    one that registers (with its metadata document's URL, if given), or a machine-to-machine
    one."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    if oauth.get("client_credentials"):
        return machine_provider(url, oauth)
    redirect_uri = oauth.get("redirect_uri") or "http://127.0.0.1/callback"
    agent = UserAgent(redirect_uri)
    handlers = {"redirect_handler": agent.redirect, "callback_handler": agent.callback}
    if oauth.get("pre_registered") is False:
        metadata = OAuthClientMetadata(client_name="mcp-conformance-driver", redirect_uris=[redirect_uri])
        return OAuthClientProvider(
            server_url=url,
            client_metadata=metadata,
            storage=MemoryStorage(None),
            client_metadata_url=oauth.get("client_metadata_url"),
            **handlers,
        )
    secret = oauth.get("client_secret")
    method = "none" if secret is None else "client_secret_basic"
    client = OAuthClientInformationFull(
        client_id=oauth.get("client_id") or "mcp-conformance-client",
        client_secret=secret,
        redirect_uris=[redirect_uri],
        token_endpoint_auth_method=method,
    )
    metadata = OAuthClientMetadata(client_name="mcp-conformance-driver", redirect_uris=[redirect_uri], token_endpoint_auth_method=method)
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=MemoryStorage(client),
        client_metadata_url=oauth.get("client_metadata_url"),
        **handlers,
    )


def machine_provider(url, oauth):
    """The SDK's client-credentials provider: a signed JWT with a private key, else the secret."""
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    client_id = oauth.get("client_id") or "mcp-conformance-client"
    key = oauth.get("private_key_pem")
    if key is not None:
        signed = SignedJWTParameters(issuer=client_id, subject=client_id, signing_key=key, signing_algorithm="ES256")
        return PrivateKeyJWTOAuthProvider(
            server_url=url,
            storage=MemoryStorage(None),
            client_id=client_id,
            assertion_provider=signed.create_assertion_provider(),
        )
    return ClientCredentialsOAuthProvider(
        server_url=url,
        storage=MemoryStorage(None),
        client_id=client_id,
        client_secret=oauth.get("client_secret") or "",
    )


def http_client(target, timeouts):
    """The httpx2 client the SDK's transports take, configured as an application would:
    the caller's headers and trusted roots, the OAuth client, the SDK's own default timeouts
    but for the idle read bound the scenario sets."""
    idle = idle_bound(timeouts)
    read = MCP_DEFAULT_SSE_READ_TIMEOUT if idle is None else idle
    kwargs = {"timeout": httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=read)}
    headers = headers_of(target)
    if headers:
        kwargs["headers"] = headers
    roots = target.get("trusted_roots_pem") or []
    if roots:
        context = ssl.create_default_context(cadata="\n".join(roots))
        kwargs["verify"] = context
    if target.get("oauth") is not None:
        kwargs["auth"] = oauth_provider(target["url"], target["oauth"])
    if len(kwargs) == 1 and idle is None:
        return None
    return httpx2.AsyncClient(**kwargs)


class Connection:
    """A client inside its `async with` block, held open by a task of its own (anyio's
    scopes must be left by the task that entered them)."""

    def __init__(self):
        self.client = None
        self.closing = asyncio.Event()
        self.task = None
        self.list_changed = 0
        # Spoken at 2026-07-28: the list changes of the `subscriptions/listen` stream, the only
        # ones counted then (`Client.listen`, as the SDK's docs show it).
        self.subscribed = None
        self.listener = None

    async def on_message(self, message):
        method = getattr(getattr(message, "root", message), "method", None)
        if method == "notifications/tools/list_changed":
            self.list_changed += 1

    def build(self, target, timeouts):
        bound = request_bound(timeouts)
        options = {"message_handler": self.on_message, "read_timeout_seconds": bound}
        if "stdio" in target:
            stdio = target["stdio"]
            server = mcp.StdioServerParameters(command=stdio["command"], args=stdio.get("args", []), env=stdio.get("env") or None)
            return mcp.Client(server, **options)
        http = target["http"]
        url = http["url"]
        if http.get("legacy_sse"):
            headers = headers_of(http) or None
            idle = idle_bound(timeouts)
            sse = {} if idle is None else {"sse_read_timeout": idle}
            if http.get("oauth") is not None:
                sse["auth"] = oauth_provider(url, http["oauth"])
            roots = http.get("trusted_roots_pem") or []
            if roots:
                context = ssl.create_default_context(cadata="\n".join(roots))

                def factory(headers=None, timeout=None, auth=None):
                    return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, verify=context)

                return mcp.Client(sse_client(url, headers=headers, httpx_client_factory=factory, **sse), **options)
            return mcp.Client(sse_client(url, headers=headers, **sse), **options)
        client = http_client(http, timeouts)
        if client is None:
            return mcp.Client(url, **options)
        return mcp.Client(streamable_http_client(url, http_client=client), **options)

    async def listen(self, client):
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    self.subscribed += 1
        except Exception as e:
            print(f"python-sdk: subscriptions/listen ended: {error_text(e)}", file=sys.stderr)

    async def open(self, target, timeouts):
        ready = asyncio.get_running_loop().create_future()

        async def hold():
            try:
                async with self.build(target, timeouts) as client:
                    self.client = client
                    tools = client.server_capabilities.tools
                    if client.protocol_version == "2026-07-28" and tools is not None and tools.list_changed:
                        self.subscribed = 0
                        self.listener = asyncio.create_task(self.listen(client))
                    ready.set_result(client)
                    await self.closing.wait()
                    if self.listener is not None:
                        self.listener.cancel()
            except BaseException as e:
                if not ready.done():
                    ready.set_exception(e if isinstance(e, Exception) else RuntimeError(error_text(e)))
                    return
                raise

        self.task = asyncio.create_task(hold())
        client = await ready
        return {"protocolVersion": client.protocol_version}

    async def close(self):
        self.closing.set()
        await self.task
        return "closed"

    async def drop(self):
        self.task.cancel()
        try:
            await self.task
        except BaseException:
            pass


class Driver:
    def __init__(self):
        self.connection = None
        # Every connection opened since the last `reset`, closed or not.
        self.opened = []

    async def reset(self):
        """Ends the scenario: every connection it opened dropped (left, with its server)."""
        self.connection = None
        opened, self.opened = self.opened, []
        for connection in opened:
            if connection.task is not None and not connection.task.done():
                await connection.drop()
        return "clean"

    def connected(self):
        if self.connection is None or self.connection.client is None:
            raise RuntimeError("not connected")
        return self.connection.client

    async def step(self, request):
        step = request["step"]
        if step == "connect":
            self.connection = Connection()
            self.opened.append(self.connection)
            return await self.connection.open(request["target"], (request.get("settings") or {}).get("timeouts") or {})
        if step == "list_tools":
            return dump(await self.connected().list_tools())["tools"]
        if step == "call_tool":
            timeout = request.get("timeout_ms")
            result = await self.connected().call_tool(
                request["name"],
                request.get("arguments") or {},
                read_timeout_seconds=None if timeout is None else timeout / 1000,
            )
            return dump(result)
        if step == "close":
            connection, self.connection = self.connection, None
            if connection is None:
                raise RuntimeError("not connected")
            return await connection.close()
        if step == "drop":
            connection, self.connection = self.connection, None
            if connection is None or connection.task is None:
                return False
            await connection.drop()
            return True
        if step == "list_changed_count":
            if self.connection is None:
                raise RuntimeError("not connected")
            if self.connection.subscribed is not None:
                return self.connection.subscribed
            return self.connection.list_changed
        raise RuntimeError(f"not supported: the client does not declare `{step}`")


async def main():
    driver = Driver()
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    await emit(HELLO)
    tasks = {}

    async def run(request):
        try:
            value = await driver.step(request)
            reply = {"id": request["id"], "ok": True, "value": value}
        except asyncio.CancelledError:
            return
        except BaseException as e:
            reply = {"id": request["id"], "ok": False, "error": error_text(e)}
        await emit(reply)

    while line := await reader.readline():
        request = json.loads(line)
        if request["step"] == "cancel":
            task = tasks.pop(request["of"], None)
            if task is not None:
                task.cancel()
            await emit({"id": request["id"], "ok": True, "value": "cancelled"})
            continue
        if request["step"] == "reset":
            # No next line is read before the last scenario is let go of.
            running = [task for task in tasks.values() if not task.done()]
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            tasks.clear()
            try:
                reply = {"id": request["id"], "ok": True, "value": await driver.reset()}
            except BaseException as e:
                reply = {"id": request["id"], "ok": False, "error": error_text(e)}
            await emit(reply)
            continue
        tasks[request["id"]] = asyncio.create_task(run(request))
        # Let the step start (and send its request) before the next line is read.
        await asyncio.sleep(0)
    for task in tasks.values():
        task.cancel()
    if driver.connection is not None:
        await driver.connection.drop()


if __name__ == "__main__":
    asyncio.run(main())
