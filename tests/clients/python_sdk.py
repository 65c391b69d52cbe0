"""Drive skill-mcp with the official MCP Python SDK (a client nobody here wrote).

usage: python_sdk.py BINARY SKILLS_DIR

Checks, in both of the SDK's modes (legacy initialize, and auto, which
negotiates the 2026-07-28 stateless mode): the tool list and annotations,
skill_list, skill_load of a served skill, and the tool error of an unknown
one. Prints one line per check and exits non-zero on the first failure.
"""
import asyncio
import sys

import mcp


def check(cond, what):
    if not cond:
        print(f"FAIL {what}")
        sys.exit(1)
    print(f"ok   {what}")


async def run(binary, skills, mode):
    params = mcp.StdioServerParameters(command=binary, args=[], env={"SKILLS_DIR": skills, "PATH": "/usr/bin:/bin"})
    async with mcp.Client(params, mode=mode, read_timeout_seconds=20) as client:
        check(client.server_info.name == "skill-mcp", f"[{mode}] serverInfo.name is skill-mcp ({client.protocol_version})")
        tools = {t.name: t for t in (await client.list_tools()).tools}
        check({"skill_list", "skill_load"} <= set(tools), f"[{mode}] tools/list has skill_list and skill_load")
        ann = tools["skill_list"].annotations
        check(ann.read_only_hint is True and ann.idempotent_hint is True, f"[{mode}] skill_list is read-only and idempotent")
        check(tools["skill_load"].output_schema is not None, f"[{mode}] skill_load has an outputSchema")
        listed = await client.call_tool("skill_list", {})
        sc = listed.structured_content
        check(not listed.is_error and sc is not None, f"[{mode}] skill_list answers with structuredContent")
        names = [s["name"] for s in sc["skills"]]
        check("sdk-demo" in names, f"[{mode}] skill_list lists sdk-demo ({names})")
        check(sc["rootsFrom"] == "SKILLS_DIR", f"[{mode}] rootsFrom is SKILLS_DIR")
        loaded = await client.call_tool("skill_load", {"name": "sdk-demo"})
        body = loaded.structured_content["body"]
        check(body == "Line one\r\nünïcödé\n", f"[{mode}] skill_load returns the body verbatim")
        check(loaded.content[0].text.startswith("{"), f"[{mode}] the text block holds the JSON too")
        missing = await client.call_tool("skill_load", {"name": "nope"})
        check(missing.is_error and "sdk-demo" in missing.content[0].text, f"[{mode}] an unknown name is a tool error naming what exists")


async def main():
    binary, skills = sys.argv[1], sys.argv[2]
    for mode in ("legacy", "auto"):
        await run(binary, skills, mode)
    print("ALL OK")


asyncio.run(main())
