"""A shape-changing proxy: starts a real server and rewrites its answers into
another shape the design of record (spec/design-of-record.md, the README of
the original TypeScript server) equally allows, so CI can show that the
conformance suite's core profile reads results the way ANY implementation may
shape them, and relies on nothing the README does not name.

usage: shape_proxy.py SERVER [ARGS...]

The client's stdin goes to the server unchanged; the server's stderr passes
through; each line the server writes to stdout is rewritten when it is a
JSON-RPC response, and passed on verbatim otherwise (not JSON, a
notification, a request to the client, or anything the rewrite trips on).

Rewrites:
  * tool results (a `result` with a `content` array): no `structuredContent`;
    the tool's JSON value (structuredContent, or else the first text block's
    JSON) goes back as the first text block, pretty-printed with indent=2 as
    the original does; `isError: false` is dropped (the original omits it);
    in that value every object key not in README_KEYS is removed, every
    object's keys come in reverse sorted order, and every array is reversed
    except those under ORDERED_ARRAYS (the README fixes no other order);
  * any other result or error: object keys in reverse sorted order, and the
    `prompts` and `resources` lists reversed (the README fixes no order);
  * everywhere, after the above: every object of a result gains a field
    EXTRA_KEY = EXTRA_VALUE (an implementation may add fields the README
    does not name, and a value that says "proxy" must not read as a
    fenced-machine note), and `serverInfo.name` becomes OTHER_NAME (the
    README names no server).
"""
import json
import os
import signal
import subprocess
import sys
import threading

# Every object key a tool's JSON value may keep: the keys the README names,
# mapped generously onto the field names both servers use. The quoted phrase
# is where the README names it. A key not here is removed, with everything
# under it. (Deliberately not here, because the README names none of them:
# roots, rootsFrom, generation, scannedAt, grantError, reloadRefused, source,
# bytes, declaredEgress, env, runnableHere, skill, size, truncationNote,
# envNotSet, signal, timedOut, stdoutEncoding, stderrEncoding, error.)
README_KEYS = {
    # skill_list: "every skill found: name, description, when to use it, file
    # count, whether it declares runnable scripts and **exactly which**; plus
    # `problems`"
    "skills": 'skill_list returns "every skill found"',
    "name": 'skill_list: "name"; "A skill is served under its DIRECTORY name"',
    "description": 'skill_list: "description"',
    "whenToUse": 'skill_list: "when to use it"',
    "files": 'skill_list: "file count"; skill_load: "a manifest of the bundle\'s files"',
    "executable": 'skill_list: "whether it declares runnable scripts"',
    "scripts": 'skill_list: "and **exactly which**" (scripts)',
    "script": 'each of "exactly which" scripts, by the name skill_run\'s `script` takes',
    "interpreter": '"An interpreter from a closed set, named by the declaration"; '
                   'unavailableScripts "with the interpreter ... named"; preview: "the interpreter"',
    "unavailableScripts": '"reported by `skill_list` under `unavailableScripts`"',
    "ungrantedScripts": '"`skill_list` ... lists a skill\'s declared-but-ungranted scripts"',
    "problems": '"plus `problems`"; "comes back in `skill_list`\'s `problems`"',
    "path": 'problems: "with the path and the reason"; the manifest\'s files; skill_file `path`',
    "reason": 'problems: "with the path and the reason"; unavailableScripts: '
              '"with the interpreter and this deployment\'s set named"',
    "detail": 'problems: "the reason" in words -- "reported by name", "no `SKILL.md`", ...',
    "line": 'a block that does not parse "reported with the parser\'s position"',
    "column": 'a block that does not parse "reported with the parser\'s position"',
    "grantFrom": '"`skill_list` reports which case it is (`grantFrom`, ...)"',
    "grantNote": '"(`grantFrom`, plus a `grantNote` in the hosted one)"',
    # skill_load: "the SKILL.md body **verbatim**, plus a manifest of the
    # bundle's files" (`files`, `path` above)
    "body": 'skill_load: "the SKILL.md body **verbatim**"',
    # skill_file: "one file ...: text, or base64 with its media type. At most
    # 1 MiB, `truncated: true` rather than a silent cut"
    "content": 'skill_file: "one file from that skill\'s directory: text, or base64"',
    "encoding": 'skill_file: "text, or base64"',
    "mediaType": 'skill_file: "base64 with its media type"',
    "truncated": 'skill_file: "`truncated: true` rather than a silent cut"; '
                 'skill_run: "{exitCode, stdout, stderr, truncated, durationMs}"',
    # skill_run: "`{exitCode, stdout, stderr, truncated, durationMs}`"
    "exitCode": 'skill_run: "{exitCode, ...}"; "exit code, stdout and stderr all come back"',
    "stdout": 'skill_run: "{..., stdout, ...}"; also which stream was truncated',
    "stderr": 'skill_run: "{..., stderr, ...}"; also which stream was truncated',
    "durationMs": 'skill_run: "{..., durationMs}"',
    # skill_run without confirm: "returns a dry-run preview of exactly what
    # would run: the interpreter, the argv, the working directory, the
    # timeout, and the **names** of the variables"
    "dryRun": 'skill_run: "returns a dry-run preview"',
    "willRun": 'skill_run: "a dry-run preview of exactly what would run"',
    "argv": 'preview: "the argv"',
    "cwd": 'preview: "the working directory"',
    "timeoutMs": 'preview: "the timeout"',
    "envNames": 'preview: "the **names** of the variables the script would be handed"',
    "args": 'skill_run\'s argument "`args[]`", should a result echo it',
    "note": '"`skill_run` attaches a note saying so whenever a call fails on a '
            'machine that looks fenced"',
}

