"""Drive skill-mcp with the official MCP Python SDK (a client nobody here wrote).

usage: SKILL_MCP_EXPECTED_VERSION=X.Y.Z python_sdk.py BINARY SKILLS_DIR

SKILLS_DIR is the tree tests/real_client.rs builds: one skill, sdk-demo,
declaring hello.js and mark.js (node), with an undeclared undeclared.js,
docs/readme.txt, "docs/a b.txt", big.txt (1 MiB + 1 byte), escape.txt (a
symlink to ../../outside.txt) and more than 1,000 files under gen/.

Checks, in both of the SDK's modes (legacy initialize, and auto, which
negotiates the 2026-07-28 stateless mode):
- serverInfo (name, and version equal to the crate's);
- the tool list and annotations, skill_list, skill_load, an unknown name;
- skill_file: one path, a batch with one missing path, fence refusals;
- prompts/list and prompts/get;
- resources/list walked through every cursor, resources/templates/list,
  resources/read of a text file and of a truncated one;
- skill_run: a preview starts nothing, confirmed runs return their output,
  an undeclared script is refused.
Every result that is not an error goes through the SDK's own validation of
structuredContent against the tool's outputSchema (mcp 2.x does this inside
call_tool and raises on a mismatch). Prints one line per check and exits
non-zero on the first failure.
"""
import asyncio
import os
import sys
from urllib.parse import quote

import mcp

SKILL = "sdk-demo"
BODY = "Line one\r\nünïcödé\n"
MIB = 1024 * 1024
PAGE = 500  # spec/reads.md READ-011


def check(cond, what):
    if not cond:
        print(f"FAIL {what}")
        sys.exit(1)
    print(f"ok   {what}")


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def expected_uris(skill_dir):
    """Every file the fence serves in the skill, as skill:// URIs (READ-010)."""
    real = os.path.realpath(skill_dir)
    uris = set()
    for dirpath, _dirs, files in os.walk(skill_dir):
        for f in files:
            full = os.path.join(dirpath, f)
            if not os.path.realpath(full).startswith(real + os.sep):
                continue  # a symlink leading out is not listed (DISC-011)
            rel = os.path.relpath(full, skill_dir).split(os.sep)
            uris.add(f"skill://{SKILL}/" + "/".join(quote(seg, safe="") for seg in rel))
    return uris


async def tools_and_list(client, mode):
    check(client.server_info.name == "skill-mcp", f"[{mode}] serverInfo.name is skill-mcp ({client.protocol_version})")
    want = os.environ["SKILL_MCP_EXPECTED_VERSION"]
    check(client.server_info.version == want, f"[{mode}] serverInfo.version {client.server_info.version!r} is the crate's {want!r}")
    tools = {t.name: t for t in (await client.list_tools()).tools}
    check({"skill_list", "skill_load", "skill_file", "skill_run"} <= set(tools), f"[{mode}] tools/list has the four tools ({sorted(tools)})")
    ann = tools["skill_list"].annotations
    check(ann.read_only_hint is True and ann.idempotent_hint is True, f"[{mode}] skill_list is read-only and idempotent")
    ann = tools["skill_file"].annotations
    check(ann.read_only_hint is True and ann.idempotent_hint is True, f"[{mode}] skill_file is read-only and idempotent")
    ann = tools["skill_run"].annotations
    check(ann.read_only_hint is False and ann.destructive_hint is True, f"[{mode}] skill_run is not read-only and destructive")
    for name in ("skill_load", "skill_file", "skill_run"):
        check(tools[name].output_schema is not None, f"[{mode}] {name} has an outputSchema (so the SDK validates its results)")
    # The SDK validates every non-error call_tool result against the tool's
    # outputSchema; show that the validation is live, so that the passing
    # calls below mean the server's structuredContent matches its schemas.
    bogus = mcp.types.CallToolResult.model_validate({"content": [], "structuredContent": {"skill": SKILL}})
    try:
        await client.session.validate_tool_result("skill_file", bogus)
        check(False, f"[{mode}] the SDK rejects structuredContent that breaks skill_file's outputSchema")
    except RuntimeError as e:
        check("files" in str(e), f"[{mode}] the SDK rejects structuredContent that breaks skill_file's outputSchema ({str(e).splitlines()[0]})")
    listed = await client.call_tool("skill_list", {})
    sc = listed.structured_content
    check(not listed.is_error and sc is not None, f"[{mode}] skill_list answers with structuredContent")
    names = [s["name"] for s in sc["skills"]]
    check(names == [SKILL], f"[{mode}] skill_list lists exactly {SKILL} ({names})")
    check(sc["rootsFrom"] == "SKILLS_DIR", f"[{mode}] rootsFrom is SKILLS_DIR")
    scripts = sorted(s["script"] for s in sc["skills"][0]["scripts"])
    check(scripts == ["hello.js", "mark.js"], f"[{mode}] skill_list: hello.js and mark.js may run ({sc['skills'][0]['scripts']})")
    loaded = await client.call_tool("skill_load", {"name": SKILL})
    check(loaded.structured_content["body"] == BODY, f"[{mode}] skill_load returns the body verbatim")
    check(loaded.content[0].text.startswith("{"), f"[{mode}] the text block holds the JSON too")
    missing = await client.call_tool("skill_load", {"name": "nope"})
    check(missing.is_error and SKILL in text_of(missing), f"[{mode}] an unknown name is a tool error naming what exists")


