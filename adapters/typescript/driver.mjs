// The official TypeScript SDK's client (npm `@modelcontextprotocol/client`, pinned in
// tests/validate/install-servers.sh) under the scenarios, through the driver protocol
// (protocol/driver.schema.json).
//
//   mcp-conformance run --client 'node adapters/typescript/driver.mjs [NODE_MODULES]'
//
// NODE_MODULES is the folder the SDK is installed in (target/validate-servers/node/node_modules
// by default, found from this file's place in the repository).
//
// Each step is the SDK's own call, configured as an application would configure it, and
// nothing else: no timeout, retry or redaction of ours around the client. The hello declares
// only what the SDK can express:
//
// - transports: stdio (`StdioClientTransport`), Streamable HTTP
//   (`StreamableHTTPClientTransport`), legacy HTTP+SSE (`SSEClientTransport`);
// - `call_timeout`: `callTool(params, { timeout })`;
// - `cancel`: `callTool(params, { signal })`, the signal aborted;
// - `custom_headers`: `requestInit.headers`;
// - `token_provider`: the transports' `authProvider` (`token()` before every request,
//   `onUnauthorized()` on a 401, then the SDK retries once), over the scenario's scripted tokens;
// - `redirect_policy`: the transports' `redirectPolicy` (`same-origin`; `any` is `follow`;
//   `none` is `follow` with fetch's own `redirect: 'error'`);
// - `list_changed_count`: the `notifications/tools/list_changed` the SDK hands to
//   `setNotificationHandler`;
// - `authorization`: the SDK's OAuth client — an `OAuthClientProvider` as the transports'
//   `authProvider`, which runs `auth()` on a 401 (and on a 403 `insufficient_scope`) — for
//   a pre-registered client: `clientInformation()` gives the stored `client_id` (and secret),
//   so the SDK never registers; tokens, the PKCE verifier and the discovery state are kept
//   in memory, as the SDK's docs ask. The user-agent step is the driver's:
//   `redirectToAuthorization(url)` opens the URL and follows the authorization server's
//   redirects up to the redirect URI, without requesting it. An interactive authorization
//   ends the SDK's request with `UnauthorizedError` once the user agent is sent off; as the
//   SDK documents, the application then hands the callback's parameters to
//   `transport.finishAuth(params)` (which checks `iss` and redeems the code) and tries again:
//   the driver does so once per step — a connect on a new transport, a call or listing on the
//   same client;
// - `dynamic_registration`: the same provider holding no client: `clientInformation()` gives
//   `undefined` until `auth()` registers at the authorization server's `registration_endpoint`
//   (`registerClient`) and hands the result to `saveClientInformation()`, which keeps it
//   verbatim (the SDK stamps it with its issuer and reads a record stamped for another
//   authorization server as absent, so it registers again there); the registration's
//   metadata is `clientMetadata` (name and redirect URI; the SDK fills in `grant_types` and
//   `application_type`, `resolveClientMetadata`);
// - `client_id_metadata_document`: the provider's `clientMetadataUrl`, which `auth()` takes for
//   the client id where the authorization server's metadata says
//   `client_id_metadata_document_supported`, registering otherwise;
// - `client_credentials`: the SDK's machine-to-machine providers (its client auth extensions)
//   — `ClientCredentialsProvider({ clientId, clientSecret })` (`client_secret_basic`) or, with
//   a private key, `PrivateKeyJwtProvider` (ES256) — as the `authProvider`, the
//   `client_credentials` grant with no user agent; built without `expectedIssuer` (the
//   scenario names no issuer: the SDK then warns that the credentials go to whichever
//   authorization server the MCP server names);
// - `private_key_jwt`: the client's PEM key signs each token request's assertion — the
//   `PrivateKeyJwtProvider` above, or, for the authorization-code flow, the SDK's
//   `createPrivateKeyJwtAuth` as the provider's `addClientAuthentication`;
// - `pinned_revision`: `new Client(info, { supportedProtocolVersions })`, the SDK's list of the
//   revisions it speaks, cut to the scenario's revision and the older ones it supports: the
//   `initialize` handshake offers the first of them (`_legacyHandshake`).
//
// Not declared (so those scenarios are not applicable): the client's bounds from the
// scenario's settings (it has a per-request `timeout`, not a handshake, list and call bound
// each from one configuration), `exited` (the SDK reports no exit status), `reconnect`,
// trusted roots (Node's fetch takes extra CAs only at start-up), a body cap, a process
// group, a tool layer, and `stateless`: the SDK speaks 2026-07-28 with
// `versionNegotiation: { mode: 'auto' }`, but over stdio it probes `server/discover` on a
// disposable sibling process and then launches the server again for the session
// (`negotiateStdioViaSibling` in dist/public-*.mjs), which the scenarios' one-launch scripts
// do not model yet.
//
// `close` on Streamable HTTP calls `terminateSession()` (the DELETE) before `close()`, as the
// SDK documents for ending a session.
//
// `drop` forgets the client: JavaScript has no destructor, so whatever the SDK started goes
// on until the driver exits. The capability `drop` is therefore not declared: the scenarios
// that look at what a drop ended (a stdio server gone after it) are not applicable.
//
// `reusable`: between two scenarios, `reset` aborts the calls still running and closes every
// client the scenario opened, dropped ones included (`client.close()` ends a stdio server as
// an application shutting down would), then answers; the process serves the next scenario.

