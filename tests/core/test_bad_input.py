"""A NUL (or bytes that are not UTF-8) in a path, a filter or a form value answers 400 or 404 with
a clear message, never 500: PostgreSQL cannot take a NUL, so this matters most there (CI runs the
suite on PostgreSQL too). Every list, page or API, is tried with a NUL in each filter it has."""

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from tests.core.test_access import url_patterns
from tests.evals.gating_helpers import World
from tests.factories import token_client

pytestmark = pytest.mark.django_db
NUL = "a\x00b"


@pytest.fixture
def world(db, lead):
    w = World()
    w.lead = lead
    return w


class FilterNames(HTMLParser):
    """The field names of a page's GET forms: the filters it offers."""

    def __init__(self):
        super().__init__()
        self.names, self._in_get_form = set(), False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self._in_get_form = (attrs.get("method") or "get").lower() == "get"
        elif tag in ("input", "select", "textarea") and self._in_get_form and attrs.get("name"):
            self.names.add(attrs["name"])

    def handle_endtag(self, tag):
        if tag == "form":
            self._in_get_form = False


def page_lists():
    """The console's pages that take no path parameter and answer GET."""
    return sorted(
        name
        for name, p in url_patterns()
        if not p.pattern.converters
        and not str(p.pattern).startswith(("api/", "^"))
        and name not in {"login", "logout", "issue-sheet-export", "calibration-export"}
    )


def test_every_page_filter_refuses_a_nul(client, world):
    client.force_login(world.lead)
    tried = {}
    for name in page_lists():
        url = reverse(name)
        page = client.get(url)
        if page.status_code != 200:  # POST-only URLs
            continue
        parser = FilterNames()
        parser.feed(page.content.decode())
        for field in sorted(parser.names) or ["q"]:
            response = client.get(url, {field: NUL})
            assert response.status_code == 400, (url, field, response.status_code)
            assert f"{field}: contains a NUL character" in response.content.decode()
        tried[url] = parser.names
    # The filters the issue named are among those tried.
    assert {"scenario", "agent_version"} <= tried[reverse("transcript-list")]
    assert {"judge", "rule"} <= tried[reverse("verdict-list")]
    assert "q" in tried[reverse("issue-sheet")] and "assignee" in tried[reverse("issue-sheet")]
    assert "judge" in tried[reverse("calibration")]
    assert reverse("review") in tried


def test_every_api_list_filter_refuses_a_nul(world):
    api = token_client(world.lead)
    schema = api.get("/api/schema/?format=json").json()
    tried = 0
    for path, item in schema["paths"].items():
        op = item.get("get")
        if op is None or "{" in path:
            continue
        for param in op.get("parameters", []):
            if param["in"] != "query":
                continue
            response = api.get(path, {param["name"]: NUL})
            assert response.status_code == 400, (path, param["name"], response.status_code)
            body = response.json()
            assert body["code"] == "invalid" and body["errors"][0]["field"] == param["name"]
            tried += 1
    assert tried >= 40


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/transcripts/a%00b/",
        "/api/v1/rules/a%00b/",
        "/calls/a%00b/",
        "/rules/a%00b/",
        "/review/calls/a%00b/",
        "/gates/x%00/",
    ],
)
def test_a_nul_in_a_path_is_a_404(client, world, path):
    client.force_login(world.lead)
    response = client.get(path)
    assert response.status_code == 404
    if path.startswith("/api/"):
        assert response.json()["code"] == "not_found"


def test_names_values_cookies_tokens_and_forms(client, world):
    client.force_login(world.lead)
    assert client.get("/calls/", {"x\x00": "1"}).status_code == 400
    assert client.get("/calls/?scenario=%ff").status_code == 400  # not UTF-8
    posted = client.post(reverse("review-next"), {"note": NUL})
    assert posted.status_code == 400 and b"note: contains a NUL" in posted.content
    bad_token = client.get("/api/v1/rules/", HTTP_AUTHORIZATION="Token a\x00b")
    assert (
        bad_token.status_code == 400 and bad_token.json()["errors"][0]["field"] == "Authorization"
    )
    client.cookies["sessionid"] = NUL
    assert client.get("/calls/").status_code == 400
