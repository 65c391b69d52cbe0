"""A scripted stand-in for the Anthropic Messages API, for tests/claude_code.rs.

Claude Code (`claude -p`, with ANTHROPIC_BASE_URL pointed here) talks to it
as it would to the real API: POST /v1/messages, answered with the streaming
event sequence the public API documents (message_start, content_block_start
/ delta / stop with text_delta and input_json_delta, message_delta with the
stop_reason, message_stop). It plays one fixed conversation that makes
Claude Code call this server's tools through MCP, one per turn, and checks
every `tool_result` Claude Code hands back:

  0. ToolSearch `select:` the four tools, when Claude Code defers them (its
     default)                 -> a tool_reference for each
  1. mcp__skills__skill_list   -> the tree's skills, with the declared script
  2. mcp__skills__skill_load   -> its body is SKILL.md's body, its files listed
  3. mcp__skills__skill_file   -> the bundled file's content, byte for byte
  4. mcp__skills__skill_run    -> without confirm: a preview (dryRun), argv as sent
  5. end_turn with a final text naming how many checks passed

Before the first skill tool call it checks that all four tools are offered
with their input schemas. Each result must parse as the tool's JSON (Claude
Code hands the model `structuredContent`; a result over 50,000 characters it
would replace with a preview, which fails here). Any other request (a title,
a quota probe, count_tokens) gets a short plain answer and is only recorded.
The test also makes this server Claude Code's HTTP(S) proxy: a request for
anywhere but 127.0.0.1 arrives as CONNECT (or an absolute URL) and is
recorded as "elsewhere" and refused.

With MESSAGES_STANDIN_HTTP=1 the server is one served over HTTP without
--http-allow-run (the README's "Serve a team over HTTP"): only the first
three tools are offered, skill_run must not be, the conversation calls
those three, and skill_list must list the declared script as unavailable
over HTTP (HTTP-009).

Usage: messages_standin.py RECORD SKILLS_DIR SKILL FILE SCRIPT

It binds 127.0.0.1 on a free port, prints `PORT <n>` on stdout, and serves
until its stdin closes. After every request it rewrites RECORD (JSON: every
request it got, every check with ok/detail, whether ToolSearch was used,
the final text) so the test reads what happened even if Claude Code stops
half-way. MESSAGES_STANDIN_DUMP=<dir> also saves each request body there.
Standard library only.
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RECORD, SKILLS_DIR, SKILL, FILE, SCRIPT = sys.argv[1:6]
OVER_HTTP = os.environ.get("MESSAGES_STANDIN_HTTP") == "1"
RUN_ARGS = ["one", "two words"]
PREFIX = "mcp__skills__"
ID_PREFIX = "toolu_standin_"
MODEL = "claude-standin"


def skill_md_body(text):
    """SKILL.md without its frontmatter, as skill_load serves it."""
    lines = text.split("\n")
    assert lines[0].strip() == "---", "SKILL.md starts with frontmatter"
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return "\n".join(lines[i + 1 :])
    raise AssertionError("SKILL.md frontmatter is not closed")


SKILL_DIR = os.path.join(SKILLS_DIR, SKILL)
with open(os.path.join(SKILL_DIR, "SKILL.md"), encoding="utf-8") as f:
    EXPECTED_BODY = skill_md_body(f.read())
with open(os.path.join(SKILL_DIR, FILE), encoding="utf-8") as f:
    EXPECTED_FILE = f.read()
EXPECTED_SKILLS = sorted(
    d for d in os.listdir(SKILLS_DIR) if os.path.isfile(os.path.join(SKILLS_DIR, d, "SKILL.md"))
)

# The conversation, one tool call per turn: (step id, tool, input). When
# Claude Code defers the MCP tools behind its ToolSearch tool (its default),
# the conversation first loads them with it, as a model would.
SKILL_TOOLS = ["skill_list", "skill_load", "skill_file"] + ([] if OVER_HTTP else ["skill_run"])
SEARCH = ("search", "ToolSearch", {"query": "select:" + ",".join(PREFIX + t for t in SKILL_TOOLS)})
PLAN = [
    ("list", PREFIX + "skill_list", {}),
    ("load", PREFIX + "skill_load", {"name": SKILL}),
    ("file", PREFIX + "skill_file", {"name": SKILL, "path": FILE}),
    ("run", PREFIX + "skill_run", {"name": SKILL, "script": SCRIPT, "args": RUN_ARGS}),
]
if OVER_HTTP:
    PLAN = [step for step in PLAN if step[0] != "run"]

lock = threading.Lock()
state = {"requests": [], "checks": [], "tool_search": None, "final_text": None, "finished": False}
checked = set()  # tool_use ids whose result has been checked


def save():
    tmp = RECORD + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f, indent=1)
    os.replace(tmp, RECORD)


def check(name, ok, detail=""):
    state["checks"].append({"name": name, "ok": bool(ok), "detail": detail if not ok else ""})


def result_json(block):
    """The JSON a tool_result block carries (a string, or text blocks)."""
    content = block.get("content")
    if isinstance(content, list):
        content = "".join(c.get("text", "") for c in content if c.get("type") == "text")
    if not isinstance(content, str):
        raise ValueError(f"tool_result content is {type(content).__name__}")
    return json.loads(content)


def check_result(step, block):
    """Checks one tool_result against what the server must have answered."""
    prefix = f"{step}: "
    if block.get("is_error"):
        check(prefix + "not an error", False, json.dumps(block)[:2000])
        return
    try:
        got = result_json(block)
    except (ValueError, TypeError) as e:
        check(prefix + "result is the tool's JSON", False, f"{e}: {json.dumps(block)[:2000]}")
        return
    check(prefix + "result is the tool's JSON", True)

    def expect(what, cond):
        check(prefix + what, cond, json.dumps(got)[:3000])

    if step == "list":
        skills = got.get("skills") or []
        expect("skill names are the tree's", sorted(s.get("name") for s in skills) == EXPECTED_SKILLS)
        mine = [s for s in skills if s.get("name") == SKILL]
        scripts = [x.get("script") for x in (mine[0].get("scripts") or [])] if mine else []
        if OVER_HTTP:
            unavailable = {x.get("script"): x.get("reason", "") for x in (mine[0].get("unavailableScripts") or [])} if mine else {}
            expect("no script runnable over HTTP", scripts == [])
            expect("the declared script is unavailable over HTTP (HTTP-009)", "HTTP-009" in unavailable.get(SCRIPT, ""))
        else:
            expect("the declared script is listed", SCRIPT in scripts)
        expect("no problems", got.get("problems") == [])
    elif step == "load":
        expect("name", got.get("name") == SKILL)
        expect("body is SKILL.md's body", got.get("body") == EXPECTED_BODY)
        paths = [x.get("path") for x in got.get("files") or []]
        expect("files list the bundled file and script", FILE in paths and SCRIPT in paths)
    elif step == "file":
        files = got.get("files") or [{}]
        expect("one file", len(files) == 1)
        expect("its path", files[0].get("path") == FILE)
        expect("its content, byte for byte", files[0].get("content") == EXPECTED_FILE)
        expect("not truncated", files[0].get("truncated") is False)
    elif step == "run":
        will = got.get("willRun") or {}
        argv = will.get("argv") or []
        expect("a preview (dryRun)", got.get("dryRun") is True)
        expect("names the skill and script", will.get("skill") == SKILL and will.get("script") == SCRIPT)
        expect(
            "argv is the script then the args as sent",
            argv[-len(RUN_ARGS) - 1 :] == [os.path.join(SKILL_DIR, SCRIPT)] + RUN_ARGS,
        )


def is_main(body):
    """The conversation under test: it offers the MCP tools, or names them
    as deferred behind ToolSearch."""
    tools = [t.get("name", "") for t in body.get("tools") or []]
    return any(n.startswith(PREFIX) for n in tools) or (
        "ToolSearch" in tools and PREFIX + "skill_list" in json.dumps(body)
    )


def callable_tools(body):
    """The tools a request offers with their schema (not deferred)."""
    return {t.get("name"): t for t in body.get("tools") or [] if not t.get("defer_loading")}


def plan(body):
    """The steps of the conversation. Fixed at its first request: with the
    skill tools offered there, no search; deferred, ToolSearch first."""
    if state["tool_search"] is None:
        offered = callable_tools(body)
        state["tool_search"] = not all(PREFIX + t in offered for t in SKILL_TOOLS)
        # LIST-015: which skill tools the first request offers outright.
        state["first_offered"] = sorted(n for n in offered if n.startswith(PREFIX))
    return ([SEARCH] if state["tool_search"] else []) + PLAN


def plan_step(body, steps):
    """Which step the conversation is at: checks the results it carries
    (once each) and returns the next step's index (len(steps) = finish)."""
    answered = {}
    for m in body.get("messages") or []:
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if b.get("type") == "tool_result" and str(b.get("tool_use_id", "")).startswith(ID_PREFIX):
                answered[b["tool_use_id"]] = b
    for i, (step, _, _) in enumerate(steps):
        tid = f"{ID_PREFIX}{i:02d}_{step}"
        if tid not in answered:
            return i
        if tid not in checked:
            checked.add(tid)
            try:
                (check_search if step == "search" else lambda b: check_result(step, b))(answered[tid])
            except Exception as e:  # a result of an unexpected shape: a failed check, not a 500
                check(f"{step}: checked without an exception", False, repr(e))
    return len(steps)