import { Console } from 'node:console';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// stdout is the driver protocol: whatever the SDK logs (its `console.debug` when a server
// declares no tools, say) goes to stderr, the client's log, before the SDK is loaded.
globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr });

const here = dirname(fileURLToPath(import.meta.url));
const modules = process.argv[2] ?? join(here, '../../target/validate-servers/node/node_modules');
const packageDir = join(modules, '@modelcontextprotocol/client');
const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const sdk = await import(pathToFileURL(join(packageDir, 'dist/index.mjs')).href);
const { StdioClientTransport, getDefaultEnvironment } = await import(pathToFileURL(join(packageDir, 'dist/stdio.mjs')).href);

const HELLO = {
  hello: {
    name: 'typescript-sdk',
    version,
    transports: ['stdio', 'http', 'legacy-sse'],
    capabilities: [
      'call_timeout',
      'cancel',
      'custom_headers',
      'token_provider',
      'redirect_policy',
      'list_changed_count',
      'authorization',
      'dynamic_registration',
      'client_id_metadata_document',
      'client_credentials',
      'private_key_jwt',
      'pinned_revision',
      'reusable',
    ],
    profile: 'strict',
  },
};

function emit(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

/** The client's error as it reads: name, message, and each cause. */
function errorText(error) {
  const parts = [];
  const seen = new Set();
  while (error != null && !seen.has(error)) {
    seen.add(error);
    // A JSON-RPC error's code is a field of the SDK's error (`ProtocolError.code`), as the
    // application reads it.
    const code = error instanceof Error && typeof error.code === 'number' ? ` (code ${error.code})` : '';
    // An HTTP failure's status is a field too (`SdkHttpError.status`), read as the code is.
    const status = error instanceof Error && typeof error.status === 'number' ? ` (HTTP ${error.status})` : '';
    parts.push(error instanceof Error ? `${error.name}${code}${status}: ${error.message}` : String(error));
    error = error instanceof Error ? error.cause : undefined;
  }
  return parts.join(': caused by ');
}

/** The caller's headers in order, as a plain object (the SDK and fetch check them); a name
 * set again replaces its value. */
function headersOf(http) {
  const headers = {};
  for (const [name, value] of http.headers ?? []) {
    for (const old of Object.keys(headers)) if (old.toLowerCase() === name.toLowerCase()) delete headers[old];
    headers[name] = value;
  }
  return headers;
}

/** The scenario's scripted token provider as the SDK's `AuthProvider`. */
function authProvider(tokens) {
  const all = [tokens.token, ...(tokens.refreshed ?? [])];
  let current = 0;
  let asks = 0;
  return {
    async token() {
      const token = all[current];
      if (token === undefined) throw new Error('the token provider has no token left');
      return tokens.rotate ? `${token}-${++asks}` : token;
    },
    async onUnauthorized() {
      current += 1;
      if (all[current] === undefined) throw new Error('the token provider could not refresh');
    },
  };
}

/** At most this many redirects are followed by the user agent. */
const MAX_REDIRECTS = 10;

/** The user agent: opens `url` and follows the authorization server's redirects until one
 * leads to `redirectUri`, which it returns without requesting it. */
async function followRedirects(url, redirectUri) {
  let at = new URL(url);
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    if (at.href.startsWith(redirectUri)) return at;
    const response = await fetch(at, { redirect: 'manual' });
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (response.status < 300 || response.status > 399 || !location) {
      throw new Error(`the authorization server at ${at.origin} answered ${response.status} instead of a redirect`);
    }
    at = new URL(location, at);
  }
  throw new Error('the authorization server never redirected to the redirect URI');
}

