"""The rule workbench: a draft judged by the ordinary judge runner (the real client against the
local chat-completions server) on the calls reviewers marked for the current version, scored
against their truth side by side with it, and saved as the next version."""

from decimal import Decimal

import pytest
import yaml

from core import stats
from core.errors import DomainError
from evals.judging.models import JudgeCacheEntry, JudgeRun, JudgeRunItem, Verdict
from evals.judging.services.runs import judge_run_create, judge_run_item_fail
from evals.rules.importing import rules_export
from evals.rules.models import RuleVersion
from evals.workbench.models import DraftVerdict
from evals.workbench.services import draft_create
from labeling.selectors.workbench import (
    workbench_draw,
    workbench_estimate,
    workbench_marked_calls,
    workbench_result,
)
from labeling.services.workbench import (
    workbench_draft_create,
    workbench_draft_save,
    workbench_meaning_set,
    workbench_run_start,
)
from tests.labeling.workbench_helpers import BROKEN, DRAFT_TEXT, V1_SAYS, build_world, responder

pytestmark = pytest.mark.django_db


def run_draft(capture, draft, **kwargs):
    with capture(execute=True):
        draft_run = workbench_run_start(draft=draft, **kwargs)
    draft_run.refresh_from_db()
    draft_run.judge_run.refresh_from_db()
    return draft_run


@pytest.fixture
def world(fake_judge):
    w = build_world()
    fake_judge.responder = responder(w)
    return w


def test_the_estimate_names_the_calls_disagreements_first_and_what_they_cost(world, engineer):
    draft = workbench_draft_create(base=world.v1, text=DRAFT_TEXT, by=engineer)
    est = workbench_estimate(draft=draft, size=8)
    d = est.as_dict()
    # 14 marked calls: 5 the judge got wrong (2 subtle hints missed, 3 rephrasings flagged).
    assert d["marked_calls"] == 14 and d["base_judge"] == "gpt-4o-mini/conduct-v3"
    assert (d["disagreements"], d["disagreements_drawn"]) == (5, 5)
    assert (d["rest"], d["rest_drawn"]) == (9, 3) and d["calls"] == 8
    chosen = {pk: (stratum, p) for pk, stratum, p in est.selection.calls}
    wrong = {
        v.transcript_id
        for e, v in world.verdicts.items()
        if world.calls[e] in ("subtle", "rephrase")
    }
    assert {pk for pk, (s, _) in chosen.items() if s == "disagreement"} == wrong
    assert {p for s, p in chosen.values() if s == "rest"} == {3 / 9}
    # One judge call per call (the draft with its group's other rule), priced by the judge's own
    # cost accounting, under the configured cap; nothing is cached yet.
    assert d["judge_calls"] == 8 and d["cache_hits"] == 0 and d["detector_checks"] == 0
    assert Decimal(d["est_cost"]) > 0 and d["model"] == "gpt-4o-mini"
    assert d["prompt_version"] == "conduct-v1"
    # The estimate spends nothing and stores nothing.
    assert not fake_judge_requests(world) and not JudgeRun.objects.exists()
    # The same size draws the same calls again.
    assert workbench_estimate(draft=draft, size=8).selection.calls == est.selection.calls


def fake_judge_requests(world):
    return Verdict.objects.exclude(judge=world.judge).exists()


def test_the_draw_keeps_its_inclusion_probabilities_exact():
    from labeling.selectors.workbench import MarkedCall

    calls = [MarkedCall(i, i, "fp" if i < 4 else "tn", 1.0, False) for i in range(10)]
    small = workbench_draw(calls, size=2, seed="s")
    assert [c[1:] for c in small.calls] == [("disagreement", 0.5)] * 2
    big = workbench_draw(calls, size=7, seed="s")
    assert sorted(c[2] for c in big.calls) == [0.5] * 3 + [1.0] * 4
    # Over every draw, a call's frequency is its probability (exhaustive over seeds would be
    # slow; the strata are simple random samples, so each member is equally likely).
    hits = [0] * 10
    for k in range(3000):
        for pk, _, _ in workbench_draw(calls, size=7, seed=str(k)).calls:
            hits[pk] += 1
    assert all(h == 3000 for h in hits[:4])
    assert all(abs(h / 3000 - 0.5) < 0.04 for h in hits[4:])


