// A small MCP server written with the official TypeScript SDK 2.x (`@modelcontextprotocol/server`,
// pinned in install-servers.sh), run by the validator's tests over stdio or Streamable HTTP:
//
//   node tests/validate/ts_server.cjs                           # stdio (serveStdio: 2026-07-28 and 2025 era)
//   node tests/validate/ts_server.cjs streamable-http PORT      # http://127.0.0.1:PORT/mcp (createMcpHandler)
//
// The SDK is loaded from target/validate-servers/ts/ (or $MCP_TS_SDK_DIR), where
// tests/validate/install-servers.sh installs it. With MCP_TS_LEGACY=reject the server speaks
// 2026-07-28 only (the SDK's `legacy: 'reject'`): `initialize` gets an error.
"use strict";
const path = require("node:path");
const http = require("node:http");
const { Readable } = require("node:stream");
const { createRequire } = require("node:module");

const sdkDir = process.env.MCP_TS_SDK_DIR || path.join(__dirname, "../../target/validate-servers/ts");
const load = createRequire(path.join(sdkDir, "package.json"));
const {
  McpServer,
  ResourceTemplate,
  createMcpHandler,
  hostHeaderValidationResponse,
  originValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
} = load("@modelcontextprotocol/server");
const { serveStdio } = load("@modelcontextprotocol/server/stdio");
const z = load("zod");

/** One server instance: the SDK builds one a request (HTTP) or a connection (stdio). */
function build() {
  const server = new McpServer(
    { name: "validate-ts-server", version: "1.0.0" },
    { capabilities: { tools: {}, resources: {}, prompts: {}, logging: {} } },
  );
  server.registerTool(
    "add",
    { description: "Adds two numbers.", inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  server.registerTool(
    "echo",
    { description: "Echoes its text back.", inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerResource(
    "readme",
    "docs://readme",
    { description: "A fixed text.", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, text: "validate-ts-server" }] }),
  );
  server.registerResource(
    "greeting",
    new ResourceTemplate("greeting://{name}", { list: undefined }),
    { description: "A greeting for someone." },
    async (uri, { name }) => ({ contents: [{ uri: uri.href, text: `Hello, ${name}!` }] }),
  );
  server.registerPrompt(
    "review",
    { description: "Asks for a code review.", argsSchema: z.object({ code: z.string() }) },
    ({ code }) => ({ messages: [{ role: "user", content: { type: "text", text: `Please review:\n${code}` } }] }),
  );
  return server;
}

/** Serves the web-standard handler from node:http on 127.0.0.1 only, behind the Host and
 * Origin validation the SDK documents for a bare mount ("the entry itself is deliberately
 * validation-free"). */
function serveHttp(port) {
  const handler = createMcpHandler(build, { legacy });
  const server = http.createServer(async (req, res) => {
    const aborted = new AbortController();
    res.on("close", () => aborted.abort());
    try {
      if (req.url.split("?")[0] !== "/mcp") {
        res.writeHead(404).end();
        return;
      }
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const body = ["GET", "HEAD"].includes(req.method) ? undefined : Buffer.concat(chunks);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
      }
      const request = new Request(`http://${req.headers.host || "127.0.0.1"}${req.url}`, {
        method: req.method,
        headers,
        body,
        signal: aborted.signal,
      });
      const response =
        hostHeaderValidationResponse(request, localhostAllowedHostnames()) ??
        originValidationResponse(request, localhostAllowedOrigins()) ??
        (await handler.fetch(request));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        Readable.fromWeb(response.body).on("error", () => res.destroy()).pipe(res);
      } else {
        res.end();
      }
    } catch (error) {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(port, "127.0.0.1");
}

const rejectLegacy = process.env.MCP_TS_LEGACY === "reject";
const legacy = rejectLegacy ? "reject" : "stateless";
const [transport = "stdio", port] = process.argv.slice(2);
if (transport === "stdio" && port === undefined) {
  serveStdio(build, { legacy: rejectLegacy ? "reject" : "serve" });
} else if (transport === "streamable-http" && /^\d+$/.test(port || "")) {
  serveHttp(Number(port));
} else {
  process.stderr.write(`usage: ${process.argv[1]} [stdio | streamable-http PORT]\n`);
  process.exit(2);
}
