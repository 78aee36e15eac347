"""The console's shell: a navigation per role, a skip link, and 404/403 pages inside the console."""

import re

import pytest

from tests.factories import logged_in

pytestmark = pytest.mark.django_db


def nav_links(html: str) -> list[str]:
    nav = html[html.index('<nav aria-label="Main"') : html.index("</nav>")]
    return re.findall(r">([A-Z][a-z]+(?: [a-z]+)?)</a>", nav)


def test_each_role_sees_its_work_first(client, reviewer, engineer, lead):
    logged_in(client, reviewer)
    assert nav_links(client.get("/").content.decode()) == [
        "Dashboard",
        "Review",
        "Layers",
        "Calls",
        "Agents",
        "Rules",
    ]
    logged_in(client, engineer)
    assert nav_links(client.get("/").content.decode()) == [
        "Dashboard",
        "Issues",
        "Judge runs",
        "Workbench",
        "Gates",
        "Layers",
        "Calls",
        "Agents",
        "Rules",
        "Verdicts",
        "Import",
    ]
    logged_in(client, lead)
    html = client.get("/").content.decode()
    assert nav_links(html)[:3] == ["Dashboard", "Calibration", "Gates"]
    # The layers' own pages hang off one map, so the navigation stays one line at desk width.
    assert nav_links(html)[3:] == [
        "Issues",
        "Review",
        "Judge runs",
        "Workbench",
        "Layers",
        "Calls",
        "Agents",
        "Rules",
        "Verdicts",
        "Import",
    ]
    layers = client.get("/layers/").content.decode()
    for url in (
        "/decisions/",
        "/outcomes/",
        "/classifiers/",
        "/eval-runs/",
        "/axes/",
        "/conversation/",
    ):
        assert f'href="{url}' in layers, url
    assert 'href="/webhooks/">Webhooks</a>' in html
    logged_in(client, reviewer)
    layers = client.get("/layers/").content.decode()
    assert 'href="/decisions/' in layers and 'href="/outcomes/' not in layers
    assert '<a class="skip-link" href="#main">Skip to content</a>' in html
    assert 'data-nav-toggle aria-expanded="false" aria-controls="main-nav"' in html


def test_not_found_and_not_allowed_stay_inside_the_console(client, reviewer):
    logged_in(client, reviewer)
    missing = client.get("/calls/no-such-call/")
    assert missing.status_code == 404
    html = missing.content.decode()
    assert "Nothing here" in html and '<nav aria-label="Main"' in html
    refused = client.get("/calibration/")
    assert refused.status_code == 403
    assert "Not for your role" in refused.content.decode() and "(reviewer)" in (
        refused.content.decode()
    )
