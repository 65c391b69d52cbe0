// The extension's own TypeScript SDK (npm @olaservo/ext-skills, on
// @modelcontextprotocol/server 2.x) as a stdio server, for the skills
// profile (conformance/sep-2640/README.md; adapter
// conformance/sep-2640/adapters/ext-skills.json, deviations
// conformance/deviations/ext-skills.md).
//
//     node ext_skills_server.mjs DIR
//
// serves the skills folder DIR exactly as the SDK's README builds a server:
// discoverSkills(DIR) once (the snapshot every answer is computed from),
// registerSkillResources with the catch-all template and directoryRead on,
// in a factory handed to the v2 SDK's era-aware serveStdio, so that a
// 2025-11-25 session and 2026-07-28 per-request _meta are both answered.
// ttlMs/cacheScope are left at the SDK's defaults. Nothing here decides an
// answer; every answer is the SDK's. Versions: package.json/package-lock.json
// beside this file (npm ci).

import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { discoverSkills, registerSkillResources } from "@olaservo/ext-skills/server";

const args = process.argv.slice(2);
if (args.length !== 1) {
  process.stderr.write("usage: node ext_skills_server.mjs SKILLS_DIR\n");
  process.exit(2);
}
const dir = args[0];
const skillMap = discoverSkills(dir);

serveStdio(() => {
  const server = new McpServer(
    { name: "ext-skills-conformance", version: "0.14.0" },
    { capabilities: { resources: {} } },
  );
  registerSkillResources(server, skillMap, dir, { template: true, directoryRead: true });
  return server;
});
