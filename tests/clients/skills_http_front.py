"""Streamable HTTP in front of a stdio SEP-2640 server, for attacking the
skills profile's HTTP transport: each POSTed request goes through
skills_variant_proxy's Proxy (with its --variant) to the server, and its
reply comes back as an SSE stream that the front keeps open HOLD seconds
after the reply (Streamable HTTP: the server SHOULD — not MUST — close the
stream once the response is sent), sending a comment every second.

usage: skills_http_front.py --hold=SECONDS [--variant=...] SERVER [ARGS...]
Logs `listening on http://127.0.0.1:PORT/mcp` on stderr (--url stderr).
"""
import json
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOLD = 0.0
if len(sys.argv) > 1 and sys.argv[1].startswith("--hold="):
    HOLD = float(sys.argv.pop(1)[len("--hold="):])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import skills_variant_proxy as vp  # noqa: E402  (reads --variant= from argv)

proxy = vp.Proxy(sys.argv[1:])
lock = threading.Lock()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_DELETE(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        msg = json.loads(self.rfile.read(n))
        if "id" not in msg:
            with lock:
                proxy.child.stdin.write((json.dumps(msg) + "\n").encode())
                proxy.child.stdin.flush()
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with lock:
            reply = vp.mutate(proxy, msg, proxy.handle(msg))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        if msg.get("method") == "initialize":
            self.send_header("Mcp-Session-Id", uuid.uuid4().hex)
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(("event: message\ndata: %s\n\n" % json.dumps(reply)).encode())
        self.wfile.flush()
        end = time.time() + HOLD
        try:
            while time.time() < end:
                time.sleep(1)
                self.wfile.write(b": still here\n\n")
                self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    sys.stderr.write("listening on http://127.0.0.1:%d/mcp\n" % srv.server_address[1])
    sys.stderr.flush()
    srv.serve_forever()


main()
