// Our own judge over the official suite's results (issue 29 §5, SRV-020):
// every check of every scenario that ran either passed or is listed in the
// expected-failures file, and every scenario that should have run did.
// The suite's own --expected-failures check passes a SKIPPED check and a
// scenario that never ran; this one does not.
//
//   node tally.mjs BASELINE.yaml VERSION RESULTS_DIR SCENARIO...
//
// Prints one line per scenario — counts of passed, failed, warnings,
// skipped, and how many of those are listed — and exits 1 when anything is
// neither passed nor listed, or a listed entry did not fail.
import { readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const YAML = require("yaml");

// `node tally.mjs baseline SOURCE.yaml bridge|native OUT.yaml` writes the
// baseline the suite is given: SOURCE's `server:` entries, plus its
// `bridge:` entries while the server runs behind the bridge.
if (process.argv[2] === "baseline") {
  const [source, transport, out] = process.argv.slice(3);
  const doc = YAML.parse(readFileSync(source, "utf8")) ?? {};
  const server = [...(doc.server ?? []), ...(transport === "bridge" ? (doc.bridge ?? []) : [])];
  writeFileSync(out, YAML.stringify({ server }));
  process.exit(0);
}

const [expectedPath, version, resultsDir, ...scenarios] = process.argv.slice(2);
const listed = (YAML.parse(readFileSync(expectedPath, "utf8")) ?? {}).server ?? [];
const wholeScenario = new Set(listed.filter((e) => !e.includes(":")));
const oneCheck = new Set(listed.filter((e) => e.includes(":")));

// Every checks.json under the results dir, by scenario: the suite names a
// result dir `server-<scenario>-<ISO time>`.
const results = new Map();
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name === "checks.json") {
      const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(dir.split("/").pop());
      if (m) results.set(m[1], JSON.parse(readFileSync(p, "utf8")));
    }
  }
};
walk(resultsDir);

const ok = (s) => s === "SUCCESS" || s === "INFO";
const problems = [];
let totalPassed = 0;
let totalListed = 0;
console.log(`   ${version}: scenario — passed / failed / warnings / skipped (listed: expected failures)`);
for (const scenario of scenarios) {
  const checks = results.get(scenario);
  if (!checks) {
    problems.push(`${scenario}: did not run (no results)`);
    console.log(`   ✗ ${scenario}: did not run`);
    continue;
  }
  const count = (s) => checks.filter((c) => c.status === s).length;
  let expected = 0;
  const seenFailing = new Set();
  for (const c of checks) {
    if (ok(c.status)) continue;
    const key = `${scenario}:${c.id}`;
    if (wholeScenario.has(scenario) || oneCheck.has(key)) {
      expected++;
      seenFailing.add(key);
    } else {
      problems.push(`${key}: ${c.status}${c.errorMessage ? ` — ${c.errorMessage.slice(0, 300)}` : ""}`);
    }
  }
  // A listed check that passed (or did not appear) is stale: the list must
  // say exactly what fails, so a fix shows up as a change to it.
  for (const key of oneCheck) {
    if (key.startsWith(`${scenario}:`) && !seenFailing.has(key)) {
      problems.push(`${key}: listed as an expected failure but did not fail at ${version} — remove it`);
    }
  }
  if (wholeScenario.has(scenario) && expected === 0) {
    problems.push(`${scenario}: listed as an expected failure but passed at ${version} — remove it`);
  }
  const passed = count("SUCCESS");
  totalPassed += passed;
  totalListed += expected;
  const mark = expected === checks.filter((c) => !ok(c.status)).length ? (expected ? "~" : "✓") : "✗";
  console.log(
    `   ${mark} ${scenario}: ${passed} passed / ${count("FAILURE")} failed / ${count("WARNING")} warnings / ` +
      `${count("SKIPPED")} skipped${expected ? ` (${expected} listed)` : ""}`,
  );
}
console.log(`   ${version}: ${scenarios.length} scenarios, ${totalPassed} checks passed, ${totalListed} expected failures`);
if (problems.length) {
  console.log(`   ${version}: NOT PASSED OR LISTED (.ci/official-suite/expected-failures/${version}.yaml):`);
  for (const p of problems) console.log(`     ✗ ${p}`);
  process.exit(1);
}
