"""Browser tests: Debian's Chromium driven by pytest-playwright against live_server."""

import os

import pytest

from tests.e2e.browser import chromium_path

# Playwright's sync API runs an event loop in this thread; the ORM calls in these tests are safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
]


def pytest_collection_modifyitems(items):
    for item in items:
        if "/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    path = chromium_path()
    if not path:
        pytest.fail(
            "Chromium is not installed: `make test` installs it "
            "(or run: python -m tests.e2e.browser)"
        )
    return {**browser_type_launch_args, "executable_path": path, "args": CHROMIUM_FLAGS}


@pytest.fixture
def audio_url(tmp_path):
    """A 12-second tone served over HTTP with Range support, as recordings are."""
    from tests.e2e.ranged_server import serve_directory, write_tone

    write_tone(tmp_path / "call.wav")
    with serve_directory(str(tmp_path)) as base:
        yield f"{base}/call.wav"


@pytest.fixture
def login(page, live_server):
    """Return a function that logs a user in through the login form."""
    from tests.factories import PASSWORD

    def do_login(user):
        page.goto(f"{live_server.url}/login/")
        page.get_by_label("Username").fill(user.username)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(f"{live_server.url}/")
        return page

    return do_login
