"""An engineer starts a judge run with the button; the run page polls until the run ends."""

import pytest
from playwright.sync_api import expect

from evals.judging.models import JudgeRun, Verdict
from tests.evals.judge_helpers import make_call

pytestmark = pytest.mark.django_db(transaction=True)


def test_run_judge_button_then_the_page_polls_until_done(
    login, engineer, live_server, fake_judge, rules, tmp_path
):
    make_call("call-1")
    fake_judge.flag = {"asking.one-question": [2]}
    fake_judge.gate.clear()  # hold the judge's answers so the run is seen running
    page = login(engineer)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Judge runs").click()
    expect(page.get_by_role("heading", name="Judge runs")).to_be_visible()
    page.get_by_label("Rules", exact=True).fill("asking.* signals.*")
    page.get_by_role("button", name="Estimate cost").click()
    expect(page.locator("#run-estimate")).to_contain_text("Would make 1 judge call")
    page.get_by_role("button", name="Run judge").click()

    expect(page.get_by_role("heading", name="Judge run")).to_be_visible()
    progress = page.locator("#run-progress")
    expect(progress).to_have_attribute("hx-trigger", "every 1s")
    expect(page.locator("#run-status")).to_have_text("running")
    page.screenshot(path=tmp_path / "e2e-running.png", full_page=True)

    fake_judge.gate.set()
    expect(page.locator("#run-status")).to_have_text("done", timeout=30_000)
    expect(page.locator("#run-summary")).to_contain_text("2 verdicts written: 2 flagged, 0 errored")
    expect(progress).not_to_have_attribute("hx-trigger", "every 1s")
    expect(page.get_by_text("No errors.")).to_be_visible()
    page.screenshot(path=tmp_path / "e2e-done.png", full_page=True)
    run = JudgeRun.objects.get()
    assert run.status == JudgeRun.Status.DONE and run.calls_made == 1 and run.started_by == "marco"
    assert Verdict.objects.filter(judge_run=run, flagged=True).count() == 2
