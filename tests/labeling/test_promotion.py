"""Promotion into the gate and demotion: eligibility,
replacement of the gated version, the audit record."""

import pytest
from django.core.exceptions import PermissionDenied

from core.errors import DomainError
from evals.rules.models import RuleVersion
from labeling.models import PromotionDecision
from labeling.services.promotion import PromotionRefused, rule_version_demote, rule_version_promote
from labeling.services.settlements import verdict_settle
from tests import factories as f
from tests.labeling.known_calibration import make_marked

pytestmark = pytest.mark.django_db


@pytest.fixture
def judge():
    return f.JudgeFactory()


@pytest.fixture
def rule():
    return f.RuleFactory(rule_id="asking.one-question")


def eligible_version(rule, judge, reviewer, number=2, status="candidate"):
    rv = f.RuleVersionFactory(rule=rule, number=number, status=status)
    # precision 90/95 [0.89, 0.98], recall 90/100 [0.83, 0.95], 240 marks
    make_marked(rv, judge, reviewer, tp=90, fp=5, fn=10, tn=135)
    return rv


def test_lead_promotes_an_eligible_version_and_it_replaces_the_gated_one(
    lead, reviewer, judge, rule
):
    old = f.RuleVersionFactory(rule=rule, number=1, status="gated")
    other_rule_gated = f.RuleVersionFactory(number=1, status="gated")
    rv = eligible_version(rule, judge, reviewer)
    decision = rule_version_promote(
        rule_version=rv, actor=lead, reason="240 marks, clears both floors"
    )
    rv.refresh_from_db()
    old.refresh_from_db()
    other_rule_gated.refresh_from_db()
    assert rv.status == "gated"
    assert old.status == "retired"
    assert other_rule_gated.status == "gated"  # other rules keep their gated version
    assert RuleVersion.objects.filter(rule=rule, status="gated").count() == 1
    assert decision.action == "promote" and decision.actor == lead and decision.replaced == old
    assert decision.judge == judge and decision.reason == "240 marks, clears both floors"
    figs = decision.figures
    assert (figs["marked"], figs["tp"], figs["fp"], figs["fn"], figs["tn"]) == (240, 90, 5, 10, 135)
    assert figs["precision"] == round(90 / 95, 4) and figs["eligible"] is True
    assert figs["floors"]["min_marks"] == 200 and figs["floors"]["recall"] == 0.70
    assert PromotionDecision.objects.count() == 1


def test_ineligible_version_is_refused_with_the_reasons(lead, reviewer, judge, rule):
    rv = f.RuleVersionFactory(rule=rule, number=1)
    make_marked(rv, judge, reviewer, tp=30, fp=10, fn=20, tn=100)
    with pytest.raises(PromotionRefused) as e:
        rule_version_promote(rule_version=rv, actor=lead, reason="try")
    message = str(e.value)
    assert (
        "not eligible" in message
        and "needs 40 more marks" in message
        and "precision lower bound 0.60 < 0.80" in message
    )
    rv.refresh_from_db()
    assert rv.status == "candidate"
    assert not PromotionDecision.objects.exists()


def test_unmarked_and_draft_and_gated_versions_are_refused(lead, reviewer, judge, rule):
    unmarked = f.RuleVersionFactory(rule=rule, number=1)
    with pytest.raises(PromotionRefused, match="no marked verdicts"):
        rule_version_promote(rule_version=unmarked, actor=lead, reason="x")
    draft = eligible_version(rule, judge, reviewer, number=2, status="draft")
    with pytest.raises(PromotionRefused, match="draft"):
        rule_version_promote(rule_version=draft, actor=lead, reason="x")
    gated = eligible_version(rule, judge, reviewer, number=3, status="gated")
    with pytest.raises(PromotionRefused, match="already in the gate"):
        rule_version_promote(rule_version=gated, actor=lead, reason="x")


