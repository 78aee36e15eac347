"""The demo walks the whole loop without a model: judge runs finish from the judge's cache at no
cost, checks that need a model say so, some rules are eligible for the gate and some are not,
and promoting one changes what the gate counts."""

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from console.demo_data import DEMO_DIR
from evals.catalog.selectors import agent_version_resolve
from evals.gating.models import Gate
from evals.gating.services import gate_run_evaluate, promoted_rules
from evals.judging.models import Judge, JudgeCacheEntry, JudgeRun, Verdict
from evals.judging.selectors.runs import judge_run_needs_model, judge_run_summary
from evals.judging.services.runs import judge_run_create, judge_run_plan
from evals.rules.models import RuleVersion
from labeling.models import Mark
from labeling.selectors.calibration import calibration_row
from labeling.services.promotion import PromotionRefused, rule_version_promote

V_OLD, V_NEW = "2026-11-21.1", "2026-11-28.1"


def row(rule_id: str, number: int = 1):
    return calibration_row(
        rule_version=RuleVersion.objects.get(rule__rule_id=rule_id, number=number)
    )


@pytest.mark.django_db
def test_the_demo_loop_walks_without_a_model(settings, django_capture_on_commit_callbacks):
    settings.JUDGE_BASE_URL = settings.JUDGE_API_KEY = ""
    settings.DOCKET_CLASSIFIER_BASE_URL = settings.DOCKET_CLASSIFIER_API_KEY = ""
    call_command("load_demo", stdout=StringIO())
    truth = json.loads((DEMO_DIR / "truth.json").read_text())
    judge = Judge.objects.get(name=truth["judge"])
    assert (judge.model, judge.prompt_version) == ("gpt-4o-mini", "conduct-v1")  # the runner's

    # The recorded answers are keyed as the runner keys them: every group whose rule versions the
    # demo judge answered is a cache hit, so nothing needs a call.
    answered = judge_run_plan(
        agent_version=V_NEW,
        rule_ids=["opening.*", "asking.*", "acknowledging.*", "language.*", "requests.*"],
    )
    assert answered.llm_items > 0 and answered.cache_hits == answered.llm_items
    assert answered.calls == 0 and answered.needs_model == 0

    # A run over the newer version finishes for real from the cache, at no cost; what needs a
    # model says so (the fixed rule's group, the new rule, the classifiers' model checks).
    conduct = Verdict.objects.filter(judge=judge).count()
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_run_create(agent_version=V_NEW, started_by="test")
    run.refresh_from_db()
    summary = judge_run_summary(run)
    assert run.status == JudgeRun.Status.DONE and run.calls_made == 0
    assert run.cost == Decimal(0) and run.errors == 0 and run.cache_hits > 0
    assert Verdict.objects.filter(judge=judge).count() == conduct  # verdicts kept, none doubled
    skipped = {g["group"]: g for g in judge_run_needs_model(run)}
    assert set(skipped) == {"boundaries", "audio", "detectors"}
    assert "boundaries.no-hints v2" in skipped["boundaries"]["rules"]
    assert skipped["audio"]["rules"] == ["audio.no-cut-off v1"]
    assert skipped["detectors"]["rules"] == [
        "classifiers.ai-frustration v1",
        "classifiers.scope-drift v1",
    ]
    calls = skipped["audio"]["calls"]
    assert summary["needs_model"] == 3 * calls and summary["detector_checks"] == calls

    # A detector-only run: free, no errored verdict, model checks skipped as such.
    with django_capture_on_commit_callbacks(execute=True):
        free = judge_run_create(detectors_only=True, agent_version=V_OLD, started_by="test")
    free.refresh_from_db()
    assert free.errors == 0 and not Verdict.objects.filter(judge_run=free).exclude(error="")
    assert judge_run_summary(free)["detector_checks"] == judge_run_summary(free)["needs_model"]

    # The labelling push: every mark is the truth of its verdict (truth.json), and it gives
    # some rule versions enough marks to decide; which are eligible follows from the figures.
    pushed = Mark.objects.filter(verdict__transcript__external_id__in=truth["archive"]["calls"])
    assert pushed.count() > 1000
    for m in pushed.select_related("verdict__transcript", "verdict__rule_version__rule")[:400]:
        v = m.verdict
        key = f"{v.transcript.external_id}|{v.rule_version.rule.rule_id}|{v.rule_version.number}"
        assert m.correct == truth["verdicts"].get(key, True)
    eligible = {"signals.no-long-silence", "signals.asr-confidence-floor"}
    for rule_id in eligible:
        assert row(rule_id).eligible, rule_id
    for rule_id, why in [
        ("signals.no-talk-over", "precision lower bound"),
        ("asking.one-question", "precision lower bound"),
        ("boundaries.no-hints", "more marks"),
    ]:
        r = row(rule_id)
        assert not r.eligible and any(why in w for w in r.why_not), (rule_id, r.why_not)
    assert row("signals.no-talk-over").counts.marked >= settings.DOCKET_MIN_MARKS

    # A lead promotes an eligible rule; the gate counts it from its next run.
    lena = get_user_model().objects.get(username="lena")
    silence = RuleVersion.objects.get(rule__rule_id="signals.no-long-silence")
    with pytest.raises(PromotionRefused):
        rule_version_promote(
            rule_version=RuleVersion.objects.get(rule__rule_id="signals.no-talk-over"),
            actor=lena,
            reason="not yet",
        )
    assert "signals.no-long-silence" not in promoted_rules()[1]
    rule_version_promote(rule_version=silence, actor=lena, reason="clears both floors")
    assert promoted_rules()[1]["signals.no-long-silence"] == silence
    gate = Gate.objects.get(name="release")
    old = gate_run_evaluate(gate=gate, candidate=agent_version_resolve(V_OLD), by="test")
    assert old.status == "pass" and old.rule_versions.filter(pk=silence.pk).exists()
    new = gate_run_evaluate(gate=gate, candidate=agent_version_resolve(V_NEW), by="test")
    assert new.status == "fail" and new.judged == 0  # its verdicts were already there
    assert JudgeCacheEntry.objects.count() > 0
