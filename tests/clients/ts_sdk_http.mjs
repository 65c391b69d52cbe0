// The official MCP TypeScript SDK (@modelcontextprotocol/client) as a host
// drives skill-mcp over Streamable HTTP, from open to close (issue 40 §9;
// HTTP-008, HTTP-009).
//
// usage: node ts_sdk_http.mjs NPM_TOOLS_DIR URL [run|late-close]
//
// URL is `skill-mcp --http ... --http-allow-run`'s /mcp, serving the tree
// tests/http_clients.rs builds: one skill, demo, with notes.md and a
// declared scripts/hello.js (node) that prints its arguments.
//
// The client opens a 2025-11-25 session (the SDK's default, legacy
// negotiation) declaring `elicitation`, lists the tools, calls skill_list
// and skill_file, calls skill_run with confirm: true and answers the
// approval it is asked for (RUN-028) with accept, then closes as a host
// does: the transport's terminateSession() (the DELETE) and the client's
// close(). With `late-close`, the host closes the client 8 s after the
// DELETE rather than at once (past the server's SSE retry of 3 s, after
// which the SDK tries its GET stream again). Everything the process says is wrong is kept: console.warn and
// console.error, the transport's and the client's error events, process
// warnings, uncaught exceptions and unhandled rejections. Nothing is judged
// here: the script prints one JSON line of what it saw, and
// tests/http_clients.rs judges it. It fails only when the SDK throws.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [npmTools, url, flow = "run"] = process.argv.slice(2);
const pkg = path.join(npmTools, "node_modules/@modelcontextprotocol/client/dist");
const { Client, StreamableHTTPClientTransport } = await import(pathToFileURL(path.join(pkg, "index.mjs")));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const records = [];
const text = (args) => args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : String(a))).join(" ");
for (const level of ["warn", "error"]) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    records.push({ source: `console.${level}`, message: text(args) });
    original(...args);
  };
}
process.on("warning", (w) => records.push({ source: "process warning", message: text([w]) }));
process.on("uncaughtException", (e) => records.push({ source: "uncaughtException", message: text([e]) }));
process.on("unhandledRejection", (e) => records.push({ source: "unhandledRejection", message: text([e]) }));

const report = { http: [], elicitations: [] };
// Every request the transport makes, with its answer's status (a stream's
// body comes later); a GET resuming a stream says which.
const fetchSeen = async (input, init) => {
  const response = await fetch(input, init);
  const lastEventId = new Headers(init?.headers).get("last-event-id");
  report.http.push([init?.method ?? "GET", response.status, lastEventId]);
  return response;
};

const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: fetchSeen });
transport.onerror = (e) => records.push({ source: "transport.onerror", message: text([e]) });
const client = new Client({ name: "http-clients-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
client.onerror = (e) => records.push({ source: "client.onerror", message: text([e]) });
client.setRequestHandler("elicitation/create", async (request) => {
  report.elicitations.push({ mode: request.params.mode ?? "form", message: request.params.message });
  return { action: "accept", content: {} };
});

await client.connect(transport);
report.session = transport.sessionId;
report.protocolVersion = transport.protocolVersion;
report.serverName = client.getServerVersion()?.name;
report.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args }, { timeout: 60000 });
  return { isError: r.isError ?? false, structured: r.structuredContent };
};
report.skillList = await call("skill_list", {});
report.skillFile = await call("skill_file", { name: "demo", path: "notes.md" });
report.run = await call("skill_run", { name: "demo", script: "scripts/hello.js", args: ["a b", "ünï"], confirm: true });

await transport.terminateSession();
if (flow === "late-close") await sleep(8000);
await client.close();
report.closed = true;
// What comes after the close is heard too: the DELETE ended the session's
// GET stream, which the SDK would try again once the server's retry (3 s)
// has passed, had close() not stopped it.
await sleep(4000);
report.records = records;
console.log(JSON.stringify(report));
