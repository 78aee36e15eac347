"""An engineer starts an eval run from the page, follows it, and reads its rows, on a desk and a
phone; the agent and the judge are the local fake chat server."""

import pytest
from playwright.sync_api import expect

from evals.evalruns.services import eval_run_create, eval_run_execute
from tests.e2e.axe import assert_no_serious_axe
from tests.evals.evalrun_helpers import AGENT_REPLIES, SCORES, make_dataset, make_version
from tests.evals.evalrun_server import FakeChat

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def chat(settings):
    server = FakeChat().start()
    server.agent_replies, server.scores = dict(AGENT_REPLIES), dict(SCORES)
    server.judge_fail_for = ["JUDGE-DOWN"]
    for prefix in ("JUDGE", "EVAL_AGENT"):
        setattr(settings, f"{prefix}_BASE_URL", server.base_url)
        setattr(settings, f"{prefix}_API_KEY", "test-key")
        setattr(settings, f"{prefix}_MODEL", "gpt-4o-mini")
    settings.JUDGE_MAX_RETRIES = 0
    yield server
    server.stop()


def test_engineer_runs_an_eval_and_reads_its_rows(login, engineer, live_server, chat, page):
    dataset, version = make_dataset(), make_version()
    first = eval_run_create(dataset=dataset, agent_version=version, rubric="tool_selection")
    eval_run_execute(run_id=first.pk)

    login(engineer)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Layers").click()
    page.get_by_role("main").get_by_role("link", name="Eval runs").click()
    expect(page.get_by_role("heading", name="Eval runs", exact=True)).to_be_visible()
    assert_no_serious_axe(page)
    page.locator("select[name=rubric]").select_option("tool_selection")
    page.get_by_role("button", name="Estimate cost").click()
    expect(page.locator("#run-estimate")).to_contain_text("5 rows of booking-tools v1")
    page.get_by_role("button", name="Run eval").click()

    expect(page.locator("#run-status")).to_have_text("done", timeout=30_000)
    rows = page.locator("#run-rows")
    expect(rows.locator("tbody tr")).to_have_count(5)
    expect(rows).to_contain_text("A destructive action nobody asked for.")
    expect(rows).to_contain_text("agent: agent server answered HTTP 500")
    expect(rows).to_contain_text("lookup_order → issue_refund → lookup_order")
    expect(page.locator("#pass-rate")).to_have_text("66.7%")
    expect(page.locator("#run-comparison")).to_contain_text(f"run {first.pk}")
    expect(page.locator("#run-comparison")).to_contain_text("no regression")
    assert_no_serious_axe(page)

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(page.locator("#run-rows")).to_be_visible()
    assert_no_serious_axe(page)
    overflow = page.evaluate(
        "document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth"
    )
    assert overflow <= 1, f"the run page is {overflow}px wider than a phone"