def test_a_run_goes_through_the_judge_runner_and_its_verdicts_stay_apart(
    world, engineer, fake_judge, django_capture_on_commit_callbacks
):
    verdicts_before = Verdict.objects.count()
    draft = workbench_draft_create(base=world.v1, text=DRAFT_TEXT, by=engineer)
    draft_run = run_draft(django_capture_on_commit_callbacks, draft, size=50, by=engineer)
    run = draft_run.judge_run
    assert run.status == JudgeRun.Status.DONE and run.tasks_done == run.tasks_total == 14
    assert run.calls_made == 14 and run.cost > 0 and run.judge.name == "gpt-4o-mini/conduct-v1"
    assert set(run.items.values_list("kind", flat=True)) == {"workbench"}
    # The draft was judged with its group's other rule, as it will be once it ships.
    prompt = fake_judge.requests[0]["body"]["messages"][1]["content"]
    assert DRAFT_TEXT in prompt and "boundaries.no-rubric-leak" in prompt
    # Its verdicts are the draft's: no Verdict was written, for it or for the sibling.
    assert Verdict.objects.count() == verdicts_before
    assert DraftVerdict.objects.filter(run=draft_run, judged_at__isnull=False).count() == 14

    result = workbench_result(draft_run)
    assert result.finished and result.carried and result.compared == 14 and result.errored == 0
    # Version 1: 3 TP, 3 FP, 2 FN, 6 TN. The draft: 5 TP, 1 FP (the surprise call), 8 TN.
    cur, new = result.current, result.draft
    assert (cur.tp, cur.fp, cur.fn, cur.tn) == (3, 3, 2, 6)
    assert (new.tp, new.fp, new.fn, new.tn) == (5, 1, 0, 8)
    assert cur.precision.value == pytest.approx(0.5) and new.recall.value == 1.0
    assert new.precision.ci == stats.wilson_interval(5, 6)
    assert new.agreement.value == pytest.approx(13 / 14)
    # The agreement figures are calibration's own, checked against scikit-learn: judge (said)
    # against truth, cells 5 TP, 1 FP, 0 FN, 8 TN.
    from sklearn.metrics import cohen_kappa_score, f1_score

    said = [True] * 5 + [True] + [False] * 8
    truth = [True] * 5 + [False] + [False] * 8
    assert new.w_f1.value == pytest.approx(f1_score(truth, said))
    assert new.w_kappa.value == pytest.approx(cohen_kappa_score(truth, said))
    assert new.w_specificity.value == pytest.approx(8 / 9)
    # Every call was drawn (p = 1) and marked outside the sample: weighted equals raw.
    assert new.w_precision.value == pytest.approx(new.precision.value)
    # The flips: 5 now agree with the reviewers, 1 now disagrees, each with both rationales.
    assert (result.now_agree, result.now_disagree) == (5, 1)
    wrong = next(f for f in result.flips if f.now == "disagrees")
    assert wrong.transcript == "wb-0001" and wrong.draft_flagged and not wrong.current_flagged
    assert wrong.turn == 2 and wrong.draft_rationale.startswith("Draft text")
    assert wrong.current_rationale == "v1 on a clean call."
    kinds = {f.transcript: world.calls[f.transcript] for f in result.flips if f.now == "agrees"}
    assert sorted(kinds.values()) == ["rephrase"] * 3 + ["subtle"] * 2

    # Judged again: every answer comes from the judge's cache.
    requests = len(fake_judge.requests)
    again = run_draft(django_capture_on_commit_callbacks, draft, size=50, by=engineer)
    assert again.judge_run.cache_hits == 14 and len(fake_judge.requests) == requests