async def skill_file(client, mode, skill_dir):
    readme = open(os.path.join(skill_dir, "docs/readme.txt"), "rb").read()
    spaced = open(os.path.join(skill_dir, "docs/a b.txt"), "rb").read()

    one = await client.call_tool("skill_file", {"name": SKILL, "path": "docs/readme.txt"})
    check(not one.is_error, f"[{mode}] skill_file path: not an error")
    sc = one.structured_content
    check(sc["skill"] == SKILL and len(sc["files"]) == 1, f"[{mode}] skill_file path: one entry for {SKILL}")
    f = sc["files"][0]
    check(f["path"] == "docs/readme.txt" and f["encoding"] == "utf-8" and f["truncated"] is False,
          f"[{mode}] skill_file path: utf-8, not truncated ({ {k: v for k, v in f.items() if k != 'content'} })")
    check(f["content"].encode("utf-8") == readme and f["size"] == len(readme),
          f"[{mode}] skill_file path: content and size are the file's bytes")

    batch = await client.call_tool(
        "skill_file", {"name": SKILL, "paths": ["docs/a b.txt", "nope/missing.txt", "docs/readme.txt"]})
    check(not batch.is_error, f"[{mode}] skill_file paths: a missing path does not fail the call")
    files = batch.structured_content["files"]
    check([e["path"] for e in files] == ["docs/a b.txt", "nope/missing.txt", "docs/readme.txt"],
          f"[{mode}] skill_file paths: one entry per path, in request order")
    check("error" not in files[0] and files[0]["content"].encode("utf-8") == spaced,
          f"[{mode}] skill_file paths: the first slot is served")
    check("content" not in files[1] and "does not exist" in files[1].get("error", ""),
          f"[{mode}] skill_file paths: the missing slot alone is an error saying so ({files[1]})")
    check("error" not in files[2] and files[2]["content"].encode("utf-8") == readme,
          f"[{mode}] skill_file paths: the last slot is served")

    dots = await client.call_tool("skill_file", {"name": SKILL, "path": "../x"})
    check(dots.is_error and "string check" in text_of(dots) and "../x" in text_of(dots),
          f"[{mode}] skill_file '../x' is refused by the string check ({text_of(dots)!r})")
    out = await client.call_tool("skill_file", {"name": SKILL, "path": "escape.txt"})
    check(out.is_error and "outside" in text_of(out),
          f"[{mode}] skill_file of a symlink leading out is refused as outside ({text_of(out)!r})")

    big = await client.call_tool("skill_file", {"name": SKILL, "path": "big.txt"})
    f = big.structured_content["files"][0]
    check(f["truncated"] is True and f["size"] == MIB + 1 and len(f["content"]) == MIB,
          f"[{mode}] skill_file of 1 MiB + 1 byte: the first 1 MiB, truncated, real size")


