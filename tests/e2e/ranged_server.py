"""A tiny static file server on 127.0.0.1 that answers
HTTP Range requests, as browsers need to seek audio."""

import http.server
import math
import os
import re
import struct
import threading
import wave
from contextlib import contextmanager


def _handler(root: str):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=root, **kwargs)

        def log_message(self, *args):
            pass

        def send_head(self):
            path = self.translate_path(self.path)
            if not os.path.isfile(path):
                self.send_error(404)
                return None
            size = os.path.getsize(path)
            start, end = 0, size - 1
            match = re.match(r"bytes=(\d*)-(\d*)$", self.headers.get("Range", ""))
            # send_head returns the open file; SimpleHTTPRequestHandler copies and closes it.
            f = open(path, "rb")  # noqa: SIM115
            if match and (match.group(1) or match.group(2)):
                if match.group(1):
                    start = int(match.group(1))
                    end = int(match.group(2)) if match.group(2) else size - 1
                else:
                    start = max(0, size - int(match.group(2)))
                end = min(end, size - 1)
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            else:
                self.send_response(200)
            self.send_header("Content-Type", self.guess_type(path))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(end - start + 1))
            self.end_headers()
            f.seek(start)
            self._remaining = end - start + 1
            return f

        def copyfile(self, source, outputfile):
            left = self._remaining
            while left > 0:
                chunk = source.read(min(65536, left))
                if not chunk:
                    break
                outputfile.write(chunk)
                left -= len(chunk)

    return Handler


@contextmanager
def serve_directory(root: str, port: int = 0):
    """Serve `root` on 127.0.0.1 in a thread; yield the base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _handler(root))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def write_tone(path, seconds: int = 12, rate: int = 8000) -> None:
    """Write a mono 16-bit WAV tone of `seconds` to path: a stand-in for a call recording."""
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        samples = (int(2000 * math.sin(i / 6)) for i in range(rate * seconds))
        w.writeframes(b"".join(struct.pack("<h", v) for v in samples))


if __name__ == "__main__":
    import sys
    import time

    with serve_directory(sys.argv[1], int(sys.argv[2])) as url:
        print(url, flush=True)
        while True:
            time.sleep(3600)