def check_search(block):
    """ToolSearch's answer: a tool_reference block for every skill tool."""
    content = block.get("content")
    refs = {c.get("tool_name") for c in content if c.get("type") == "tool_reference"} if isinstance(content, list) else set()
    check(
        "search: ToolSearch references every skill tool",
        not block.get("is_error") and all(PREFIX + t in refs for t in SKILL_TOOLS),
        json.dumps(block)[:3000],
    )


def check_offered(body):
    """Once the conversation is about to call a skill tool: all four are
    offered with their input schemas (after ToolSearch, as deferred tools
    its result references); over HTTP the first three, and no skill_run."""
    if "offered" in checked:
        return
    checked.add("offered")
    tools = {t.get("name"): t for t in body.get("tools") or []}
    for tool in SKILL_TOOLS:
        t = tools.get(PREFIX + tool)
        check(
            f"offered: {PREFIX}{tool} with an object input schema",
            t is not None and (t.get("input_schema") or {}).get("type") == "object",
            json.dumps(sorted(tools))[:2000],
        )
    if OVER_HTTP:
        # Not offered, nor named as a deferred tool anywhere in the request.
        check(f"offered: no {PREFIX}skill_run over HTTP", PREFIX + "skill_run" not in json.dumps(body), json.dumps(sorted(tools))[:2000])