# Arrays whose order the README fixes, by the key that holds them: "An argv
# array" whose "Arguments are passed through verbatim". Every other array in
# a tool's value is reversed.
ORDERED_ARRAYS = {"argv", "args"}

# Lists of non-tool results that are reversed (the README fixes no order).
UNORDERED_LISTS = {"prompts", "resources"}

_ABSENT = object()

EXTRA_KEY = "x-impl"
EXTRA_VALUE = "shape-proxy"
OTHER_NAME = "reshaped-skill-server"


def add_extra(v):
    """Every object, recursively, with one field more."""
    if isinstance(v, dict):
        out = {k: add_extra(x) for k, x in v.items()}
        out[EXTRA_KEY] = EXTRA_VALUE
        return out
    if isinstance(v, list):
        return [add_extra(x) for x in v]
    return v


def rekey(v):
    """Every object's keys in reverse sorted order, recursively."""
    if isinstance(v, dict):
        return {k: rekey(v[k]) for k in sorted(v, reverse=True)}
    if isinstance(v, list):
        return [rekey(x) for x in v]
    return v


def reshape_value(v, ordered=False):
    """The tool's value: unnamed keys gone, keys reverse sorted, free arrays
    reversed. Strings (and other scalars) are never touched."""
    if isinstance(v, dict):
        return {
            k: reshape_value(v[k], ordered=k in ORDERED_ARRAYS)
            for k in sorted(v, reverse=True)
            if k in README_KEYS
        }
    if isinstance(v, list):
        items = [reshape_value(x) for x in v]
        return items if ordered else items[::-1]
    return v


def reshape_tool_result(res):
    content = res["content"]
    first_text = next(
        (c for c in content if isinstance(c, dict) and c.get("type") == "text"
         and isinstance(c.get("text"), str)),
        None,
    )
    value = res.pop("structuredContent", _ABSENT)
    if value is _ABSENT and first_text is not None:
        try:
            value = json.loads(first_text["text"])
        except ValueError:
            value = _ABSENT
    if value is not _ABSENT:
        text = json.dumps(add_extra(reshape_value(value)), indent=2, ensure_ascii=False)
        if first_text is None:
            content.insert(0, {"type": "text", "text": text})
        else:
            first_text["text"] = text
    if res.get("isError") is False:
        del res["isError"]
    # The envelope's own keys are reordered too; `content` keeps its order,
    # which is what says which block is the first text block.
    return rekey(res)


def rewrite(line):
    msg = json.loads(line)
    if not isinstance(msg, dict) or "method" in msg:
        return line  # a notification or a request to the client
    if "result" not in msg and "error" not in msg:
        return line
    res = msg.get("result")
    if isinstance(res, dict) and isinstance(res.get("content"), list):
        msg["result"] = reshape_tool_result(res)
    elif isinstance(res, dict):
        for key in UNORDERED_LISTS:
            if isinstance(res.get(key), list):
                res[key] = res[key][::-1]
        if isinstance(res.get("serverInfo"), dict):
            res["serverInfo"]["name"] = OTHER_NAME
        msg["result"] = add_extra(res)
    msg = rekey(msg)
    return (json.dumps(msg, ensure_ascii=False) + "\n").encode("utf-8")


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: shape_proxy.py SERVER [ARGS...]\n")
        sys.exit(2)
    child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def stop(signum, _frame):
        try:
            child.send_signal(signum)
        except OSError:
            pass

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, stop)

    def pump_in():
        try:
            for line in sys.stdin.buffer:
                child.stdin.write(line)
                child.stdin.flush()
        except (OSError, ValueError):
            pass  # the server is gone
        try:
            child.stdin.close()  # forward EOF
        except OSError:
            pass

    threading.Thread(target=pump_in, daemon=True).start()

    def pump_out():
        out = sys.stdout.buffer
        for line in child.stdout:
            try:
                new = rewrite(line)
            except Exception:  # never crash on odd input: pass it on unchanged
                new = line
            try:
                out.write(new)
                out.flush()
            except OSError:
                return  # the client is gone

    reader = threading.Thread(target=pump_out, daemon=True)
    reader.start()
    rc = child.wait()
    # The server is gone: pass on what it wrote, but do not wait on a pipe
    # some process it left behind may still hold open.
    reader.join(timeout=5)
    try:
        sys.stdout.buffer.flush()
    except OSError:
        pass
    os._exit(rc if rc >= 0 else 128 - rc)

main()
