"""A draft's verdicts are kept apart from the released versions': after a workbench run that flags
calls version 1 passed, every sample, gate, calibration figure and verdict count of a released
version is what it was. Each assertion would fail if the draft's answers were written as verdicts
(of the base version, of the next number, or of the rules judged in the same call)."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from evals.judging.models import Verdict
from evals.judging.selectors.browse import rule_detail
from evals.rules.models import RuleVersion
from labeling.models import Mark, VerdictTally
from labeling.selectors.calibration import calibration_data
from labeling.selectors.sampling import (
    flagged_untrusted_filter,
    sample_window,
    transcripts_in_window,
    transcripts_versions_disagree,
)
from labeling.selectors.workbench import workbench_result
from labeling.services.sampling import daily_sample_make
from labeling.services.tally import verdict_tally_differences
from labeling.services.workbench import workbench_draft_create, workbench_run_start
from tests.factories import UserFactory
from tests.labeling.workbench_helpers import DRAFT_TEXT, build_world, responder

pytestmark = pytest.mark.django_db


def snapshot(world):
    """Every figure a released version's verdicts feed, as plain data."""
    day = timezone.localdate() + timedelta(days=1)  # the window holds the calls imported today
    start, end = sample_window(day=day)
    window = transcripts_in_window(start=start, end=end)
    cache.clear()  # the rule page caches its counts
    _, versions = rule_detail("boundaries.no-hints")
    return {
        "calibration": calibration_data({}),
        "tally": sorted(VerdictTally.objects.values_list("verdict_id", "cell", "weight")),
        "verdicts": sorted(
            Verdict.objects.values_list("transcript_id", "rule_version_id", "judge_id", "flagged")
        ),
        "flagged_untrusted": sorted(
            window.filter(flagged_untrusted_filter()).values_list("pk", flat=True).distinct()
        ),
        "versions_disagree": sorted(transcripts_versions_disagree(start=start, end=end)),
        "rule_page": [(v.version.number, v.verdicts, v.flagged) for v in versions],
    }


def test_a_draft_never_enters_a_sample_a_figure_or_the_verdicts(
    fake_judge, engineer, django_capture_on_commit_callbacks
):
    world = build_world()
    fake_judge.responder = responder(world)
    before = snapshot(world)
    draft = workbench_draft_create(base=world.v1, text=DRAFT_TEXT, by=engineer)
    with django_capture_on_commit_callbacks(execute=True):
        draft_run = workbench_run_start(draft=draft, by=engineer)
    result = workbench_result(draft_run)
    # The draft did flag calls version 1 passed (the subtle hints, the surprise call)...
    assert result.now_agree == 5 and result.now_disagree == 1
    # ... and none of it shows anywhere a released version is counted.
    assert snapshot(world) == before
    assert verdict_tally_differences() == 0
    assert not Verdict.objects.filter(judge_run=draft_run.judge_run).exists()
    assert not RuleVersion.objects.filter(rule=world.v1.rule, number__gt=1).exists()

    # The day's sample: the calls only the draft flagged are no judge checks.
    sample, _ = daily_sample_make(day=timezone.localdate() + timedelta(days=1), size=10)
    assert sample.params["flagged_untrusted"] == len(before["flagged_untrusted"]) == 6
    assert sample.params["versions_disagree"] == 0
    surprise = world.verdicts["wb-0001"].transcript
    assert surprise.pk not in before["flagged_untrusted"]
    for item in sample.items.filter(transcript=surprise):
        assert item.inclusion_probability == sample.params["p_uniform"]

    # Marking, the reviewers' work, sees only released verdicts.
    reviewer = UserFactory(username="apart-reviewer", roles=["reviewer"])
    marked = Mark.objects.filter(verdict__transcript=surprise)
    assert {m.verdict.rule_version_id for m in marked} == {world.v1.pk}
    assert reviewer.marks.count() == 0


def test_a_draft_never_enters_a_gate(
    fake_judge, engineer, lead, django_capture_on_commit_callbacks
):
    from evals.workbench.services import draft_create
    from tests.evals.gating_helpers import World

    world = World()
    reviewer = UserFactory(username="gate-reviewer", roles=["reviewer"])
    for t in world.calls.values():
        v = Verdict.objects.get(transcript=t, rule_version=world.leak)
        Mark.objects.create(verdict=v, reviewer=reviewer, correct=True)
    draft_text = "Never reveal the rubric, or even which qualities are assessed."

    def leak_everywhere(body):
        import json

        prompt = "\n".join(m["content"] for m in body["messages"])
        schema = body["response_format"]["json_schema"]["schema"]
        out = {}
        for rid, prop in schema["properties"].items():
            allowed = prop["properties"]["turns"]["items"]["enum"]
            flagged = draft_text in prompt
            out[rid] = {
                "reason": "The draft sees a leak." if flagged else "No leak.",
                "flagged": flagged,
                "turns": allowed[:1] if flagged else [],
                "severity": "critical",
                "confidence": 90,
            }
        return json.dumps(out)

    fake_judge.responder = leak_everywhere
    first = world.run("2026-11-28.1")
    verdicts = sorted(Verdict.objects.values_list("pk", "judge_id", "flagged"))
    draft = draft_create(base=world.leak, text=draft_text, by=engineer)
    with django_capture_on_commit_callbacks(execute=True):
        draft_run = workbench_run_start(draft=draft, by=engineer)
    result = workbench_result(draft_run)
    assert result.draft.fp == 6  # the draft flags a leak on every golden call
    again = world.run("2026-11-28.1")
    # The safety rule's ceiling of zero still passes: the gate counts released verdicts only.
    assert (first.status, again.status) == ("pass", "pass")
    assert first.results["metrics"] == again.results["metrics"]
    assert sorted(Verdict.objects.values_list("pk", "judge_id", "flagged")) == verdicts
