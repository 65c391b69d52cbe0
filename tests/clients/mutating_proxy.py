"""A deliberately wrong server: proxies stdio to a real one and breaks one
rule in its answers. tests/suite_strength.rs runs the conformance suite
through it to show the suite catches each kind of wrong server.

usage: mutating_proxy.py MUTATION SERVER [ARGS...]
"""
import json
import subprocess
import sys
import threading


def walk(v, fn):
    if isinstance(v, dict):
        fn(v)
        for x in v.values():
            walk(x, fn)
    elif isinstance(v, list):
        for x in v:
            walk(x, fn)


def mutate(kind, sc):
    if kind == "drop-problems" and "problems" in sc:
        sc["problems"] = []
    elif kind == "normalize-newlines" and isinstance(sc.get("body"), str):
        sc["body"] = sc["body"].replace("\r\n", "\n")
    elif kind == "never-truncated":
        def fn(d):
            if d.get("truncated") is True:
                d["truncated"] = False
        walk(sc, fn)
    elif kind == "leak-env":
        def fn(d):
            for k in ("env", "envNames"):
                if isinstance(d.get(k), list) and "PATH" in d[k]:
                    d[k] = sorted(d[k] + ["SECRET_TOKEN"])
        walk(sc, fn)
    elif kind == "frontmatter-name":
        for s in sc.get("skills", []) if isinstance(sc.get("skills"), list) else []:
            if isinstance(s, dict) and s.get("name") == "weather":
                s["name"] = "forecast"
    elif kind == "fenced-note-elsewhere" and "exitCode" in sc:
        # The original TypeScript server's note, under its own key: a
        # standalone server that attached it would break RUN-017.
        sc["networkNote"] = (
            "This MCP's network is restricted to a declared egress allowlist. A host that is not on it "
            "appears either as an HTTP 403 from the loopback proxy or as a connection timeout."
        )
    elif kind == "noise-403" and "durationMs" in sc:
        # What is no note: a 403 apart from any proxy, in a number and in
        # a field of the implementation's own, beside a "proxy" alone.
        sc["durationMs"] = 403
        sc["x-status"] = "403"
        sc["x-impl"] = "shape-proxy"
    return sc


def main():
    kind, cmd = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

    def pump_in():
        for line in sys.stdin.buffer:
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    threading.Thread(target=pump_in, daemon=True).start()
    for line in child.stdout:
        try:
            msg = json.loads(line)
            res = msg.get("result")
            if isinstance(res, dict) and isinstance(res.get("structuredContent"), dict):
                res["structuredContent"] = mutate(kind, res["structuredContent"])
                for c in res.get("content", []):
                    if c.get("type") == "text" and c.get("text", "").startswith("{"):
                        c["text"] = json.dumps(res["structuredContent"])
            line = (json.dumps(msg) + "\n").encode()
        except ValueError:
            pass
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    sys.exit(child.wait())


main()
