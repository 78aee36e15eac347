"""A lead maps a voice platform's agent to a Docket agent version from the Webhooks page, and
pauses it: no serious axe issue, no sideways scroll at desk and phone sizes."""

import pytest
from playwright.sync_api import expect

from evals.ingest.models import VoiceHook
from tests.e2e.axe import assert_no_serious_axe

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"width": 390, "height": 844}


def test_lead_maps_a_retell_agent_and_pauses_the_hook(login, lead, live_server):
    page = login(lead)
    page.get_by_role("banner").get_by_role("link", name="Webhooks").click()
    page.get_by_role("main").get_by_role("link", name="Voice hooks").click()
    expect(page.get_by_role("heading", name="Voice hooks")).to_be_visible()
    page.get_by_label("Platform", exact=True).select_option("retell")
    page.get_by_label("Platform agent id").fill("oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD")
    page.get_by_label("Docket agent", exact=True).fill("clinic")
    page.get_by_label("Agent version").fill("2026-12-01.1")
    page.get_by_label("Secret").fill("key_retell_0123456789")
    page.get_by_role("button", name="Add the hook").click()
    row = page.get_by_role("row", name="oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD")
    expect(row).to_contain_text("clinic 2026-12-01.1")
    expect(row).to_contain_text("/api/v1/hooks/retell/")
    expect(page.get_by_text("key_retell_0123456789")).to_have_count(0)  # never shown again
    assert_no_serious_axe(page)
    row.get_by_role("button", name="Pause").click()
    expect(page.get_by_role("row", name="oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD")).to_contain_text(
        "paused"
    )
    assert VoiceHook.objects.get().active is False
    page.set_viewport_size(PHONE)
    assert_no_serious_axe(page)
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