/** The client as the SDK's `OAuthClientProvider`, everything kept in memory: a pre-registered
 * one, or one holding no client that the SDK registers (with its metadata document's URL, if
 * given, as `clientMetadataUrl`); `redirectToAuthorization` plays the user agent and keeps
 * where it landed for `finishAuth`. */
class DriverOAuthProvider {
  constructor(oauth) {
    this._redirectUri = oauth.redirect_uri ?? 'http://127.0.0.1/callback';
    // Whether the client is the SDK's to register (none pre-registered).
    this._registers = oauth.pre_registered === false;
    if (this._registers) {
      this._client = undefined;
    } else {
      this._client = { client_id: oauth.client_id ?? 'mcp-conformance-client' };
      if (oauth.client_secret != null) this._client.client_secret = oauth.client_secret;
    }
    if (oauth.client_metadata_url != null) this.clientMetadataUrl = oauth.client_metadata_url;
    this._tokens = undefined;
    this._verifier = undefined;
    this._discovery = undefined;
    // The redirect URI the user agent landed on, waiting for `finishAuth`.
    this._landed = undefined;
  }
  get redirectUrl() {
    return this._redirectUri;
  }
  get clientMetadata() {
    return { client_name: 'mcp-conformance-driver', redirect_uris: [this._redirectUri] };
  }
  state() {
    return randomBytes(16).toString('base64url');
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(information) {
    this._client = information;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
  }
  saveCodeVerifier(verifier) {
    this._verifier = verifier;
  }
  codeVerifier() {
    return this._verifier;
  }
  saveDiscoveryState(state) {
    this._discovery = state;
  }
  /** What the SDK finds no longer good (a refused refresh: `tokens`) is dropped, as its docs
   * ask of an application; a pre-registered client itself is kept (there is no registration
   * to redo), a registered one goes with `client`. */
  invalidateCredentials(scope) {
    if ((scope === 'all' || scope === 'client') && this._registers) this._client = undefined;
    if (scope === 'all' || scope === 'tokens') this._tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this._verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this._discovery = undefined;
  }
  discoveryState() {
    return this._discovery;
  }
  async redirectToAuthorization(authorizationUrl) {
    this._landed = await followRedirects(authorizationUrl, this._redirectUri);
  }
  /** The callback's parameters when `error` ended an authorization the user agent finished. */
  callbackFor(error) {
    if (!this._landed || !sdk.UnauthorizedError.isInstance(error)) return undefined;
    const landed = this._landed;
    this._landed = undefined;
    return landed.searchParams;
  }
}

/** The SDK's provider for the scenario's client (see the capabilities above). */
function oauthProvider(oauth) {
  const clientId = oauth.client_id ?? 'mcp-conformance-client';
  const key = oauth.private_key_pem;
  if (oauth.client_credentials) {
    const provider = key != null
      ? new sdk.PrivateKeyJwtProvider({ clientId, privateKey: key, algorithm: 'ES256' })
      : new sdk.ClientCredentialsProvider({ clientId, clientSecret: oauth.client_secret });
    // No user agent, so no callback to finish an authorization with.
    provider.callbackFor = () => undefined;
    return provider;
  }
  const provider = new DriverOAuthProvider(oauth);
  if (key != null) {
    provider.addClientAuthentication = sdk.createPrivateKeyJwtAuth({ issuer: clientId, subject: clientId, privateKey: key, alg: 'ES256' });
  }
  return provider;
}

/** The client's options from the scenario's settings: a pinned revision (one before
 * 2026-07-28) cuts the SDK's supported revisions to it and the older ones. */
function clientOptions(settings) {
  const revision = settings?.revision;
  if (revision == null || revision >= '2026-07-28') return undefined;
  return { supportedProtocolVersions: sdk.SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v <= revision) };
}

/** `attempt()`, and once more after `finishAuth` when it ended in an authorization the user
 * agent went through (the SDK's interactive flow: see the capabilities above). */
async function authorized(state, attempt) {
  try {
    return await attempt();
  } catch (error) {
    const callback = state.oauth?.callbackFor?.(error);
    if (!callback) throw error;
    await state.transport.finishAuth(callback);
    return await attempt();
  }
}

