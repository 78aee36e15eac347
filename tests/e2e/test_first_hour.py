"""A new team's first hour: connect a judge and test it (the real client, the local OpenAI-protocol
server), and in the demo promote an eligible rule and watch the gate count it. At desk and phone
widths, with axe, no console error and no CSP violation."""

from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from evals.gating.models import GateRun
from evals.rules.models import RuleVersion
from tests.e2e.axe import assert_no_serious_axe
from tests.evals.classifier_helpers import answer_classifiers

pytestmark = pytest.mark.django_db(transaction=True)

DESK, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}


def watch_console(page) -> list[str]:
    """Collect console errors (a CSP violation is one) and uncaught page errors."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def check(page, errors, tmp_path, name: str) -> None:
    assert_no_serious_axe(page)
    assert not errors, errors
    width = page.viewport_size["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "scrolls sideways"
    page.screenshot(path=tmp_path / f"{name}-{width}.png", full_page=True)


def test_connect_the_judge_and_test_it(login, lead, live_server, fake_judge, settings, tmp_path):
    fake_judge.flag = {"asking.one-question": [2]}
    answer_classifiers(fake_judge)
    fake_judge.answers["frustration"] = {"reason": "At the bot.", "target": "ai", "confidence": 90}
    base = fake_judge.base_url
    settings.JUDGE_BASE_URL = settings.JUDGE_API_KEY = ""
    settings.DOCKET_CLASSIFIER_BASE_URL = settings.DOCKET_CLASSIFIER_API_KEY = ""
    page = login(lead)
    errors = watch_console(page)
    for size in (DESK, PHONE):
        page.set_viewport_size(size)
        settings.JUDGE_BASE_URL = settings.DOCKET_CLASSIFIER_BASE_URL = ""
        page.goto(f"{live_server.url}/")
        page.get_by_role("link", name="Judge connection").click()
        expect(page.get_by_test_id("judge-status")).to_have_text("not configured")
        judge = page.locator("#conn-judge")
        expect(judge.get_by_role("button", name="Test the connection")).to_be_disabled()
        expect(page.get_by_test_id("judge-not-configured")).to_contain_text("needs a model")
        check(page, errors, tmp_path, "connection-none")

        # Connected to the local server: the same page, the real client, one real prompt.
        settings.JUDGE_BASE_URL = settings.DOCKET_CLASSIFIER_BASE_URL = base
        page.reload()
        expect(page.get_by_test_id("judge-status")).to_have_text("configured")
        expect(page.get_by_test_id("judge-server")).to_have_text(base)
        expect(page.get_by_test_id("judge-key")).to_have_text("not set")
        sent = len(fake_judge.requests)
        judge.get_by_role("button", name="Test the connection").click()
        expect(page.get_by_test_id("judge-result")).to_contain_text("Answered")
        expect(page.get_by_test_id("judge-answer")).to_contain_text("flagged at turn 2")
        expect(page.get_by_test_id("judge-latency")).to_contain_text(" ms")
        expect(page.get_by_test_id("judge-cost")).to_contain_text("$0.0000")
        page.locator("#conn-classifier").get_by_role("button", name="Test the connection").click()
        expect(page.get_by_test_id("classifier-answer")).to_contain_text("target ai")
        assert len(fake_judge.requests) == sent + 2
        check(page, errors, tmp_path, "connection-tested")


def test_in_the_demo_a_lead_promotes_an_eligible_rule_and_the_gate_counts_it(
    page, live_server, settings, tmp_path
):
    settings.JUDGE_BASE_URL = settings.JUDGE_API_KEY = ""
    call_command("load_demo", stdout=StringIO())
    errors = watch_console(page)
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill("lena")
    page.get_by_label("Password").fill("docket-demo")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    talk_over = RuleVersion.objects.get(rule__rule_id="signals.no-talk-over")
    silence = RuleVersion.objects.get(rule__rule_id="signals.no-long-silence")

    for size in (DESK, PHONE):
        page.set_viewport_size(size)
        # A rule with the marks but not the figures: what it lacks, and where Promote will be.
        page.goto(f"{live_server.url}/calibration/rule-versions/{talk_over.pk}/")
        expect(page.get_by_test_id("eligibility")).to_contain_text("precision lower bound 0.78")
        expect(page.get_by_test_id("promote-hint")).to_contain_text(
            "Promote into the gate button appears here"
        )
        expect(page.get_by_role("button", name="Promote into the gate")).to_have_count(0)
        check(page, errors, tmp_path, "not-eligible")
        # The gate before: it does not count the silence rule.
        page.goto(f"{live_server.url}/gates/release/")
        expect(page.locator("#gate-rules")).not_to_contain_text("signals.no-long-silence")
        check(page, errors, tmp_path, "gate-before")

    # At the desk, the lead promotes the eligible rule from its calibration page.
    page.set_viewport_size(DESK)
    page.goto(f"{live_server.url}/calibration/?group=signals")
    page.get_by_role("link", name="signals.no-long-silence v1").click()
    expect(page.get_by_test_id("eligibility")).to_have_text("Eligible for the gate.")
    page.get_by_label("Why promote").fill("Clears both floors on 209 marks.")
    page.get_by_role("button", name="Promote into the gate").click()
    expect(page.get_by_test_id("status")).to_have_text("gated")
    expect(page.get_by_test_id("gate-state")).to_contain_text("v1 is in the gate")

    # On the phone, the gate now lists it, and a run on the older version counts it.
    page.set_viewport_size(PHONE)
    page.goto(f"{live_server.url}/gates/release/")
    expect(page.locator("#gate-rules")).to_contain_text("signals.no-long-silence v1")
    page.get_by_label("Candidate version").select_option(label="phone-screen 2026-11-21.1")
    page.get_by_role("button", name="Run gate").click()
    expect(page.get_by_test_id("run-status")).to_have_text("pass", timeout=120_000)
    page.get_by_text("Exactly what this run used").click()
    expect(page.locator("details.g-fold")).to_contain_text("signals.no-long-silence v1")
    check(page, errors, tmp_path, "gate-after")
    run = GateRun.objects.latest("pk")
    assert run.status == "pass" and run.rule_versions.filter(pk=silence.pk).exists()
