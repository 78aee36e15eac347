"""A lead reads the conversation judge: the figures per version, a drifting call's findings and
the call page's panel, at desk and phone sizes; and the gate run page shows the score's noise."""

import pytest
from playwright.sync_api import expect

from evals.conversation.services import conversation_result_record
from evals.gating.models import GateMetric
from tests.e2e.axe import assert_no_serious_axe
from tests.evals.conversation_helpers import scored_calls
from tests.evals.gating_helpers import World

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}


def check(page):
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth"), page.url
    assert_no_serious_axe(page)


@pytest.mark.parametrize("size", [None, PHONE], ids=["desk", "phone"])
def test_lead_follows_a_drifting_call_from_the_version_list(login, lead, live_server, size):
    _, new = scored_calls()
    page = login(lead)
    if size:
        page.set_viewport_size(size)
        page.get_by_role("button", name="Menu").click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Layers").click()
    page.get_by_role("link", name="Conversation scores").click()
    expect(page.get_by_role("heading", name="Conversation judge", exact=True)).to_be_visible()
    table = page.get_by_test_id("conversation-versions")
    expect(table).to_contain_text("6.00")
    expect(table).to_contain_text("repeated_ground × 1")
    check(page)

    table.get_by_role("link", name=f"{new.agent.name} v2").click()
    expect(page.get_by_test_id("version-mean")).to_contain_text("mean 6.00")
    calls = page.get_by_test_id("conversation-calls")
    expect(calls.locator("li").first).to_contain_text("3/10")
    check(page)

    calls.get_by_role("link", name="turn 4").click()
    expect(page.locator("#turn-4")).to_be_visible()
    panel = page.get_by_test_id("conversation-panel")
    expect(panel).to_contain_text("3/10")
    expect(panel).to_contain_text("Asks the role a second time.")
    check(page)


def test_gate_run_page_shows_the_conversation_scores_noise(login, lead, live_server):
    world = World()
    world.gate.metrics.all().delete()
    GateMetric.objects.create(gate=world.gate, kind="conversation_score", tolerance=0.5)
    scores = {"2026-11-21.1": [9, 9, 8], "2026-11-28.1": [9, 4, 8]}
    for version, values in scores.items():
        for i, score in enumerate(values):
            drift = score < 5
            conversation_result_record(
                transcript=world.calls[f"{version}-{i}"],
                judge_name="gpt-4o-mini/conversation-v1",
                answer={
                    "plan_reason": "In order.",
                    "drift_reason": "Drifts." if drift else "Steady.",
                    "findings": [{"type": "loop", "turns": [2], "note": "Loops."}] if drift else [],
                    "score": score,
                },
                plan=[],
            )
    assert world.run("2026-11-21.1").status == "pass"
    run = world.run("2026-11-28.1")
    assert run.status == "fail"
    page = login(lead)
    page.goto(f"{live_server.url}/gates/runs/{run.pk}/")
    expect(page.get_by_test_id("run-status")).to_have_text("fail")
    noise = page.get_by_test_id("noise")
    expect(noise).to_contain_text("spread (sd) 2.89")
    expect(noise).to_contain_text("over 3 calls")
    failed = page.locator("#metric-1")
    expect(failed).to_contain_text("loop: score 4 vs 9 in baseline 2026-11-21.1-1")
    check(page)
