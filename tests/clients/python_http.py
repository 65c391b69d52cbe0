"""The official MCP Python SDK (PyPI `mcp`) as a host drives skill-mcp over
Streamable HTTP, from open to close (issue 40 §9; HTTP-008, HTTP-009).

usage: python_http.py URL [run|cancel]

URL is `skill-mcp --http ... --http-allow-run`'s /mcp, serving the tree
tests/http_clients.rs builds: one skill, demo, with notes.md and two
declared scripts (node): scripts/hello.js prints its arguments,
scripts/slow.js takes 20 s.

The client opens a 2025-11-25 session (the SDK's legacy handshake) declaring
`elicitation` (it has a callback), lists the tools, calls skill_list and
skill_file, calls skill_run with confirm: true and answers the approval it is
asked for (RUN-028) with accept, then closes with the SDK's own close, which
sends DELETE. With `cancel`, before the approved run it also starts an
approved run of slow.js, cancels it when its first progress notification
comes (the SDK then sends `notifications/cancelled`), and keeps the session
open for 12 s, the time the SDK would take to try resuming that call's
stream four times (the server primes it with a retry of 3 s).

Every record the SDK (or anything else in the process) logs at WARNING or
above is kept, and every Python warning too (`always`, routed into
logging), as is any exception nobody retrieved. Nothing is judged here: the
script prints one JSON line of what it saw (each HTTP answer as method,
status and the request's Last-Event-ID), and tests/http_clients.rs judges
it. It fails only when the SDK raises.
"""
import asyncio
import gc
import json
import logging
import sys
import threading
import warnings

import anyio
import mcp
from mcp import types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

RECORDS = []


class Keep(logging.Handler):
    def emit(self, record):
        RECORDS.append({"level": record.levelname, "logger": record.name, "message": record.getMessage()})


def unraisable(u):
    RECORDS.append({"level": "UNRAISABLE", "logger": "sys", "message": f"{u.exc_type.__name__}: {u.exc_value!r} in {u.object!r}"})


def thread_died(args):
    RECORDS.append({"level": "THREAD", "logger": "threading", "message": f"{args.exc_type.__name__}: {args.exc_value!r}"})


logging.getLogger().addHandler(Keep(level=logging.WARNING))
logging.captureWarnings(True)
warnings.simplefilter("always")
sys.unraisablehook = unraisable
threading.excepthook = thread_died


async def main(url, flow):
    report = {"http": [], "elicitations": []}

    async def on_response(response):
        # Called when a response's head is in (a stream's body comes later);
        # a GET resuming a stream says which.
        request = response.request
        report["http"].append([request.method, response.status_code, request.headers.get("last-event-id")])
        sid = response.headers.get("mcp-session-id")
        if sid:
            report["session"] = sid

    async def elicit(ctx, params):
        report["elicitations"].append({"mode": params.mode, "message": params.message})
        return types.ElicitResult(action="accept", content={})

    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, ctx: RECORDS.append(
        {"level": "ASYNCIO", "logger": "asyncio", "message": str(ctx.get("exception") or ctx.get("message"))}))

    # The HTTP client the SDK's transport makes when given none (its
    # timeouts), with a hook that sees each answer; given to the SDK's own
    # transport, whose close sends DELETE (terminate_on_close).
    http = create_mcp_http_client()
    http.event_hooks = {"request": [], "response": [on_response]}
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with mcp.Client(transport, mode="legacy", elicitation_callback=elicit, read_timeout_seconds=60) as client:
            report["protocolVersion"] = client.protocol_version
            report["serverName"] = client.server_info.name
            report["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
            listed = await client.call_tool("skill_list", {})
            report["skillList"] = {"isError": listed.is_error, "structured": listed.structured_content}
            read = await client.call_tool("skill_file", {"name": "demo", "path": "notes.md"})
            report["skillFile"] = {"isError": read.is_error, "structured": read.structured_content}
            if flow == "cancel":
                with anyio.CancelScope() as scope:
                    async def started(progress, total, message):
                        scope.cancel()

                    await client.call_tool(
                        "skill_run", {"name": "demo", "script": "scripts/slow.js", "confirm": True},
                        progress_callback=started)
                report["cancelled"] = scope.cancelled_caught
                await anyio.sleep(12)
            ran = await client.call_tool(
                "skill_run", {"name": "demo", "script": "scripts/hello.js", "args": ["a b", "ünï"], "confirm": True})
            report["run"] = {"isError": ran.is_error, "structured": ran.structured_content}
        report["closed"] = True
    return report


report = asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "run"))
gc.collect()  # an unclosed socket or transport warns when collected
report["records"] = RECORDS
print(json.dumps(report))