async def prompts(client, mode):
    listed = await client.list_prompts(cache_mode="bypass")
    names = [p.name for p in listed.prompts]
    check(names == [SKILL] and listed.next_cursor is None, f"[{mode}] prompts/list is the one skill ({names})")
    got = await client.get_prompt(SKILL)
    check(len(got.messages) == 1 and got.messages[0].role == "user", f"[{mode}] prompts/get: one user message")
    check(got.messages[0].content.type == "text" and got.messages[0].content.text == BODY,
          f"[{mode}] prompts/get: the message is the SKILL.md body verbatim")
    try:
        await client.get_prompt("nope")
        check(False, f"[{mode}] prompts/get of an unknown name is a JSON-RPC error")
    except mcp.MCPError as e:
        check(SKILL in e.error.message, f"[{mode}] prompts/get of an unknown name is a JSON-RPC error naming {SKILL} ({e.error.message!r})")


async def resources(client, mode, skill_dir):
    uris, pages, cursor = [], [], None
    sizes, mimes = {}, {}
    while True:
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        pages.append(len(page.resources))
        for r in page.resources:
            uris.append(str(r.uri))
            sizes[str(r.uri)] = r.size
            mimes[str(r.uri)] = r.mime_type
        cursor = page.next_cursor
        if cursor is None:
            break
        if len(pages) >= 100:
            check(False, f"[{mode}] resources/list ends (still a nextCursor after {len(pages)} pages)")
    want = expected_uris(skill_dir)
    check(len(want) > 2 * PAGE, f"[{mode}] the fixture holds more than two pages of files ({len(want)})")
    check(all(n <= PAGE for n in pages) and len(pages) == -(-len(want) // PAGE),
          f"[{mode}] resources/list pages of at most {PAGE}, walked through cursors ({pages})")
    check(len(uris) == len(set(uris)), f"[{mode}] resources/list: every URI exactly once ({len(uris)} listed)")
    check(set(uris) == want, f"[{mode}] resources/list: exactly the skill's files "
          f"(missing {sorted(want - set(uris))[:5]}, extra {sorted(set(uris) - want)[:5]})")
    check(f"skill://{SKILL}/escape.txt" not in uris, f"[{mode}] resources/list leaves out the symlink leading out")
    check(f"skill://{SKILL}/docs/a%20b.txt" in uris, f"[{mode}] resources/list percent-encodes a space")
    check(sizes[f"skill://{SKILL}/big.txt"] == MIB + 1, f"[{mode}] resources/list gives big.txt its real size")
    readme = f"skill://{SKILL}/docs/readme.txt"
    check(mimes[readme] == "text/plain" and sizes[readme] == os.path.getsize(os.path.join(skill_dir, "docs/readme.txt")),
          f"[{mode}] resources/list gives docs/readme.txt its media type and size ({mimes[readme]}, {sizes[readme]})")
    try:
        await client.list_resources(cursor="nonsense", cache_mode="bypass")
        check(False, f"[{mode}] resources/list with a cursor never handed out is a JSON-RPC error")
    except mcp.MCPError as e:
        check(e.error.code == -32602, f"[{mode}] resources/list with a cursor never handed out is -32602 ({e.error.code}: {e.error.message!r})")

    templates = await client.list_resource_templates(cache_mode="bypass")
    check([t.uri_template for t in templates.resource_templates] == ["skill://{name}/{path}"],
          f"[{mode}] resources/templates/list is skill://{{name}}/{{path}}")

    spaced = open(os.path.join(skill_dir, "docs/a b.txt"), encoding="utf-8").read()
    read = await client.read_resource(f"skill://{SKILL}/docs/a%20b.txt", cache_mode="bypass")
    check(len(read.contents) == 1 and getattr(read.contents[0], "text", None) == spaced,
          f"[{mode}] resources/read of docs/a%20b.txt returns its text")
    check(not (read.contents[0].meta or {}).get("skill-mcp/truncated"), f"[{mode}] resources/read of a small file is not marked truncated")

    big = await client.read_resource(f"skill://{SKILL}/big.txt", cache_mode="bypass")
    c = big.contents[0]
    meta = c.meta or {}
    check(getattr(c, "text", None) == "z" * MIB, f"[{mode}] resources/read of big.txt serves its first 1 MiB")
    check(meta.get("skill-mcp/truncated") is True and meta.get("skill-mcp/size") == MIB + 1
          and str(MIB) in meta.get("skill-mcp/note", "").replace(",", ""),
          f"[{mode}] resources/read of big.txt: _meta says truncated, the real size and a note ({meta})")

    try:
        await client.read_resource(f"skill://{SKILL}/escape.txt", cache_mode="bypass")
        check(False, f"[{mode}] resources/read of the symlink leading out is a JSON-RPC error")
    except mcp.MCPError as e:
        check("outside" in e.error.message, f"[{mode}] resources/read of the symlink leading out is refused as outside ({e.error.message!r})")


async def run_scripts(client, mode, skill_dir):
    marker = os.path.join(skill_dir, "marker")
    check(not os.path.exists(marker), f"[{mode}] no marker before the previews")
    for args in ({}, {"confirm": False}):
        preview = await client.call_tool("skill_run", {"name": SKILL, "script": "mark.js", "args": ["a"], **args})
        sc = preview.structured_content
        check(not preview.is_error and sc["dryRun"] is True, f"[{mode}] skill_run {args or 'without confirm'}: a dry run")
        w = sc["willRun"]
        check(w["script"] == "mark.js" and w["argv"][-1] == "a" and os.path.basename(w["argv"][0]).startswith("node")
              and os.path.realpath(w["cwd"]) == os.path.realpath(skill_dir),
              f"[{mode}] skill_run preview shows node, the argv and the skill's directory ({w['argv']}, {w['cwd']})")
        check(not os.path.exists(marker), f"[{mode}] skill_run preview {args or 'without confirm'} started nothing (no marker)")

    args = ["a b", "ünï", "$(touch x); `y`", ""]
    ran = await client.call_tool("skill_run", {"name": SKILL, "script": "hello.js", "args": args, "confirm": True})
    sc = ran.structured_content
    check(not ran.is_error and sc["dryRun"] is False, f"[{mode}] skill_run confirmed: a real run ({text_of(ran)[:300]})")
    want = 'hello ["a b","ünï","$(touch x); `y`",""]\n'
    check(sc["exitCode"] == 0 and sc["signal"] is None and sc["timedOut"] is False,
          f"[{mode}] skill_run hello.js: exitCode 0, no signal, no timeout")
    check(sc["stdout"] == want and sc["stdoutEncoding"] == "utf-8" and sc["stderr"] == "",
          f"[{mode}] skill_run hello.js: its stdout, the args verbatim ({sc['stdout']!r})")
    check(sc["truncated"] == {"stdout": False, "stderr": False}, f"[{mode}] skill_run hello.js: nothing truncated")

    marked = await client.call_tool("skill_run", {"name": SKILL, "script": "mark.js", "confirm": True})
    check(not marked.is_error and marked.structured_content["exitCode"] == 0, f"[{mode}] skill_run mark.js confirmed exits 0")
    check(open(marker).read() == "made", f"[{mode}] the confirmed mark.js made the marker the previews did not")
    os.remove(marker)

    undeclared = await client.call_tool("skill_run", {"name": SKILL, "script": "undeclared.js", "confirm": True})
    msg = text_of(undeclared)
    check(undeclared.is_error and "declare" in msg and "hello.js" in msg and "mark.js" in msg,
          f"[{mode}] skill_run of an undeclared script is refused, listing the declared ones ({msg!r})")
    check(not os.path.exists(os.path.join(skill_dir, "undeclared-ran")), f"[{mode}] the undeclared script did not run")


async def run(binary, skills, mode):
    skill_dir = os.path.join(skills, SKILL)
    env = {"SKILLS_DIR": skills, "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    params = mcp.StdioServerParameters(command=binary, args=[], env=env)
    async with mcp.Client(params, mode=mode, read_timeout_seconds=30) as client:
        await tools_and_list(client, mode)
        await skill_file(client, mode, skill_dir)
        await prompts(client, mode)
        await resources(client, mode, skill_dir)
        await run_scripts(client, mode, skill_dir)


async def main():
    binary, skills = sys.argv[1], sys.argv[2]
    for mode in ("legacy", "auto"):
        await run(binary, skills, mode)
    print("ALL OK")


asyncio.run(main())
