"""Browser tests: Debian's Chromium driven by pytest-playwright against live_server."""

import os
import re

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


# Reported to the test through a binding (it survives navigations, and the page's own Content
# Security Policy does not apply to a script the browser injects).
_CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", (e) => {
  window.__docketCspViolation(
    `${e.violatedDirective} refused ${e.blockedURI || "inline"}` +
      ` at ${e.sourceFile || document.URL}:${e.lineNumber}`
  );
});
"""


class PageErrors:
    """What went wrong in the browser during a test: console errors, uncaught exceptions and
    Content Security Policy violations, from every page of the test's browser context."""

    def __init__(self):
        self.found: list[str] = []
        self.allowed: list[re.Pattern] = []

    def allow(self, pattern: str) -> None:
        """Accept console errors matching `pattern`: what a test provokes on purpose (a refused
        request's status, which Chromium logs as an error)."""
        self.allowed.append(re.compile(pattern))

    def add(self, where: str, text: str) -> None:
        self.found.append(f"{where}: {text[:300]}")

    def unexpected(self) -> list[str]:
        return [f for f in self.found if not any(p.search(f) for p in self.allowed)]


@pytest.fixture(autouse=True)
def page_errors(request):
    """Fail every browser test on a console error, an uncaught exception or a CSP violation."""
    if "page" not in request.fixturenames and "context" not in request.fixturenames:
        yield None
        return
    context = request.getfixturevalue("context")
    errors = PageErrors()

    def watch(page):
        page.on(
            "console",
            lambda msg: (
                errors.add(f"console.{msg.type} on {page.url}", msg.text)
                if msg.type in ("error", "assert")
                else None
            ),
        )
        page.on("pageerror", lambda exc: errors.add(f"uncaught on {page.url}", str(exc)))

    context.expose_binding(
        "__docketCspViolation", lambda source, text: errors.add("CSP violation", text)
    )
    context.add_init_script(_CSP_LISTENER)
    for page in context.pages:
        watch(page)
    context.on("page", watch)
    yield errors
    unexpected = errors.unexpected()
    assert not unexpected, "the browser reported errors:\n" + "\n".join(unexpected)