def tool_use_message(steps, i):
    step, tool, inp = steps[i]
    return [
        {"type": "text", "text": f"Step {i + 1}: calling {tool}."},
        {"type": "tool_use", "id": f"{ID_PREFIX}{i:02d}_{step}", "name": tool, "input": inp},
    ], "tool_use"


def final_message():
    failed = [c["name"] for c in state["checks"] if not c["ok"]]
    n = len(state["checks"])
    if failed:
        text = f"STANDIN: {len(failed)} of {n} checks failed: " + "; ".join(failed)
    else:
        text = f"STANDIN: all {n} checks passed"
    state["final_text"] = text
    state["finished"] = True
    return [{"type": "text", "text": text}], "end_turn"


def sse(content, stop_reason, msg_id):
    """The event stream the public Messages API sends for one message."""
    events = []

    def ev(kind, data):
        data = dict(type=kind, **data)
        events.append(f"event: {kind}\ndata: {json.dumps(data)}\n\n")

    ev(
        "message_start",
        {
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            }
        },
    )
    ev("ping", {})
    for idx, block in enumerate(content):
        if block["type"] == "text":
            ev("content_block_start", {"index": idx, "content_block": {"type": "text", "text": ""}})
            text = block["text"]
            for k in range(0, len(text), 40):  # several deltas, as the API sends
                ev(
                    "content_block_delta",
                    {"index": idx, "delta": {"type": "text_delta", "text": text[k : k + 40]}},
                )
        else:
            start = {k: block[k] for k in ("type", "id", "name")}
            start["input"] = {}
            ev("content_block_start", {"index": idx, "content_block": start})
            raw = json.dumps(block["input"])
            for k in range(0, len(raw), 16):  # partial JSON, split anywhere
                ev(
                    "content_block_delta",
                    {"index": idx, "delta": {"type": "input_json_delta", "partial_json": raw[k : k + 16]}},
                )
        ev("content_block_stop", {"index": idx})
    ev(
        "message_delta",
        {"delta": {"stop_reason": stop_reason, "stop_sequence": None}, "usage": {"output_tokens": 20}},
    )
    ev("message_stop", {})
    return "".join(events).encode()


