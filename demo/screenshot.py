"""Take the README's screenshots from the demo, in a fresh console of their own.

    python demo/screenshot.py    # docs/screenshot-review.png, docs/screenshot-calibration.png

It loads the demo into an SQLite database in a temporary folder (as `make run` does), serves the
console on a free port, and drives Chromium (`make browser` finds or installs one): priya starts
reviewing today's sample and marks the first verdicts right, and lena opens calibration. Nothing
outside the temporary folder and the two pictures is touched; about a minute on a laptop.
"""

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SIZE = {"width": 1280, "height": 800}
PASSWORD = "docket-demo"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manage(env: dict, *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True)


def wait_for(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the console did not answer at {url}")


def log_in(page, base: str, username: str) -> None:
    page.goto(f"{base}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base}/")


def shoot(base: str) -> list[Path]:
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT))
    from tests.e2e.browser import chromium_path

    executable = chromium_path()
    if not executable:
        raise SystemExit("no Chromium: run `make browser` first")
    written = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page(viewport=SIZE, device_scale_factor=1)
        log_in(page, base, "priya")
        page.goto(f"{base}/review/")
        page.get_by_role("button", name="Start reviewing").click()
        page.wait_for_url(f"{base}/review/calls/**")
        page.keyboard.press("r")  # the first verdicts marked right, as a reviewer starts
        page.keyboard.press("r")
        page.wait_for_timeout(600)
        written.append(DOCS / "screenshot-review.png")
        page.screenshot(path=written[-1])
        page.context.clear_cookies()
        log_in(page, base, "lena")
        page.goto(f"{base}/calibration/")
        written.append(DOCS / "screenshot-calibration.png")
        page.screenshot(path=written[-1])
        browser.close()
    return written


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="docket-shots-") as folder:
        skip = ("DATABASE_URL", "CELERY_BROKER_URL")
        env = {k: v for k, v in os.environ.items() if k not in skip}
        env.update(DJANGO_DEBUG="1", DOCKET_VAR_DIR=folder, DOCKET_LOG_LEVEL="WARNING")
        manage(env, "migrate", "--noinput", "-v0")
        manage(env, "load_demo")
        manage(env, "demo_users")
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(f"{base}/login/")
            for path in shoot(base):
                print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size:,} bytes)")
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
