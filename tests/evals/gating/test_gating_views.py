"""Gate pages: permissions, editing a threshold, the run page's links, the history's noise marks."""

import pytest
from django.test import Client

from evals.gating import services as gating
from evals.gating.models import GateMetric, GateRun
from tests.factories import RuleFactory, RuleVersionFactory, logged_in

pytestmark = pytest.mark.django_db


def test_reviewer_has_no_gate_pages_and_no_nav_link(world, reviewer):
    c = logged_in(Client(), reviewer)
    assert c.get("/gates/").status_code == 403
    assert c.get("/gates/release/").status_code == 403
    assert "Gates</a>" not in c.get("/").content.decode()


def test_engineer_sees_the_gate_but_cannot_edit_it(world, engineer):
    c = logged_in(Client(), engineer)
    page = c.get("/gates/release/").content.decode()
    assert "violation rate: group asking" in page and "Add a metric" not in page
    assert "Gates</a>" in c.get("/").content.decode()
    metric = world.gate.metrics.get(kind="violation_rate")
    assert c.post(f"/gates/release/metrics/{metric.pk}/", {"limit": "0.9"}).status_code == 403
    metric.refresh_from_db()
    assert metric.threshold == 0.5


def test_lead_edits_a_threshold_with_htmx_and_without(world, lead):
    c = logged_in(Client(), lead)
    metric = world.gate.metrics.get(kind="violation_rate")
    r = c.post(f"/gates/release/metrics/{metric.pk}/", {"limit": "0.25"}, HTTP_HX_REQUEST="true")
    assert (
        r.status_code == 200
        and f'id="metric-{metric.pk}"' in r.content.decode()
        and "saved" in r.content.decode()
    )
    metric.refresh_from_db()
    assert metric.threshold == 0.25
    r = c.post(f"/gates/release/metrics/{metric.pk}/", {"limit": "3"}, HTTP_HX_REQUEST="true")
    assert (
        r.status_code == 200
        and "a rate is at most 1" in r.content.decode()
        and 'role="alert"' in r.content.decode()
    )
    metric.refresh_from_db()
    assert metric.threshold == 0.25
    r = c.post(f"/gates/release/metrics/{metric.pk}/", {"limit": "0.3"})
    assert r.status_code == 302
    metric.refresh_from_db()
    assert metric.threshold == 0.3


def test_lead_adds_and_removes_a_metric(world, lead):
    c = logged_in(Client(), lead)
    r = c.post(
        "/gates/release/metrics/add/",
        {"kind": "detector_metric", "measure": "talk_over_count", "limit": "2"},
    )
    assert r.status_code == 302
    m = world.gate.metrics.get(measure="talk_over_count")
    assert m.threshold == 2
    c.post(f"/gates/release/metrics/{m.pk}/remove/")
    assert not GateMetric.objects.filter(pk=m.pk).exists()


def test_run_from_the_page_and_failed_metric_links_to_call_turn_and_verdict(world, lead):
    c = logged_in(Client(), lead)
    world.run("2026-11-21.1")
    v = world.flag("2026-11-28.1-2", world.leak, turn=7)
    cand = world.calls["2026-11-28.1-0"].agent_version
    r = c.post("/gates/release/run/", {"candidate": cand.pk})
    run = GateRun.objects.latest("pk")
    assert r.status_code == 302 and r["Location"] == f"/gates/runs/{run.pk}/"
    # Queued, not decided in the request: the page shows it pending and polls.
    pending = c.get(r["Location"]).content.decode()
    assert run.status == "pending" and 'hx-trigger="every 2s"' in pending and "Deciding" in pending
    poll = c.get(r["Location"], headers={"HX-Request": "true"})
    assert poll.status_code == 200 and 'id="run-body"' in poll.content.decode()
    gating.gate_run_finish(run_id=run.pk)  # what the worker's task does
    poll = c.get(r["Location"], headers={"HX-Request": "true"})
    assert poll.status_code == 286 and "hx-trigger" not in poll.content.decode()
    page = c.get(r["Location"]).content.decode()
    run.refresh_from_db()
    assert run.status == "fail" and "1 of 4 metrics failed" in page
    assert 'href="/calls/2026-11-28.1-2/?turn=7#turn-7"' in page
    assert (
        "/verdicts/?transcript=2026-11-28.1-2&amp;rule=boundaries.no-rubric-leak&amp;version=1"
        in page
    )
    assert v.rationale in page


def test_history_marks_a_metric_that_moved_beyond_noise(world, lead):
    world.run("2026-11-21.1")
    for i in range(3):  # every asking check flagged: 0/6 -> 6/6, Wilson intervals apart
        world.flag(f"2026-11-28.1-{i}", world.one_q)
        world.flag(f"2026-11-28.1-{i}", world.short)
    world.run("2026-11-28.1")
    page = logged_in(Client(), lead).get("/gates/release/history/").content.decode()
    assert "moved up beyond noise" in page
    assert page.count("moved up beyond noise") == 2  # the asking rate and the weighted score


def test_golden_set_page_shows_members_and_checksum(world, lead):
    page = logged_in(Client(), lead).get("/golden-sets/release-set/").content.decode()
    assert world.golden.checksum in page and "golden/backend-01" in page
    assert "members match the checksum" in page
    assert logged_in(Client(), lead).get("/golden-sets/release-set/v9/").status_code == 404


def test_lead_points_the_gate_at_another_golden_set_version(world, lead):
    from evals.gating import services as gating

    new = gating.golden_set_revise(golden_set=world.golden, members=["golden/backend-01"])
    c = logged_in(Client(), lead)
    c.post("/gates/release/settings/", {"golden_set": world.golden.pk, "judge": ""})
    world.gate.refresh_from_db()
    assert world.gate.golden_set == world.golden and world.gate.judge is None
    r = c.post("/gates/release/settings/", {"golden_set": 999999})
    world.gate.refresh_from_db()
    assert r.status_code == 302 and world.gate.golden_set == world.golden and new.version == 2
    page = c.get("/gates/").content.decode()
    assert "release-set</a>" in page and "v2" in page  # the index lists the newest version


def test_missing_verdict_problem_links_to_the_call(world, lead):
    world.calls["2026-11-28.1-1"].verdicts.filter(rule_version=world.one_q).delete()
    run = world.run("2026-11-28.1")
    page = logged_in(Client(), lead).get(f"/gates/runs/{run.pk}/").content.decode()
    assert "call 2026-11-28.1-1 (golden/frontend-01): no verdict for asking.one-question v1" in page
    assert 'href="/calls/2026-11-28.1-1/">open the call</a>' in page


def test_the_gate_page_lists_the_rules_it_counts(world, lead):
    RuleVersionFactory(rule=RuleFactory(rule_id="opening.greet", group="opening"))
    page = " ".join(logged_in(Client(), lead).get("/gates/release/").content.decode().split())
    assert "3 promoted rule versions; 1 active rule without one" in page
    assert page.count('data-testid="gated-rule"') == 3
    assert f'href="/calibration/rule-versions/{world.leak.pk}/"' in page  # a lead's link
    assert 'boundaries.no-rubric-leak v1</a> <span class="tag tag-safety">safety</span>' in page
