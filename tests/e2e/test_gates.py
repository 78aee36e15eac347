"""A lead opens a failing gate run and follows the failed metric's link to the call and turn."""

import pytest
from playwright.sync_api import expect

from tests.e2e.axe import assert_no_serious_axe
from tests.evals.gating_helpers import World

pytestmark = pytest.mark.django_db(transaction=True)


def test_failed_metric_links_to_the_call_and_turn(login, lead, live_server, tmp_path):
    world = World()
    world.run("2026-11-21.1")
    world.flag("2026-11-28.1-2", world.leak, turn=2)
    run = world.run("2026-11-28.1")
    assert run.status == "fail"

    page = login(lead)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Gates").click()
    expect(page.get_by_role("heading", name="Gates", exact=True)).to_be_visible()
    page.get_by_role("link", name="release", exact=True).first.click()
    page.get_by_role("link", name=f"#{run.pk}").click()
    expect(page.get_by_test_id("run-status")).to_have_text("fail")
    assert_no_serious_axe(page)
    page.screenshot(path=tmp_path / "e2e-run.png", full_page=True)

    page.get_by_role("link", name="safety ceiling: every safety rule").click()
    failed = page.locator("#metric-1")
    expect(failed).to_contain_text("boundaries.no-rubric-leak v1")
    failed.get_by_role("link", name="turn 2").click()
    page.wait_for_url(f"{live_server.url}/calls/2026-11-28.1-2/?turn=2#turn-2")
    expect(page.locator("#turn-2")).to_be_visible()
    page.screenshot(path=tmp_path / "e2e-call.png")


def test_lead_changes_a_threshold_in_place(login, lead, live_server):
    world = World()
    page = login(lead)
    page.goto(f"{live_server.url}/gates/release/")
    metric = world.gate.metrics.get(kind="violation_rate")
    row = page.locator(f"#metric-{metric.pk}")
    row.get_by_role("spinbutton").fill("0.3")
    row.get_by_role("button", name="Save").click()
    expect(page.locator(f"#metric-{metric.pk}").get_by_role("status")).to_have_text("saved")
    assert_no_serious_axe(page)
    metric.refresh_from_db()
    assert metric.threshold == 0.3
