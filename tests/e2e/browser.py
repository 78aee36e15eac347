"""Which Chromium the browser tests drive, and how `make test` gets one on a machine without it.

`python -m tests.e2e.browser` (run by `make test` before the browser tests) uses Debian's
`chromium` when it is on PATH; otherwise it installs it with apt-get when it runs as root on a
machine with apt-get, and else downloads Playwright's own Chromium (`playwright install
chromium`). It says which, and `--dry-run` prints the commands without running them.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

APT = [["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", "chromium"]]
PLAYWRIGHT = [[sys.executable, "-m", "playwright", "install", "chromium"]]


def system_chromium() -> str | None:
    """Return the path of Debian's (or the distribution's) Chromium, or None: the one on PATH,
    else the one Debian's `chromium` package installed (apt-get puts it in /usr/bin, which a
    trimmed PATH may leave out)."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or debian_chromium()


def debian_chromium() -> str | None:
    """Return the browser binary of Debian's installed `chromium` package, or None."""
    if not shutil.which("dpkg-query"):
        return None
    listed = subprocess.run(
        ["dpkg-query", "-L", "chromium"], capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:  # not installed
        return None
    for line in listed.stdout.splitlines():
        if line.endswith("/bin/chromium") and os.access(line, os.X_OK):
            return line
    return None


def playwright_chromium() -> str | None:
    """Return the path of the Chromium `playwright install chromium` put in place, or None."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        path = p.chromium.executable_path
    return path if path and Path(path).exists() else None


def chromium_path() -> str | None:
    """Return the Chromium the browser tests launch: the system's first, then Playwright's."""
    return system_chromium() or playwright_chromium()


def install_plan() -> tuple[str, list[list[str]]]:
    """Return (what will happen, the commands) to get a Chromium on this machine."""
    found = chromium_path()
    if found:
        return f"Chromium: using {found}", []
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        return (
            "Chromium: not found; installing Debian's chromium with apt-get (running as root)",
            APT,
        )
    message = (
        "Chromium: not found and apt-get is not available to this user; "
        "downloading Playwright's Chromium (playwright install chromium)"
    )
    return message, PLAYWRIGHT


def _run(commands: list[list[str]], dry_run: bool) -> bool:
    for command in commands:
        print("  $ " + " ".join(command), flush=True)
        if not dry_run and subprocess.run(command, check=False).returncode != 0:
            print(f"Chromium: `{' '.join(command)}` failed", flush=True)
            return False
    return True


def main(argv: list[str]) -> int:
    dry_run = "--dry-run" in argv
    message, commands = install_plan()
    print(message, flush=True)
    if not commands:
        return 0
    ok = _run(commands, dry_run)
    if not ok and commands is APT:
        print("Chromium: apt-get failed; downloading Playwright's Chromium instead", flush=True)
        ok = _run(PLAYWRIGHT, dry_run)
    if dry_run:
        return 0
    found = chromium_path() if ok else None
    if not found:
        print("Chromium: could not install it; the browser tests cannot run", file=sys.stderr)
        return 1
    print(f"Chromium: installed, using {found}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
