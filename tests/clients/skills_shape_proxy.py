"""A shape-changing proxy for the skills profile (issue 45 §4): starts a
real SEP-2640 server on stdio and answers its client in another shape the
extension equally allows, so CI can show that `--profile skills` passes a
server that answers every request validly but differently from this one.

usage: skills_shape_proxy.py SERVER [ARGS...]

Where the stable text (spec/sep-2640.md) leaves a choice, the proxy makes
the other one:

  * page size and cursor form: `skills/list` and `resources/directory/read`
    are answered by the proxy from the server's whole listing (paged
    through with requests of the proxy's own), PAGE entries a page, in
    reverse order, with cursors of the proxy's own form; a cursor it did
    not issue is refused with -32602 (SEP2640-LIST-09, DIR-18: pagination
    as the base protocol's, where a cursor is opaque);
  * `"dynamic"` for one skill: the skill with the smallest URI in the whole
    listing is served with `"resources": "dynamic"`, in `skills/list` and
    `skills/get` alike (SEP2640-RES-01, reading R7);
  * extra members: every object of a result or error gains
    EXTRA_KEY = EXTRA_VALUE, except inside `frontmatter` (which is the
    author's, verbatim: SEP2640-FM-06) and `capabilities` (whose keys
    declare things);
  * reversed keys: every object's keys come in reverse sorted order, and a
    manifest's entries in reverse order (the text fixes no order);
  * other error wording: every error keeps its code, its message is the
    proxy's own, and its `data` is dropped.

The client's requests go to the server unchanged (with their ids); the
server's notifications and requests to the client pass through verbatim,
and so does any line the rewrite trips on.
"""
import base64
import itertools
import json
import os
import signal
import subprocess
import sys
import threading

PAGE = 2
EXTRA_KEY = "x-reshaped"
EXTRA_VALUE = "skills-shape-proxy"
# Subtrees where an added member would change meaning, not shape.
UNTOUCHED = {"frontmatter", "capabilities"}
CURSOR_PREFIX = "reshaped."
# Requests the proxy answers on a thread of their own, from requests of its
# own to the server.
OWN = {"skills/list", "skills/get", "resources/directory/read"}


class Proxy:
    def __init__(self, argv):
        self.child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.out_lock = threading.Lock()
        self.in_lock = threading.Lock()
        self.waiting = {}  # inner id -> [Event, reply]
        self.waiting_lock = threading.Lock()
        self.ids = itertools.count(1)
        self.workers = []

    # -- plumbing ---------------------------------------------------------

    def to_client(self, msg):
        data = msg if isinstance(msg, bytes) else (json.dumps(msg, ensure_ascii=False) + "\n").encode("utf-8")
        with self.out_lock:
            try:
                sys.stdout.buffer.write(data)
                sys.stdout.buffer.flush()
            except OSError:
                pass  # the client is gone

    def to_server(self, data):
        with self.in_lock:
            self.child.stdin.write(data)
            self.child.stdin.flush()

    def ask(self, method, params):
        """Sends a request of the proxy's own; returns the server's reply."""
        inner = "reshape-%d" % next(self.ids)
        slot = [threading.Event(), None]
        with self.waiting_lock:
            self.waiting[inner] = slot
        msg = {"jsonrpc": "2.0", "id": inner, "method": method}
        if params is not None:
            msg["params"] = params
        self.to_server((json.dumps(msg, ensure_ascii=False) + "\n").encode("utf-8"))
        if not slot[0].wait(60):
            raise RuntimeError("no reply from the server to the proxy's %s" % method)
        return slot[1]

    # -- the proxy's own answers -----------------------------------------

    def whole(self, method, params, key):
        """Every entry of a paged listing, and the last page's other
        members; or the server's error reply."""
        items, last, cursor, seen = [], None, None, set()
        while True:
            p = dict(params or {})
            p.pop("cursor", None)
            if cursor is not None:
                p["cursor"] = cursor
            reply = self.ask(method, p)
            if "result" not in reply:
                return None, reply
            last = reply["result"]
            items.extend(last.get(key) or [])
            cursor = last.get("nextCursor")
            if cursor is None or cursor in seen:
                break
            seen.add(cursor)
        rest = {k: v for k, v in last.items() if k not in (key, "nextCursor")}
        return (items, rest), None

    def dynamic_uri(self, params):
        listing, _ = self.whole("skills/list", params, "skills")
        if listing is None:
            return None
        uris = [s.get("uri") for s in listing[0] if isinstance(s, dict) and isinstance(s.get("uri"), str)]
        return min(uris) if uris else None

    def paged(self, msg, key):
        params = msg.get("params") or {}
        offset = 0
        if "cursor" in params and params["cursor"] is not None:
            offset = read_cursor(params["cursor"], key)
            if offset is None:
                return error(msg["id"], -32602, "cursor not issued by this server")
        listing, err = self.whole(msg["method"], params, key)
        if listing is None:
            return reword(err, msg["id"])
        items, rest = listing
        if key == "skills":
            dyn = min((s["uri"] for s in items if isinstance(s, dict) and isinstance(s.get("uri"), str)), default=None)
            items = [make_dynamic(s, dyn) for s in items]
        items = items[::-1]
        result = dict(rest)
        result[key] = items[offset:offset + PAGE]
        if offset + PAGE < len(items):
            result["nextCursor"] = make_cursor(offset + PAGE, key)
        return {"jsonrpc": "2.0", "id": msg["id"], "result": result}

    def get(self, msg):
        reply = self.ask("skills/get", msg.get("params"))
        if "result" not in reply:
            return reword(reply, msg["id"])
        result = reply["result"]
        dyn = self.dynamic_uri({k: v for k, v in (msg.get("params") or {}).items() if k == "_meta"})
        if isinstance(result, dict) and isinstance(result.get("skill"), dict):
            result["skill"] = make_dynamic(result["skill"], dyn)
        return {"jsonrpc": "2.0", "id": msg["id"], "result": result}

    def own(self, msg):
        try:
            if msg["method"] == "skills/list":
                reply = self.paged(msg, "skills")
            elif msg["method"] == "resources/directory/read":
                reply = self.paged(msg, "resources")
            else:
                reply = self.get(msg)
            self.to_client(reshape(reply))
        except Exception as e:  # say so rather than leave the client waiting
            self.to_client(error(msg.get("id"), -32603, "the reshaping proxy failed: %s" % e))

    # -- the pumps --------------------------------------------------------

    def pump_in(self):
        try:
            for line in sys.stdin.buffer:
                try:
                    msg = json.loads(line)
                except ValueError:
                    msg = None
                if isinstance(msg, dict) and msg.get("method") in OWN and "id" in msg:
                    t = threading.Thread(target=self.own, args=(msg,), daemon=True)
                    self.workers.append(t)
                    t.start()
                    continue
                self.to_server(line)
        except (OSError, ValueError):
            pass  # the server is gone
        for t in self.workers:
            t.join(timeout=70)
        try:
            self.child.stdin.close()  # forward EOF
        except OSError:
            pass

    def pump_out(self):
        for line in self.child.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                self.to_client(line)
                continue
            if isinstance(msg, dict) and isinstance(msg.get("id"), str) and msg["id"].startswith("reshape-") \
                    and "method" not in msg:
                with self.waiting_lock:
                    slot = self.waiting.pop(msg["id"], None)
                if slot is not None:
                    slot[1] = msg
                    slot[0].set()
                    continue
            if not isinstance(msg, dict) or "method" in msg or ("result" not in msg and "error" not in msg):
                self.to_client(line)
                continue
            try:
                self.to_client(reshape(msg))
            except Exception:
                self.to_client(line)


