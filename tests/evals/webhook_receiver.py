"""A real local HTTP server that receives webhooks: it records every POST (headers and raw body)
and answers with the statuses the test scripts (then 200 once the script runs out)."""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def wait_for(self, n: int, limit_s: float = 30) -> list[dict]:
        """Return the requests once at least `n` arrived (AssertionError after `limit_s`)."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.requests) >= n:
                    return list(self.requests)
            time.sleep(0.02)
        raise AssertionError(f"expected {n} webhook POSTs, got {len(self.requests)}")

    def _handler(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                answer = b'{"ok": true}' if status < 300 else b"receiver broke"
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        return Handler
