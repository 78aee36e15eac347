"""Classifier thresholds in Chromium, at a desk and on a phone: a lead follows Layers in the
navigation to the classifier thresholds, opens a classifier, reads its PR curve and chosen
threshold, changes the target precision and filters by tenant."""

import pytest
from playwright.sync_api import expect

from tests.e2e.test_days import SIZES, check_page, go
from tests.labeling.test_classifier_thresholds import marked  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db(transaction=True)


@SIZES
@pytest.mark.usefixtures("marked")
def test_a_lead_reads_where_a_blocking_threshold_would_sit(login, lead, live_server, page, size):
    page.set_viewport_size(size)
    login(lead)
    go(page, "Layers")
    page.get_by_role("link", name="Classifier thresholds").click()
    page.wait_for_url(f"{live_server.url}/classifiers/")
    check_page(page)
    page.get_by_role("link", name="classifiers.injection").click()
    expect(page.get_by_test_id("pr-curve")).to_be_visible()
    expect(page.get_by_test_id("threshold")).to_have_text("85")
    # The confidence histogram's longest bar fills its track; an empty bucket draws nothing (its
    # lengths were once inline styles, which the CSP refused: every bar 1 px wide).
    longest = page.locator(".hist rect[width='100']").first.bounding_box()
    track = page.locator(".hist svg.bar").first.bounding_box()
    assert longest["width"] > 40 and abs(longest["width"] - track["width"]) < 1
    assert page.locator(".hist rect[width='0']").count() > 0
    check_page(page)
    page.get_by_label("Target precision").fill("0.6")
    page.get_by_role("textbox", name="Tenant").fill("acme")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**tenant=acme**")
    # acme: 95 and 90 right, 70 wrong; at threshold 0 precision is 2/3, which reaches 0.6.
    expect(page.get_by_test_id("threshold")).to_have_text("0")
    expect(page.get_by_test_id("split-tenant-acme")).to_be_visible()
    expect(page.get_by_test_id("split-tenant-globex")).to_have_count(0)
    check_page(page)