def whole(content, stop_reason, msg_id):
    return json.dumps(
        {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 20},
        }
    ).encode()


def where(path):
    """A proxied request names its absolute URL; one for us, only a path."""
    return "elsewhere" if not path.startswith("/") else "here"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    counter = 0

    def log_message(self, *args):
        pass

    def reply(self, status, ctype, data):
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_standin")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with lock:
            state["requests"].append({"method": self.command, "path": self.path, "kind": where(self.path)})
            save()
        self.reply(404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"stand-in"}}')

    do_HEAD = do_GET

    def do_CONNECT(self):
        # The test also names this server as Claude Code's HTTP(S) proxy
        # (NO_PROXY exempts 127.0.0.1): a request for anywhere else lands
        # here, is recorded and goes nowhere.
        with lock:
            state["requests"].append({"method": "CONNECT", "path": self.path, "kind": "elsewhere"})
            save()
        self.send_response(403)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        path = self.path.split("?")[0]
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with lock:
            Handler.counter += 1
            if os.environ.get("MESSAGES_STANDIN_DUMP"):  # a directory, for debugging
                with open(os.path.join(os.environ["MESSAGES_STANDIN_DUMP"], f"{Handler.counter:03d}.json"), "wb") as f:
                    f.write(raw)
            msg_id = f"msg_standin_{Handler.counter:03d}"
            entry = {
                "method": "POST",
                "path": self.path,
                "model": body.get("model"),
                "stream": body.get("stream"),
                "max_tokens": body.get("max_tokens"),
                "tools": [t.get("name") for t in body.get("tools") or []],
                "messages": len(body.get("messages") or []),
            }
            state["requests"].append(entry)
            if where(self.path) == "elsewhere":
                entry["kind"] = "elsewhere"
                save()
                return self.reply(403, "application/json", b"{}")
            if path.endswith("/count_tokens"):
                entry["kind"] = "count_tokens"
                save()
                return self.reply(200, "application/json", b'{"input_tokens": 100}')
            if not path.endswith("/v1/messages"):
                entry["kind"] = "unknown"
                save()
                return self.reply(
                    404, "application/json", b'{"type":"error","error":{"type":"not_found_error","message":"stand-in"}}'
                )
            if is_main(body):
                entry["kind"] = "main"
                steps = plan(body)
                i = plan_step(body, steps)
                entry["step"] = steps[i][0] if i < len(steps) else "finish"
                if i < len(steps) and steps[i][0] != "search":
                    check_offered(body)
                content, stop = tool_use_message(steps, i) if i < len(steps) else final_message()
            else:
                # Claude Code's own side calls (a title, a quota probe, ...):
                # a short plain answer, checked by nothing.
                entry["kind"] = "side"
                content, stop = [{"type": "text", "text": "Skill tools check"}], "end_turn"
            save()
        if body.get("stream"):
            self.reply(200, "text/event-stream", sse(content, stop, msg_id))
        else:
            self.reply(200, "application/json", whole(content, stop, msg_id))


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that drops a kept-alive connection is no failure here.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def main():
    server = Server(("127.0.0.1", 0), Handler)
    with lock:
        save()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    sys.stdin.read()  # until the test closes our stdin (or goes away)
    server.shutdown()


if __name__ == "__main__":
    main()
