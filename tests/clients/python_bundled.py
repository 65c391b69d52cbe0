"""What `cargo run --release` serves, through the official MCP Python SDK.

usage: python_bundled.py BINARY SKILLS_ROOT

BINARY is started with no MCP_SKILLS_PATH, SKILLS_DIR or hosted marker, so
it serves its bundled skills/ (CONF-005) as a standalone server whose
declarations stand (GRANT-001). SKILLS_ROOT is the checkout's skills/, read
here only to compare bytes. Checks, in both of the SDK's modes: the demo
skill is listed with its declared script, its instructions and reference
file come back byte for byte, and its declared script runs after a preview
and reports the argv it was handed. Exits non-zero on the first failure.
"""
import asyncio
import json
import os
import sys

import mcp

SKILL = "skill-mcp-demo"


def check(cond, what):
    if not cond:
        print(f"FAIL {what}")
        sys.exit(1)
    print(f"ok   {what}")


async def run(binary, root, mode):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    params = mcp.StdioServerParameters(command=binary, args=[], env=env)
    async with mcp.Client(params, mode=mode, read_timeout_seconds=30) as client:
        listed = await client.call_tool("skill_list", {})
        sc = listed.structured_content
        check(sc["rootsFrom"] == "default" and sc["grantFrom"] == "declaration",
              f"[{mode}] the bundled root, the declaration standing ({sc['rootsFrom']}, {sc['grantFrom']})")
        check(sc["problems"] == [], f"[{mode}] the bundled tree has no problems")
        demo = [s for s in sc["skills"] if s["name"] == SKILL]
        check(len(demo) == 1, f"[{mode}] {SKILL} is listed")
        scripts = [s["script"] for s in demo[0]["scripts"]]
        check(scripts == ["scripts/report.js"], f"[{mode}] its declared script is listed ({scripts})")

        loaded = await client.call_tool("skill_load", {"name": SKILL})
        with open(os.path.join(root, SKILL, "SKILL.md"), encoding="utf-8") as f:
            text = f.read()
        body = text.split("\n---\n", 1)[1]
        check(loaded.structured_content["body"] == body, f"[{mode}] skill_load returns the body verbatim")

        ref = "references/declaration.md"
        read = await client.call_tool("skill_file", {"name": SKILL, "path": ref})
        with open(os.path.join(root, SKILL, ref), encoding="utf-8") as f:
            want = f.read()
        got = read.structured_content["files"][0]
        check(got["content"] == want and got["encoding"] == "utf-8", f"[{mode}] skill_file returns {ref}")

        args = {"name": SKILL, "script": "scripts/report.js", "args": ["a b", "$(x)"]}
        preview = await client.call_tool("skill_run", args)
        check(preview.structured_content.get("dryRun") is True, f"[{mode}] skill_run without confirm is a preview")
        ran = await client.call_tool("skill_run", {**args, "confirm": True})
        out = ran.structured_content
        check(not ran.is_error and out["exitCode"] == 0, f"[{mode}] the declared script ran ({out.get('exitCode')})")
        report = json.loads(out["stdout"])
        check(report["argv"] == ["a b", "$(x)"], f"[{mode}] it got its arguments verbatim ({report['argv']})")
        check(os.path.realpath(report["cwd"]) == os.path.realpath(os.path.join(root, SKILL)),
              f"[{mode}] in its skill's directory")


async def main():
    binary, root = sys.argv[1], sys.argv[2]
    for mode in ("legacy", "auto"):
        await run(binary, root, mode)
    print("ALL OK")


asyncio.run(main())