def test_figures_weigh_each_call_by_both_inclusion_probabilities(
    fake_judge, engineer, django_capture_on_commit_callbacks
):
    world = build_world(weight_every=2)
    fake_judge.responder = responder(world)
    draft = workbench_draft_create(base=world.v1, text=DRAFT_TEXT, by=engineer)
    draft_run = run_draft(django_capture_on_commit_callbacks, draft, size=8, by=engineer)
    result = workbench_result(draft_run)
    weights = {dv.transcript.external_id: dv for dv in draft_run.verdicts.all()}
    rows = []
    for e, dv in weights.items():
        kind = world.calls[e]
        sample_w = 2.0 if int(e[-4:]) % 2 == 0 else 1.0
        said = kind != "clean" and BROKEN[kind] or e == "wb-0001"
        rows.append((said, BROKEN[kind], sample_w / dv.inclusion_probability))
    wtp = sum(w for s, b, w in rows if s and b)
    wfp = sum(w for s, b, w in rows if s and not b)
    assert result.draft.w_precision.value == pytest.approx(wtp / (wtp + wfp))
    cur = [
        (V1_SAYS[world.calls[e]], BROKEN[world.calls[e]], w) for e, (_, _, w) in zip(weights, rows)
    ]
    ctp = sum(w for s, b, w in cur if s and b)
    cfn = sum(w for s, b, w in cur if not s and b)
    assert result.current.w_recall.value == pytest.approx(ctp / (ctp + cfn))


def test_save_as_the_next_version_keeps_the_estimate_and_the_cache_serves_it(
    world, engineer, fake_judge, django_capture_on_commit_callbacks
):
    draft = workbench_draft_create(base=world.v1, text=DRAFT_TEXT, by=engineer)
    draft_run = run_draft(django_capture_on_commit_callbacks, draft, size=50, by=engineer)
    v2 = workbench_draft_save(draft=draft, by=engineer)
    assert (v2.number, v2.status, v2.text) == (2, "candidate", DRAFT_TEXT)
    assert v2.source == f"workbench draft {draft.pk}"
    est = v2.estimate
    assert est["carried"] and est["from_version"] == 1 and est["run"] == draft_run.pk
    assert est["figures"]["raw"]["tp"] == 5 and est["base_figures"]["raw"]["fp"] == 3
    assert est["figures"]["recall"][0] == 1.0 and est["judge"] == "gpt-4o-mini/conduct-v3"
    # The ordinary YAML export shows the new text.
    exported = {r["id"]: r for r in yaml.safe_load(rules_export())["rules"]}
    assert exported["boundaries.no-hints"]["text"] == DRAFT_TEXT
    # The ordinary judge run of version 2 on these calls finds the workbench's answers cached:
    # the draft was judged as version 2, with the same group. Version 1 is judged beside it (a
    # call of its own) until version 2 is gated, so the daily sample can draw first the calls
    # where the two disagree.
    requests = len(fake_judge.requests)
    with django_capture_on_commit_callbacks(execute=True):
        run = judge_run_create(transcript_ids=list(world.calls), rule_ids=["boundaries.*"])
    run.refresh_from_db()
    assert run.cache_hits == 14 and run.calls_made == 14
    beside = fake_judge.requests[requests:]
    assert len(beside) == 14
    assert all(
        r["body"]["response_format"]["json_schema"]["schema"]["required"] == ["boundaries.no-hints"]
        for r in beside
    )
    assert all(world.v1.text in r["body"]["messages"][1]["content"] for r in beside)
    assert Verdict.objects.filter(rule_version=v2, flagged=True).count() == 6
    runner = run.judge
    v1_now = Verdict.objects.filter(rule_version=world.v1, judge=runner)
    assert v1_now.count() == 14 and v1_now.filter(flagged=True).count() == 6
    RuleVersion.objects.filter(pk=v2.pk).update(status="gated")
    plan = judge_run_create(
        transcript_ids=list(world.calls), rule_ids=["boundaries.*"], dry_run=True
    )
    assert plan.llm_items == 14  # one call per call again: version 2 is trusted
    # Saved once only.
    with pytest.raises(DomainError, match="already saved as version 2"):
        workbench_draft_save(draft=draft, by=engineer)


