"""Set-up on a fresh machine: migrate without var/, and a Chromium for the browser tests."""

import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

from django.conf import settings

ROOT = Path(settings.BASE_DIR)
SHOW_SECURITY_SETTINGS = (
    "from django.conf import settings as s; "
    "print(s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_PRELOAD)"
)


def run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_migrate_in_a_fresh_clone_creates_var(tmp_path):
    var = tmp_path / "clone" / "var"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DOCKET_TEST_DB_NAME")}
    env.update(DJANGO_DEBUG="1", DOCKET_VAR_DIR=str(var), DOCKET_LOG_LEVEL="WARNING")
    done = run(["manage.py", "migrate", "--noinput", "-v0"], env)
    assert done.returncode == 0, done.stderr
    assert (var / "docket.sqlite3").stat().st_size > 0


def _path_without_chromium(tmp_path: Path, *, apt: bool) -> dict:
    """An environment whose PATH holds only what the set-up script may look for."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if apt:
        (bin_dir / "apt-get").symlink_to(shutil.which("apt-get") or "/bin/true")
    env = dict(os.environ)
    # An empty browser folder: Playwright's own Chromium is not there either.
    env.update(PATH=str(bin_dir), PLAYWRIGHT_BROWSERS_PATH=str(tmp_path / "browsers"))
    return env


def test_make_test_installs_chromium_with_apt_as_root_and_says_so(tmp_path):
    env = _path_without_chromium(tmp_path, apt=True)
    done = run(["-m", "tests.e2e.browser", "--dry-run"], env)
    assert done.returncode == 0, done.stderr
    if os.geteuid() == 0:
        assert "installing Debian's chromium with apt-get" in done.stdout
        assert "$ apt-get install -y -q chromium" in done.stdout
    else:
        assert "playwright install chromium" in done.stdout


def test_make_test_falls_back_to_playwrights_chromium_without_apt(tmp_path):
    env = _path_without_chromium(tmp_path, apt=False)
    done = run(["-m", "tests.e2e.browser", "--dry-run"], env)
    assert done.returncode == 0, done.stderr
    assert "downloading Playwright's Chromium" in done.stdout
    assert "-m playwright install chromium" in done.stdout


def test_the_browser_tests_use_the_chromium_on_path(tmp_path, monkeypatch):
    from tests.e2e.browser import chromium_path, install_plan

    fake = tmp_path / "bin" / "chromium"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    assert chromium_path() == str(fake)
    assert install_plan() == (f"Chromium: using {fake}", [])


def test_a_machine_without_chromium_gets_an_install_plan(tmp_path, monkeypatch):
    from tests.e2e.browser import PLAYWRIGHT, chromium_path, install_plan

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "browsers"))
    assert chromium_path() is None
    message, commands = install_plan()
    assert message.startswith("Chromium: not found")
    assert commands == PLAYWRIGHT  # no apt-get on this PATH


def test_after_apt_installs_chromium_off_path_the_tests_still_find_it(tmp_path, monkeypatch):
    """A trimmed PATH may leave out /usr/bin: the binary of Debian's installed package is used."""
    from tests.e2e.browser import chromium_path, install_plan

    browser = tmp_path / "usr" / "bin" / "chromium"
    browser.parent.mkdir(parents=True)
    browser.write_text("#!/bin/sh\nexit 0\n")
    browser.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    dpkg = bin_dir / "dpkg-query"  # answers as dpkg does for an installed package
    dpkg.write_text(f"#!/bin/sh\necho /usr/share/doc/chromium\necho {browser}\n")
    dpkg.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert chromium_path() == str(browser)
    assert install_plan() == (f"Chromium: using {browser}", [])
    dpkg.write_text("#!/bin/sh\necho 'dpkg-query: package chromium is not installed' >&2\nexit 1\n")
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path / "browsers"))
    assert chromium_path() is None


def test_makefile_gets_chromium_before_any_test_runs():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\ntest:") + 1 :]
    recipe = recipe[: recipe.index("\n\n")]
    prerequisites = recipe.splitlines()[0].split(":")[1].split()
    assert prerequisites == ["lint", "browser"]
    browser = makefile[makefile.index("\nbrowser:") + 1 :]
    assert "-m tests.e2e.browser" in browser[: browser.index("\n\n")]
    assert "-m tests.e2e.browser" not in recipe  # run once, by the prerequisite


def _production_env(tmp_path: Path, **extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "DATABASE_URL", "DOCKET_TEST_DB_NAME"))
    }
    env.update(
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="docket.example.com",
        DOCKET_VAR_DIR=str(tmp_path / "var"),
        **extra,
    )
    return env


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    done = run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"], _production_env(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert "no issues" in done.stdout
    shown = run(
        [
            "manage.py",
            "shell",
            "-v0",
            "-c",
            SHOW_SECURITY_SETTINGS,
        ],
        _production_env(tmp_path),
    )
    # Decided: HTTP is redirected and HSTS is on; preload is left to the domain's owner.
    assert shown.stdout.split() == ["True", "31536000", "False"], shown.stderr


def test_check_deploy_stays_clean_when_a_proxy_redirects_or_preload_is_on(tmp_path):
    # A redirect left to a proxy is clean only with the proxy named (DJANGO_BEHIND_PROXY).
    for extra in (
        {"DJANGO_SSL_REDIRECT": "0", "DJANGO_BEHIND_PROXY": "1"},
        {"DJANGO_HSTS_PRELOAD": "1"},
    ):
        env = _production_env(tmp_path, **extra)
        done = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
        assert done.returncode == 0, (extra, done.stderr)
