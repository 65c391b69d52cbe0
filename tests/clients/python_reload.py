"""Drive skill-mcp --watch with the official MCP Python SDK and watch the
catalog change: add, edit, rename, delete and break a skill, and a burst
of 1,000 writes. Prints one line per check; exits non-zero on failure.

usage: python_reload.py BINARY SKILLS_DIR
"""
import asyncio
import os
import shutil
import sys

import mcp


def check(cond, what):
    if not cond:
        print(f"FAIL {what}")
        sys.exit(1)
    print(f"ok   {what}")


def write_skill(root, name, description):
    os.makedirs(os.path.join(root, name), exist_ok=True)
    with open(os.path.join(root, name, "SKILL.md"), "w") as f:
        f.write(f"---\nname: {name}\ndescription: {description}\n---\nbody\n")


async def main():
    binary, root = sys.argv[1], sys.argv[2]
    events = []

    async def on_message(msg):
        root_msg = getattr(msg, "root", msg)
        method = getattr(root_msg, "method", None)
        if method:
            events.append(method)

    async def wait_for(method, seen_before):
        # 30 s against a notification that never comes; it takes about one.
        for _ in range(300):
            if events[seen_before:].count(method):
                return True
            await asyncio.sleep(0.1)
        return False

    params = mcp.StdioServerParameters(command=binary, args=["--watch"], env={"SKILLS_DIR": root, "PATH": os.environ["PATH"]})
    async with mcp.Client(params, mode="legacy", message_handler=on_message, read_timeout_seconds=20) as client:
        caps = client.server_capabilities
        check(caps.prompts.list_changed and caps.resources.list_changed, "prompts and resources advertise listChanged")
        check(not (caps.tools and caps.tools.list_changed), "tools do not advertise listChanged")

        async def listing():
            r = await client.call_tool("skill_list", {})
            return r.structured_content

        first = await listing()
        check([s["name"] for s in first["skills"]] == ["alpha"], "boot lists alpha")
        check(first["generation"] == 1, "boot is generation 1")

        async def step(what, change, expect):
            n = len(events)
            change()
            # Every step changes the prompts, so their notification is the
            # one waited for: a swap may tell resources/list_changed after
            # it, late on a busy machine, and that one must not be taken
            # for the next step's.
            check(await wait_for("notifications/prompts/list_changed", n)
                  or await wait_for("notifications/resources/list_changed", n), f"{what}: a list_changed notification")
            got = await listing()
            check(expect(got), f"{what}: the new listing")
            return got

        await step("add", lambda: write_skill(root, "beta", "second"), lambda l: [s["name"] for s in l["skills"]] == ["alpha", "beta"])
        await step("edit", lambda: write_skill(root, "beta", "edited"), lambda l: l["skills"][1]["description"] == "edited")
        await step("rename", lambda: os.rename(os.path.join(root, "beta"), os.path.join(root, "gamma")),
                   lambda l: [s["name"] for s in l["skills"]] == ["alpha", "gamma"])
        await step("delete", lambda: shutil.rmtree(os.path.join(root, "gamma")), lambda l: [s["name"] for s in l["skills"]] == ["alpha"])

        def br():
            with open(os.path.join(root, "alpha", "SKILL.md"), "w") as f:
                f.write("---\nname: alpha\ndescription: [unclosed\n---\nbody\n")
        got = await step("break", br, lambda l: l["skills"] == [] and any(p["reason"] == "malformed-frontmatter" for p in l["problems"]))

        before = got["generation"]
        write_skill(root, "alpha", "fixed")
        await asyncio.sleep(1.5)
        os.makedirs(os.path.join(root, "alpha", "burst"), exist_ok=True)
        for i in range(1000):
            with open(os.path.join(root, "alpha", "burst", f"f{i:04}.md"), "w") as f:
                f.write("x")
        # Until the burst's last rescan is in (about a second): polled, with
        # 60 s only against a watch that never sees it; the count of rescans
        # is what is judged (spec README, "Timing in tests").
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        after = await listing()
        while after["skills"][0]["files"] != 1001 and loop.time() < deadline:
            await asyncio.sleep(0.1)
            after = await listing()
        rescans = after["generation"] - before
        check(after["skills"][0]["files"] == 1001, "the burst's files are listed")
        check(rescans <= 4, f"a fix and a burst of 1,000 writes cost {rescans} rescans")
        tools_changed = events.count("notifications/tools/list_changed")
        check(tools_changed == 0, "tools/list_changed is never sent")
    print("ALL OK")


asyncio.run(main())
