// The official MCP TypeScript SDK (@modelcontextprotocol/client) against
// the server: a 6 s run under a 3 s request timeout that resets on
// progress (RUN-022), and a run cancelled through an AbortSignal (RUN-021).
// Prints one JSON object with what it saw; tests/ts_sdk.rs judges it by
// order and count. The times it records are for reading, not judging: the
// only time that decides anything is the SDK's own request timeout, and
// every wait of this script's own is a deadline against a hang (spec
// README, "Timing in tests").
//
// usage: node ts_sdk_run.mjs NPM_TOOLS_DIR SERVER SKILLS_DIR TMPDIR
import path from "node:path";
import fs from "node:fs";
import { pathToFileURL } from "node:url";

const [npmTools, server, skills, tmp] = process.argv.slice(2);
const pkg = path.join(npmTools, "node_modules/@modelcontextprotocol/client/dist");
const { Client } = await import(pathToFileURL(path.join(pkg, "index.mjs")));
const { StdioClientTransport } = await import(pathToFileURL(path.join(pkg, "stdio.mjs")));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const run = (script, args) => ({
  name: "skill_run",
  arguments: { name: "timer", script, args, confirm: true },
});
const parsed = (result) => result.structuredContent ?? JSON.parse(result.content[0].text);

const transport = new StdioClientTransport({
  command: server,
  env: { PATH: process.env.PATH, SKILLS_DIR: skills, TMPDIR: tmp, HOME: tmp },
  stderr: "ignore",
});
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" }, { capabilities: {} });
await client.connect(transport);
const out = {};

// 1. A 6 s script, a 3 s request timeout that progress resets: without a
// reset it would fire halfway through, so the run comes back only if
// progress kept coming. 3 s is six times the 500 ms between notifications
// (RUN-022), so a busy machine's late delivery does not fire it.
const ticks = [];
const began = Date.now();
try {
  const r = await client.callTool(run("scripts/wait.js", ["6000"]), {
    timeout: 3000,
    resetTimeoutOnProgress: true,
    onprogress: (p) => ticks.push({ at: Date.now() - began, ...p }),
  });
  const v = parsed(r);
  out.progress = { ok: true, exitCode: v.exitCode, stdout: v.stdout };
} catch (e) {
  out.progress = { ok: false, error: String(e) };
}
out.progress.elapsedMs = Date.now() - began;
out.progress.ticks = ticks;

// 2. A 20 s script cancelled through an AbortSignal once it is running:
// once wait.js has written its pid (the file of part 1 is removed first),
// however long node takes to start on a busy machine.
const pidFile = path.join(tmp, "wait.pid");
fs.rmSync(pidFile, { force: true });
const ac = new AbortController();
const long = client.callTool(run("scripts/wait.js", ["20000"]), { signal: ac.signal, timeout: 60000 });
const written = () => {
  try {
    return Number(fs.readFileSync(pidFile, "utf8")) || 0;
  } catch {
    return 0;
  }
};
const startedBy = Date.now() + 60000;
while (!written() && Date.now() < startedBy) await sleep(10);
const pid = written();
if (!pid) throw new Error("wait.js never wrote its pid within 60 s");
const abortedAt = Date.now();
ac.abort("the test cancels it");
out.cancel = { rejected: await long.then(() => false, () => true) };
// Whether the script's process goes away before it would have ended by
// itself (polled, 10 ms apart, for at most 10 s of its 20): killed by the
// cancel, not by its own end. How long it took is recorded, not judged.
for (;;) {
  try {
    process.kill(pid, 0);
  } catch {
    out.cancel.goneAfterMs = Date.now() - abortedAt;
    break;
  }
  if (Date.now() - abortedAt > 10000) {
    out.cancel.goneAfterMs = null;
    break;
  }
  await sleep(10);
}
// The next run finds the script gone. The lock is free once the cancelled
// run has settled — its process reaped and anything it left behind swept
// (RUN-021, RUN-025) — which can be a few ms after the process is seen gone;
// until then a run is refused as busy at once (never queued), so the client
// tries again, for at most 60 s (a deadline against a lock never freed).
out.cancel.busyRefusals = 0;
for (;;) {
  const answer = await client.callTool(run("scripts/alive.js", []), { timeout: 60000 });
  const text = answer.content?.[0]?.text ?? "";
  if (answer.isError && text.includes("another skill_run is already running") && Date.now() - abortedAt < 60000) {
    out.cancel.busyRefusals += 1;
    await sleep(5);
    continue;
  }
  try {
    const r = parsed(answer);
    out.cancel.next = { exitCode: r.exitCode, stdout: r.stdout };
  } catch (e) {
    out.cancel.next = { error: String(e), text };
  }
  break;
}
out.cancel.nextDoneAfterMs = Date.now() - abortedAt;

await client.close();
console.log(JSON.stringify(out));