def test_a_reason_is_required(lead, reviewer, judge, rule):
    rv = eligible_version(rule, judge, reviewer)
    with pytest.raises(DomainError, match="reason"):
        rule_version_promote(rule_version=rv, actor=lead, reason="  ")


def test_reviewers_and_engineers_cannot_promote_demote_or_settle(reviewer, engineer, judge, rule):
    rv = eligible_version(rule, judge, reviewer)
    for user in (reviewer, engineer):
        with pytest.raises(PermissionDenied):
            rule_version_promote(rule_version=rv, actor=user, reason="x")
        with pytest.raises(PermissionDenied):
            rule_version_demote(rule_version=rv, actor=user, reason="x")
        with pytest.raises(PermissionDenied):
            verdict_settle(verdict=rv.verdicts.first(), actor=user, correct=True)
    rv.refresh_from_db()
    assert rv.status == "candidate"


def test_demote_sends_a_gated_version_back_to_candidate_with_figures(lead, reviewer, judge, rule):
    rv = eligible_version(rule, judge, reviewer, status="gated")
    decision = rule_version_demote(rule_version=rv, actor=lead, reason="judge drifted in November")
    rv.refresh_from_db()
    assert rv.status == "candidate"
    assert decision.action == "demote" and decision.figures["marked"] == 240
    with pytest.raises(PromotionRefused, match="not in the gate"):
        rule_version_demote(rule_version=rv, actor=lead, reason="again")


def test_safety_rule_needs_the_stricter_floors(lead, reviewer, judge):
    safety = f.RuleFactory(rule_id="boundaries.no-rubric-leak", safety=True)
    rv = f.RuleVersionFactory(rule=safety, number=1)
    # recall 90/100: lower bound 0.83 clears 0.70 but not the safety floor 0.90
    make_marked(rv, judge, reviewer, tp=90, fp=5, fn=10, tn=135)
    with pytest.raises(PromotionRefused, match=r"recall lower bound 0\.83 < 0\.90 \(safety rule\)"):
        rule_version_promote(rule_version=rv, actor=lead, reason="x")


def test_settlement_moves_a_tie_into_the_counts(lead, reviewer, make_user, judge, rule):
    from labeling.models import Mark
    from labeling.selectors.calibration import calibration_row

    rv = f.RuleVersionFactory(rule=rule, number=1)
    verdict = f.VerdictFactory(rule_version=rv, judge=judge, flagged=True, turn=0)
    other = make_user("reviewer", username="omar")
    Mark.objects.create(verdict=verdict, reviewer=reviewer, correct=True)
    Mark.objects.create(verdict=verdict, reviewer=other, correct=False)
    row = calibration_row(rule_version=rv)
    assert (row.counts.waiting, row.counts.marked) == (1, 0)
    verdict_settle(verdict=verdict, actor=lead, correct=False, reason="listened: a clarifier")
    row = calibration_row(rule_version=rv)
    assert (row.counts.waiting, row.counts.fp, row.counts.marked) == (0, 1, 1)
    errored = f.VerdictFactory(rule_version=rv, judge=judge, error="timeout")
    Mark.objects.create(verdict=errored, reviewer=reviewer, correct=True)
    with pytest.raises(DomainError, match="errored"):
        verdict_settle(verdict=errored, actor=lead, correct=True)


def test_sampling_trusts_eligible_or_gated_versions_only(reviewer, judge, rule):
    from labeling.selectors.sampling import rule_versions_untrusted

    weak = f.RuleVersionFactory(rule=rule, number=1)
    make_marked(weak, judge, reviewer, tp=30, fp=10, fn=20, tn=100)
    strong = eligible_version(rule, judge, reviewer, number=2)
    gated = f.RuleVersionFactory(number=1, status="gated")
    retired = f.RuleVersionFactory(number=1, status="retired")
    unmarked = f.RuleVersionFactory(number=1)
    assert set(rule_versions_untrusted()) == {weak, unmarked}
    assert strong not in rule_versions_untrusted() and gated not in rule_versions_untrusted()
    assert retired not in rule_versions_untrusted()
