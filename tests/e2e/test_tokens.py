"""API tokens from the page (issues 23 and 27): an engineer makes one, sees its key once, uses it
in a real HTTP request, sees its last use, and revokes it, after which the same request fails;
a lead makes a service account's token that imports. At desk and phone sizes: no serious axe
issue, no console error, no sideways scroll."""

import json
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect

from core.models import ApiToken, ServiceAccount
from tests.e2e.axe import assert_no_serious_axe
from tests.e2e.test_axes import DESK, PHONE, no_sideways_scroll

pytestmark = pytest.mark.django_db(transaction=True)


def api(live_server, key: str, path: str = "/api/v1/rules/", body: bytes | None = None) -> int:
    """Make a real HTTP request to the live server with the token; return its status."""
    headers = {"Authorization": f"Token {key}"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(f"{live_server.url}{path}", data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.parametrize("size", [DESK, PHONE], ids=["desk", "phone"])
def test_make_use_and_revoke_a_token(login, engineer, live_server, tmp_path, size):
    page = login(engineer)
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.set_viewport_size(size)
    page.get_by_role("banner").get_by_role("link", name="API", exact=True).click()
    expect(page.get_by_role("heading", name="API tokens")).to_be_visible()
    expect(page.get_by_text("No token yet.")).to_be_visible()
    assert_no_serious_axe(page)
    no_sideways_scroll(page)

    page.get_by_label("Name").fill("CI laptop")
    page.get_by_role("button", name="Make a token").click()
    expect(page.get_by_text("Copy the key now: it is not shown again.")).to_be_visible()
    key = page.get_by_label("Key").input_value()
    assert key.startswith("dkt_")
    assert_no_serious_axe(page)
    no_sideways_scroll(page)
    page.screenshot(path=tmp_path / f"made-{size['width']}.png", full_page=True)

    assert api(live_server, key) == 200
    page.goto(f"{live_server.url}/tokens/")
    row = page.get_by_role("row", name="CI laptop")
    expect(row).to_contain_text(key[:12] + "…")
    expect(row).not_to_contain_text("never")  # its last use is shown
    expect(page.get_by_text(key)).to_have_count(0)  # never shown again
    assert ApiToken.objects.get().last_used_at is not None

    row.get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("it no longer works")).to_be_visible()
    expect(page.get_by_role("row", name="CI laptop")).to_contain_text("revoked")
    assert api(live_server, key) == 401
    assert_no_serious_axe(page)
    no_sideways_scroll(page)
    assert not problems, problems


def test_a_lead_makes_a_service_accounts_token_and_it_imports(login, lead, live_server):
    page = login(lead)
    page.get_by_role("banner").get_by_role("link", name="API", exact=True).click()
    page.get_by_role("textbox", name="Account").fill("ci-release")
    page.get_by_label("Token name").fill("release job")
    page.get_by_role("button", name="Make a service account token").click()
    expect(
        page.get_by_role("heading", name="New token “release job” for ci-release")
    ).to_be_visible()
    key = page.get_by_label("Key").input_value()
    assert ServiceAccount.objects.get().user.username == "ci-release"
    rules = json.dumps({"rules": [{"id": "opening.greet", "group": "opening", "text": "Greet."}]})
    assert api(live_server, key, "/api/v1/rules/import/", rules.encode()) == 201
    page.goto(f"{live_server.url}/tokens/")
    expect(page.locator("#service-tokens")).to_contain_text("ci-release")
    assert_no_serious_axe(page)
