"""Decision points in Chromium: a reviewer labels moments with the keyboard on the review page;
the decision page reads well at desk and phone width."""

import json
import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from evals.catalog.models import Transcript
from evals.catalog.services.importing import transcripts_import
from evals.decisions.models import Decision
from evals.decisions.services.kinds import decision_kinds_import
from labeling.models import DecisionLabel
from labeling.services.decisions import decision_label_set
from labeling.services.sampling import sample_item_queue_by_hand
from tests.e2e.axe import assert_no_serious_axe
from tests.e2e.test_review_flow import db
from tests.evals.decision_helpers import KINDS_YAML

pytestmark = pytest.mark.django_db(transaction=True)

DESK, PHONE = {"width": 1400, "height": 900}, {"width": 390, "height": 844}


@pytest.fixture
def decided_call(audio_url):
    decision_kinds_import(text=KINDS_YAML)
    turns = []
    for i, (speaker, start, end) in enumerate(
        [
            ("agent", 0, 1500),
            ("user", 1700, 3500),
            ("agent", 3600, 5500),
            ("user", 5800, 8000),
            ("agent", 8650, 11000),
        ]
    ):
        turns.append({"speaker": speaker, "text": f"Line {i}.", "start_ms": start, "end_ms": end})
    line = {
        "id": "call-d",
        "agent": "phone-screen",
        "agent_version": "2026-11-28.1",
        "audio_url": audio_url,
        "turns": turns,
        "decisions": [{"kind": "handoff", "turn": 3, "choice": "keep helping", "confidence": 0.4}],
    }
    transcripts_import(lines=[json.dumps(line)])
    call = Transcript.objects.get(external_id="call-d")
    sample_item_queue_by_hand(transcript=call, added_by=None, day=timezone.localdate())
    return call


def test_a_reviewer_labels_decision_points_with_the_keyboard(
    login, reviewer, live_server, decided_call, page
):
    page.set_viewport_size(DESK)
    login(reviewer)
    page.goto(f"{live_server.url}/review/")
    page.get_by_role("button", name="Start reviewing").click()
    page.wait_for_url(f"{live_server.url}/review/calls/call-d/")
    panel = page.locator("#decision-panel")
    expect(panel.get_by_text("0 of 3 labeled")).to_be_visible()
    # the keys are in the help panel, beside the review page's own
    page.keyboard.press("?")
    expect(page.locator("#keys-help")).to_contain_text("next / previous decision point")

    # d: the first moment (turn-taking at turn 2, a 100 ms gap) becomes current
    page.keyboard.press("d")
    moments = page.locator("[data-moment]")
    first = moments.nth(0)
    first_id = int(first.get_attribute("data-moment"))
    expect(first).to_have_class(re.compile(r"\bis-current\b"))
    # x: the agent chose wrong; with two answers that is the other one ("wait")
    page.keyboard.press("x")
    expect(page.locator(f"#moment-{first_id} button[value='wait']")).to_have_attribute(
        "aria-pressed", "true"
    )
    expect(page.locator(f"#moment-{first_id} .label-state")).to_have_text("Saved")
    expect(panel.get_by_text("1 of 3 labeled")).to_be_visible()
    # the next unlabeled moment is current now: y says the agent chose right
    second_id = int(moments.nth(1).get_attribute("data-moment"))
    expect(page.locator(f"#moment-{second_id}")).to_have_class(re.compile(r"\bis-current\b"))
    page.keyboard.press("y")
    expect(page.locator(f"#moment-{second_id} .label-state")).to_have_text("Saved")
    expect(panel.get_by_text("2 of 3 labeled")).to_be_visible()

    labels = db(
        lambda: dict(
            DecisionLabel.objects.filter(reviewer=reviewer).values_list("decision_id", "answer")
        )
    )
    first_d = db(lambda: Decision.objects.get(pk=first_id))
    second_d = db(lambda: Decision.objects.get(pk=second_id))
    assert labels[first_id] == "wait" and first_d.truth == "wait"
    assert labels[second_id] == second_d.choice == second_d.truth
    assert_no_serious_axe(page, include="#decision-panel")


def test_the_decision_page_at_desk_and_phone_width(login, lead, live_server, decided_call, page):
    for d in Decision.objects.filter(kind__kind_id="turn-taking"):
        decision_label_set(reviewer=lead, decision=d, answer="wait" if d.gap_ms < 200 else d.choice)
    login(lead)
    for size in (DESK, PHONE):
        page.set_viewport_size(size)
        page.goto(f"{live_server.url}/decisions/")
        expect(page.get_by_role("heading", name="Decision points", exact=True)).to_be_visible()
        table = page.get_by_test_id("decision-accuracy")
        expect(table).to_contain_text("turn-taking v1")
        expect(table).to_contain_text("0.50")
        expect(page.get_by_test_id("gap-histogram")).to_be_visible()
        expect(page.get_by_test_id("wrong-decisions")).to_contain_text("call-d turn 2")
        expect(page.get_by_role("button", name="Queue hard moments")).to_be_visible()
        assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
        assert_no_serious_axe(page)