def make_cursor(offset, key):
    raw = json.dumps({"o": offset, "k": key}).encode()
    return CURSOR_PREFIX + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def read_cursor(cursor, key):
    """The offset a cursor of the proxy's own names, or None."""
    if not isinstance(cursor, str) or not cursor.startswith(CURSOR_PREFIX):
        return None
    body = cursor[len(CURSOR_PREFIX):]
    try:
        v = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (ValueError, TypeError):
        return None
    if not isinstance(v, dict) or v.get("k") != key or type(v.get("o")) is not int or v["o"] < 0:
        return None
    return v["o"]


def make_dynamic(skill, uri):
    if isinstance(skill, dict) and uri is not None and skill.get("uri") == uri:
        skill = dict(skill)
        skill["resources"] = "dynamic"
    return skill


def error(id_, code, message):
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def reword(reply, id_):
    err = reply.get("error") if isinstance(reply, dict) else None
    code = err.get("code") if isinstance(err, dict) else -32603
    return error(id_, code, "refused")


def shape(v, key=None):
    """Extra members, reversed keys, reversed manifests; nothing under
    UNTOUCHED gains a member, and no string changes."""
    if isinstance(v, dict):
        out = {}
        for k in sorted(v, reverse=True):
            x = v[k]
            if k in UNTOUCHED:
                out[k] = rekey(x)
            elif k == "resources" and isinstance(x, list) and key == "skill":
                out[k] = [shape(e) for e in x][::-1]
            else:
                out[k] = shape(x, k)
        if key not in ("_meta",):
            out[EXTRA_KEY] = EXTRA_VALUE
        return out
    if isinstance(v, list):
        return [shape(x, "skill" if key == "skills" else None) for x in v]
    return v


def rekey(v):
    if isinstance(v, dict):
        return {k: rekey(v[k]) for k in sorted(v, reverse=True)}
    if isinstance(v, list):
        return [rekey(x) for x in v]
    return v


def reshape(msg):
    msg = dict(msg)
    if "error" in msg and isinstance(msg["error"], dict):
        code = msg["error"].get("code")
        msg["error"] = {"message": "the server refused this (code %s)" % code, "code": code, EXTRA_KEY: EXTRA_VALUE}
    elif "result" in msg:
        msg["result"] = shape(msg["result"])
    return rekey(msg)


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: skills_shape_proxy.py SERVER [ARGS...]\n")
        sys.exit(2)
    proxy = Proxy(sys.argv[1:])

    def stop(signum, _frame):
        try:
            proxy.child.send_signal(signum)
        except OSError:
            pass

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, stop)
    threading.Thread(target=proxy.pump_in, daemon=True).start()
    reader = threading.Thread(target=proxy.pump_out, daemon=True)
    reader.start()
    rc = proxy.child.wait()
    reader.join(timeout=5)
    try:
        sys.stdout.buffer.flush()
    except OSError:
        pass
    os._exit(rc if rc >= 0 else 128 - rc)


main()