def test_a_lead_says_the_text_changes_the_meaning_then_no_truth_is_carried(
    world, engineer, lead, django_capture_on_commit_callbacks
):
    draft = workbench_draft_create(base=world.v1, text=DRAFT_TEXT, by=engineer)
    draft_run = run_draft(django_capture_on_commit_callbacks, draft, size=50, by=engineer)
    with pytest.raises(DomainError, match="reason"):
        workbench_meaning_set(draft=draft, changes_meaning=True, reason="", by=lead)
    workbench_meaning_set(
        draft=draft, changes_meaning=True, reason="Tools now count as hints.", by=lead
    )
    draft.refresh_from_db()
    result = workbench_result(draft_run)
    assert not result.carried and result.current is None and result.draft is None
    assert {f.now for f in result.flips} == {"unsettled"} and len(result.flips) == 6
    assert result.same == 8
    v2 = workbench_draft_save(draft=draft, by=engineer)
    assert v2.estimate["carried"] is False and v2.estimate["reason"] == "Tools now count as hints."
    assert v2.estimate["by"] == "lena" and "figures" not in v2.estimate
    # Taken back: the version gets its estimate.
    workbench_meaning_set(draft=draft, changes_meaning=False, by=lead)
    v2.refresh_from_db()
    assert v2.estimate["carried"] is True and v2.estimate["figures"]["raw"]["tp"] == 5


def test_a_draft_from_an_issue_row_triages_the_row_when_saved(
    world, engineer, django_capture_on_commit_callbacks
):
    from labeling.models import IssueRow
    from labeling.services.issue_rows import issue_row_create

    t = world.verdicts["wb-0012"].transcript
    row = issue_row_create(
        transcript=t, turn=2, what="Hint missed.", severity="major", reporter=engineer
    )
    draft = workbench_draft_create(base=world.v1, text=DRAFT_TEXT, row=row, by=engineer)
    assert draft.source == f"issue row {row.number}" and draft.issue_row == row.number
    run_draft(django_capture_on_commit_callbacks, draft, size=50, by=engineer)
    v2 = workbench_draft_save(draft=draft, by=engineer)
    row = IssueRow.objects.get(pk=row.pk)
    assert row.outcome == "rule_fix" and row.rule_version_id == v2.pk
    assert v2.source == f"issue row {row.number} via workbench draft {draft.pk}"
    assert v2.estimate["carried"]


def test_drafts_refuse_what_they_cannot_be(world, engineer):
    with pytest.raises(DomainError, match="unchanged from version 1") as e:
        draft_create(base=world.v1, text=world.v1.text)
    assert e.value.field == "text"
    # The same text with another judge measures the judge alone.
    assert draft_create(base=world.v1, text=world.v1.text, model="gpt-4o").model == "gpt-4o"
    with pytest.raises(DomainError) as e:
        draft_create(base=world.v1, text=DRAFT_TEXT, prompt_version="conduct-v9")
    assert e.value.field == "prompt_version" and "conduct-v1" in str(e.value)
    with pytest.raises(DomainError) as e:
        draft_create(base=world.v1, text=DRAFT_TEXT, detector={"name": "multiple_questions"})
    assert e.value.field == "detector"
    with pytest.raises(DomainError) as e:
        draft_create(base=world.v1, text="  ")
    assert e.value.field == "text"


