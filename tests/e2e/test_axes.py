"""An engineer opens the axes reports from the menu, reads a flagged report's axes and tasks, and
a lead registers a webhook: no serious axe issue, no sideways scroll at desk and phone sizes."""

import pytest
from playwright.sync_api import expect

from console.demo_axes import demo_axes_load
from tests.e2e.axe import assert_no_serious_axe

pytestmark = pytest.mark.django_db(transaction=True)
DESK, PHONE = {"width": 1400, "height": 900}, {"width": 390, "height": 844}


def no_sideways_scroll(page):
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth"), page.url


@pytest.mark.parametrize("size", [DESK, PHONE], ids=["desk", "phone"])
def test_engineer_reads_a_flagged_axes_report(login, engineer, live_server, size, tmp_path):
    demo_axes_load(tmp_path)
    page = login(engineer)
    page.set_viewport_size(size)
    if size == PHONE:
        page.get_by_role("button", name="Menu").click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Layers").click()
    assert_no_serious_axe(page)
    no_sideways_scroll(page)
    page.get_by_role("main").get_by_role("link", name="Trajectory axes").click()
    expect(page.get_by_role("heading", name="Axes reports")).to_be_visible()
    assert_no_serious_axe(page)
    no_sideways_scroll(page)

    page.get_by_role("row", name="2026-11-29.1").get_by_role("link").click()
    expect(page.get_by_role("heading", name="Axes of booking-desk 2026-11-29.1")).to_be_visible()
    expect(page.get_by_text("flagged", exact=True)).to_be_visible()
    expect(page.get_by_text("Flagged: was 91.7% in the baseline").first).to_be_visible()
    expect(page.get_by_role("row", name="book-economy")).to_contain_text("1/3")
    page.get_by_text("Every trajectory (12)").click()
    row = page.get_by_role("row", name="demo-traj-2026-11-29.1-book-economy-0")
    expect(row).to_contain_text("book: cabin")
    assert_no_serious_axe(page)
    no_sideways_scroll(page)


def test_lead_registers_a_webhook(login, lead, live_server):
    page = login(lead)
    page.get_by_role("banner").get_by_role("link", name="Webhooks").click()
    page.get_by_label("URL").fill("https://ci.example.com/docket-hook")
    page.get_by_label("gate_run.finished").check()
    page.get_by_role("button", name="Register").click()
    expect(page.get_by_role("heading", name="https://ci.example.com/docket-hook")).to_be_visible()
    expect(page.get_by_text("Nothing sent yet.")).to_be_visible()
    assert_no_serious_axe(page)
    page.set_viewport_size(PHONE)
    no_sideways_scroll(page)