function transportOf(target, oauth) {
  if (target.stdio) {
    const { command, args = [], env = {} } = target.stdio;
    // The SDK's default environment, and the scenario's variables on top, as an application sets them.
    const environment = Object.keys(env).length ? { ...getDefaultEnvironment(), ...env } : undefined;
    return new StdioClientTransport({ command, args, env: environment, stderr: 'inherit' });
  }
  const http = target.http;
  const options = { requestInit: { headers: headersOf(http) } };
  if (http.tokens) options.authProvider = authProvider(http.tokens);
  if (oauth) options.authProvider = oauth;
  if (http.redirects === 'same-origin') options.redirectPolicy = 'same-origin';
  if (http.redirects === 'any') options.redirectPolicy = 'follow';
  if (http.redirects === 'none') {
    options.redirectPolicy = 'follow';
    options.requestInit.redirect = 'error';
  }
  const url = new URL(http.url);
  return http.legacy_sse ? new sdk.SSEClientTransport(url, options) : new sdk.StreamableHTTPClientTransport(url, options);
}

let connection = null;
const calls = new Map();
// Every client opened since the last `reset`, closed or not.
const opened = new Set();

/** Ends the scenario: every call aborted, every client the scenario opened closed. */
async function reset() {
  for (const abort of calls.values()) abort.abort();
  calls.clear();
  connection = null;
  const clients = [...opened];
  opened.clear();
  await Promise.allSettled(clients.map((client) => client.close()));
  return 'clean';
}

function connected() {
  if (!connection) throw new Error('not connected');
  return connection.client;
}

async function step(request) {
  switch (request.step) {
    case 'connect': {
      const state = { listChanged: 0 };
      // A failed connect closes its client: a connect tried again is on a new one.
      const open = () => {
        const client = new sdk.Client({ name: 'mcp-conformance-driver', version }, clientOptions(request.settings));
        client.setNotificationHandler('notifications/tools/list_changed', () => {
          state.listChanged += 1;
        });
        opened.add(client);
        state.client = client;
        state.transport = transportOf(request.target, state.oauth);
        return client.connect(state.transport);
      };
      connection = state;
      const oauth = request.target.http?.oauth;
      state.oauth = oauth ? oauthProvider(oauth) : undefined;
      await authorized(state, open);
      return { protocolVersion: state.client.getNegotiatedProtocolVersion() ?? null };
    }
    case 'list_tools': {
      const client = connected();
      return (await authorized(connection, () => client.listTools())).tools;
    }
    case 'call_tool': {
      const abort = new AbortController();
      calls.set(request.id, abort);
      const options = { signal: abort.signal };
      if (request.timeout_ms != null) options.timeout = request.timeout_ms;
      const client = connected();
      try {
        return await authorized(connection, () => client.callTool({ name: request.name, arguments: request.arguments ?? {} }, options));
      } finally {
        calls.delete(request.id);
      }
    }
    case 'close': {
      const { client, transport } = connection ?? {};
      if (!client) throw new Error('not connected');
      connection = null;
      // The SDK's way to end a Streamable HTTP session: `terminateSession()` sends the
      // DELETE, `close()` alone does not (its docs: "Terminates the current session").
      if (transport instanceof sdk.StreamableHTTPClientTransport && transport.sessionId) await transport.terminateSession();
      await client.close();
      return 'closed';
    }
    case 'drop': {
      const had = connection !== null;
      connection = null;
      return had;
    }
    case 'list_changed_count':
      if (!connection) throw new Error('not connected');
      return connection.listChanged;
    default:
      throw new Error(`not supported: the client does not declare \`${request.step}\``);
  }
}

emit(HELLO);
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  const request = JSON.parse(line);
  if (request.step === 'cancel') {
    calls.get(request.of)?.abort();
    emit({ id: request.id, ok: true, value: 'cancelled' });
    continue;
  }
  if (request.step === 'reset') {
    // No next line is read before the last scenario is let go of.
    await reset().then(
      (value) => emit({ id: request.id, ok: true, value }),
      (error) => emit({ id: request.id, ok: false, error: errorText(error) }),
    );
    continue;
  }
  step(request).then(
    (value) => emit({ id: request.id, ok: true, value: value ?? null }),
    (error) => emit({ id: request.id, ok: false, error: errorText(error) }),
  );
  // Let the step start (and send its request) before the next line is read.
  await new Promise((resolve) => setImmediate(resolve));
}
process.exit(0);