def test_a_detector_draft_changes_a_parameter_at_no_judge_cost(
    fake_judge, engineer, reviewer, django_capture_on_commit_callbacks
):
    from evals.judging.models import Judge
    from labeling.models import Mark
    from tests.evals.judge_helpers import make_call, make_rule

    rv = make_rule(
        "signals.one-question",
        "signals",
        "One question per turn.",
        detector={"name": "multiple_questions", "max_questions": 1},
    )
    det = Judge.objects.create(name="detector/multiple_questions", kind="detector")
    for i in range(3):
        t = make_call(f"det-{i}")
        v = Verdict.objects.create(
            transcript=t, rule_version=rv, judge=det, flagged=True, turn=2, turns=[2]
        )
        # Reviewers say two questions in one turn are fine when one is a follow-up.
        Mark.objects.create(verdict=v, reviewer=reviewer, correct=False)
    with pytest.raises(DomainError) as e:
        draft_create(base=rv, detector={"name": "multiple_questions", "max_questions": "x"})
    assert e.value.field.startswith("detector")
    draft = draft_create(
        base=rv, detector={"name": "multiple_questions", "max_questions": 2}, by=engineer
    )
    est = workbench_estimate(draft=draft).as_dict()
    assert est["judge_calls"] == 0 and est["detector_checks"] == 3 and est["est_cost"] == "0"
    draft_run = run_draft(django_capture_on_commit_callbacks, draft, by=engineer)
    assert draft_run.judge_run.calls_made == 0 and not fake_judge.requests
    assert draft_run.judge_run.judge.name == "detector/multiple_questions"
    result = workbench_result(draft_run)
    assert (result.current.fp, result.draft.tn) == (3, 3) and result.now_agree == 3


def test_a_judge_failure_errors_the_draft_verdict_only(
    world, engineer, fake_judge, settings, django_capture_on_commit_callbacks
):
    fake_judge.mode = "error500"
    fake_judge.only_for = "a project you led"  # the six clean calls, judged first
    draft = workbench_draft_create(base=world.v1, text=DRAFT_TEXT, by=engineer)
    before = Verdict.objects.count()
    # The runner's circuit breaker: five failed calls in a row stop the run's calls.
    settings.JUDGE_BREAKER_FAILURES = 5
    stopped = run_draft(django_capture_on_commit_callbacks, draft, size=50, by=engineer)
    result = workbench_result(stopped)
    assert stopped.judge_run.status == JudgeRun.Status.STOPPED
    assert "5 calls failed in a row" in stopped.judge_run.stop_reason
    assert result.errored == 5 and result.judged == 5 and result.pending == 9
    settings.JUDGE_BREAKER_FAILURES = 0
    draft_run = run_draft(django_capture_on_commit_callbacks, draft, size=50, by=engineer)
    result = workbench_result(draft_run)
    assert result.errored == 6 and draft_run.judge_run.errors == 6 and result.compared == 8
    assert Verdict.objects.count() == before
    # An item whose task gave up errors the draft verdict, never a released version's.
    draft_run2 = run_draft(django_capture_on_commit_callbacks, draft, size=50, by=engineer)
    assert draft_run2.judge_run.cache_hits == 8
    item = draft_run2.judge_run.items.first()
    JudgeRunItem.objects.filter(pk=item.pk).update(outcome="pending")
    judge_run_item_fail(item_id=item.pk, error="gave up")
    assert Verdict.objects.count() == before
    assert DraftVerdict.objects.get(run=draft_run2, transcript=item.transcript).error == "gave up"


def test_marked_calls_leave_out_ties_and_unmarked(world):
    calls = workbench_marked_calls(base=world.v1, judge=world.judge)
    assert len(calls) == 14 and sum(c.disagreement for c in calls) == 5
    assert not RuleVersion.objects.filter(number=2).exists()
    assert not JudgeCacheEntry.objects.exists()
