"""A reviewer finds an agent version's scope (instructions and tools) from the menu, at desk and
phone sizes: no serious axe issue, no sideways scroll, and the tool's arguments unfold."""

import json

import pytest
from playwright.sync_api import expect

from evals.catalog.services.importing import transcripts_import
from tests.e2e.axe import assert_no_serious_axe
from tests.e2e.test_axes import DESK, PHONE, no_sideways_scroll
from tests.evals.import_helpers import call

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = [
    {
        "name": "schedule_interview",
        "description": "Book the next interview in the hiring team's calendar.",
        "parameters": {
            "type": "object",
            "properties": {"candidate_id": {"type": "string"}, "slot": {"type": "string"}},
        },
    }
]


@pytest.mark.parametrize("size", [DESK, PHONE], ids=["desk", "phone"])
def test_a_reviewer_reads_an_agent_versions_scope(login, reviewer, live_server, size):
    line = call(
        "call-1",
        agent_instructions="You screen candidates. " * 40 + "Never promise a salary.",
        agent_tools=TOOLS,
    )
    transcripts_import(lines=[line], source="calls.jsonl")
    page = login(reviewer)
    page.set_viewport_size(size)
    if size == PHONE:
        page.get_by_role("button", name="Menu").click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Agents").click()
    expect(page.get_by_role("heading", name="Agents")).to_be_visible()
    assert_no_serious_axe(page)
    no_sideways_scroll(page)

    page.get_by_role("link", name="2026-11-28.1").click()
    expect(page.get_by_role("heading", name="Instructions")).to_be_visible()
    expect(page.get_by_text("Never promise a salary.")).to_be_visible()
    row = page.get_by_role("row", name="schedule_interview")
    row.get_by_text("2 arguments").click()
    expect(row.locator("pre")).to_contain_text(json.dumps("candidate_id"))
    assert_no_serious_axe(page)
    no_sideways_scroll(page)
