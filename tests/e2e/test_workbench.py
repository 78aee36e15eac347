"""The rule workbench in the browser: an engineer goes from a rule version to a draft, reads the
estimate, runs it (the section polls while the judge works), reads the result beside version 1
and saves it; a lead says another draft changes the rule's meaning. No serious axe issue, no
console error or CSP violation, no sideways scroll at desk and phone widths."""

import pytest
from playwright.sync_api import expect

from evals.rules.models import RuleVersion
from evals.workbench.models import RuleDraft
from tests.e2e.axe import assert_no_serious_axe
from tests.labeling.workbench_helpers import DRAFT_TEXT, build_world, responder

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"width": 390, "height": 844}
DESK = {"width": 1280, "height": 900}


def check(page, errors):
    """axe and the page's width at desk and phone sizes, and nothing in the console."""
    for size in (DESK, PHONE):
        page.set_viewport_size(size)
        assert_no_serious_axe(page)
        assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth"), size
    page.set_viewport_size(DESK)
    assert errors == []


def watch(page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def test_an_engineer_tries_a_new_text_and_saves_it(
    login, engineer, live_server, fake_judge, tmp_path
):
    world = build_world()
    fake_judge.responder = responder(world)
    fake_judge.gate.clear()  # hold the judge's answers so the run is seen running
    page = login(engineer)
    errors = watch(page)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Rules").click()
    page.get_by_role("link", name="boundaries.no-hints").first.click()
    page.get_by_test_id("workbench-1").click()
    expect(page.get_by_role("heading", name="New draft")).to_be_visible()
    check(page, errors)
    page.get_by_label("Text").fill(DRAFT_TEXT)
    page.get_by_label("Note").fill("Rephrasing is not a hint; subtle hints are.")
    page.get_by_role("button", name="Make the draft").click()

    expect(page.get_by_test_id("estimate")).to_contain_text("first the 5 of 5 disagreements")
    expect(page.get_by_test_id("estimate-cost")).to_contain_text("14 judge calls")
    expect(page.get_by_test_id("diff")).to_contain_text("naming the pattern")
    check(page, errors)
    page.screenshot(path=tmp_path / "workbench-estimate.png", full_page=True)
    page.get_by_role("button", name="Run the draft on these 14 calls").click()

    section = page.locator("#workbench-run")
    expect(section).to_have_attribute("hx-trigger", "every 1s")
    expect(page.get_by_test_id("run-status")).to_have_text("running")
    fake_judge.gate.set()
    expect(page.get_by_test_id("run-status")).to_have_text("done", timeout=30_000)
    expect(section).not_to_have_attribute("hx-trigger", "every 1s")
    expect(page.get_by_test_id("fig-precision")).to_contain_text("0.50")
    expect(page.get_by_test_id("fig-precision")).to_contain_text("0.83")
    expect(page.get_by_test_id("confusion")).to_contain_text("5 · 1 · 0 · 8")
    flips = page.locator("#wb-flips")
    expect(flips.get_by_text("now agrees with reviewers")).to_have_count(5)
    expect(flips.get_by_text("now disagrees")).to_have_count(1)
    check(page, errors)
    page.screenshot(path=tmp_path / "workbench-result.png", full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=tmp_path / "workbench-result-phone.png", full_page=True)
    page.set_viewport_size(DESK)

    # The flipped call opens at its turn.
    with page.expect_navigation():
        flips.get_by_role("link", name="wb-0001").click()
    assert page.url.endswith("/calls/wb-0001/?turn=2#turn-2")
    page.go_back()

    page.get_by_role("button", name="Save as the next version").click()
    expect(page.get_by_test_id("estimate-2")).to_contain_text("Estimated from version 1's marks")
    v2 = RuleVersion.objects.get(rule=world.v1.rule, number=2)
    assert v2.text == DRAFT_TEXT and v2.estimate["figures"]["raw"]["tp"] == 5
    check(page, errors)

    # The rule's workbench compares the draft with the current version (now the draft itself).
    page.goto(f"{live_server.url}/workbench/rules/boundaries.no-hints/")
    expect(page.locator("#wb-compare")).to_contain_text("saved as v2")
    check(page, errors)


def test_a_lead_says_a_draft_changes_the_meaning(login, lead, live_server, fake_judge):
    world = build_world()
    fake_judge.responder = responder(world)
    draft = RuleDraft.objects.create(
        rule=world.v1.rule,
        base=world.v1,
        text=DRAFT_TEXT,
        model="gpt-4o-mini",
        prompt_version="conduct-v1",
    )
    page = login(lead)
    errors = watch(page)
    page.goto(f"{live_server.url}/workbench/drafts/{draft.pk}/")
    expect(page.get_by_test_id("meaning")).to_contain_text("Taken as a clarification")
    page.get_by_label("How it changes the meaning").fill("Tools now count as hints.")
    page.get_by_role("button", name="Not a clarification").click()
    expect(page.get_by_test_id("meaning")).to_contain_text("is not carried")
    expect(page.get_by_test_id("meaning")).to_contain_text("Tools now count as hints.")
    check(page, errors)
    draft.refresh_from_db()
    assert draft.changes_meaning and draft.meaning_by.username == "lena"
