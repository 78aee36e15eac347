"""Every page that answers either whole or as a fragment says so with Vary: HX-Request.

Without it the browser's cache or history can hand back the bare fragment as the page (Back onto
a URL htmx pushed). Every GET page the console serves is asked both ways, as a role that may see
it; where the answers differ, both must vary on HX-Request (core.pages.page_or_fragment does it).
"""

import pytest

from tests.core.test_access import (
    EVERYONE,
    TABLE,
    E,
    L,
    R,
    request_as,
    url_for,
    url_patterns,
    world,  # noqa: F401  (the fixture)
)

PAGES = sorted(
    name
    for (name, method), who in TABLE.items()
    if method == "GET" and not name.startswith("api") and who is not EVERYONE
)


@pytest.mark.parametrize("name", PAGES)
def test_a_page_that_answers_a_fragment_varies_on_hx_request(client, world, name):  # noqa: F811
    pattern = dict(url_patterns())[name]
    url = url_for(world, name, pattern)
    who = TABLE[(name, "GET")]
    for role in (role for role in (L, E, R) if role in who):  # the first who sees a page there
        user = world.users[role]
        page = request_as(client, user, "GET", url)
        if page.status_code == 200:
            break
    client.force_login(user)
    fragment = client.get(url, headers={"HX-Request": "true"})
    if page.streaming or page.status_code != 200 or fragment.status_code not in (200, 286):
        return  # a redirect, a download, a 404 for this world: nothing to mix up
    whole = page.content.lstrip().lower().startswith(b"<!doctype html")
    if not whole or fragment.content.lstrip().lower().startswith(b"<!doctype html"):
        return  # the same shape both ways
    for answer in (page, fragment):
        assert "HX-Request" in answer.get("Vary", ""), f"{url}: {answer.get('Vary')!r}"


def test_calibration_answers_its_fragment_with_vary(client, world):  # noqa: F811
    client.force_login(world.users[L])
    fragment = client.get("/calibration/?status=candidate", headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and b"<html" not in fragment.content
    assert 'id="cal-results"' in fragment.content.decode()
    assert "HX-Request" in fragment["Vary"]
