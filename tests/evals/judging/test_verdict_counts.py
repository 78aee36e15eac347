"""Verdict counts (the dashboard's, rules list's and rule page's figures) stay equal to a recount
of the verdicts after every kind of write, and `verdict_counts_rebuild --check` catches a count
that drifted."""

import json
from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command

from evals.catalog.models import Transcript
from evals.catalog.services.importing import transcripts_import
from evals.judging.models import Verdict, VerdictCount
from evals.judging.services.counts import (
    VERDICT_COUNTS,
    verdict_counts_compact,
    verdict_counts_differences,
)
from evals.judging.services.importing import verdicts_import
from tests.factories import (
    AgentVersionFactory,
    JudgeFactory,
    RuleVersionFactory,
    TranscriptFactory,
    VerdictFactory,
)

pytestmark = pytest.mark.django_db


def recount() -> Counter:
    """Each verdict counted one by one in Python: the reference the counts must equal."""
    out: Counter = Counter()
    for v in Verdict.objects.select_related("transcript"):
        key = (v.rule_version_id, v.judge_id, v.transcript.agent_version_id)
        out[(*key, "n")] += 1
        out[(*key, "flagged")] += v.flagged and not v.error
        out[(*key, "errored")] += bool(v.error)
    return +out


def counts() -> Counter:
    """The counts: each key the sum of its delta rows."""
    out: Counter = Counter()
    for c in VerdictCount.objects.all():
        key = (c.rule_version_id, c.judge_id, c.agent_version_id)
        for name in ("n", "flagged", "errored"):
            out[(*key, name)] += getattr(c, name)
    return +out  # keys that sum to 0 hold no verdict


def assert_exact():
    assert counts() == recount()
    assert verdict_counts_differences() == 0


def _line(ext: str, rule: str, judge: str, **fields) -> str:
    return json.dumps({"transcript": ext, "rule": rule, "rule_version": 1, "judge": judge} | fields)


@pytest.fixture
def verdicts(db):
    one_q = RuleVersionFactory(rule__rule_id="asking.one-question")
    greet = RuleVersionFactory(rule__rule_id="opening.greet-by-name")
    llm = JudgeFactory(name="gpt-4o-mini/conduct-v3")
    v2 = AgentVersionFactory(version="2026-12-01.1")
    calls = [TranscriptFactory(external_id=f"call-{i}") for i in range(3)]
    calls.append(TranscriptFactory(external_id="call-3", agent_version=v2))
    for i, call in enumerate(calls):
        VerdictFactory(transcript=call, rule_version=one_q, judge=llm, flagged=i % 2 == 0)
    VerdictFactory(transcript=calls[3], rule_version=greet, judge=llm, error="timeout")
    return {"one_q": one_q, "greet": greet, "llm": llm, "calls": calls, "v2": v2}


def test_verdicts_written_one_by_one_are_counted(verdicts):
    assert_exact()
    assert len({key[:3] for key in counts()}) == 3  # one_q on two agent versions, greet on one


def test_an_import_counts_every_verdict_and_a_second_one_changes_nothing(verdicts):
    lines = [
        _line("call-0", "opening.greet-by-name", "gpt-4o-mini/conduct-v3", flagged=True),
        _line("call-1", "opening.greet-by-name", "detectors", flagged=False),
        _line("call-3", "asking.one-question", "detectors", flagged=True, turn=None),
        _line("call-2", "opening.greet-by-name", "detectors", flagged=False, error="parse"),
    ]
    assert verdicts_import(lines=lines).created == 4
    assert_exact()
    assert verdicts_import(lines=lines).unchanged == 4
    assert_exact()


def test_updates_deletes_and_a_moved_call_keep_the_counts(verdicts):
    calls, one_q = verdicts["calls"], verdicts["one_q"]
    # A judge's re-run of an errored verdict, a flip, a verdict errored.
    Verdict.objects.filter(error="timeout").update(error="", flagged=True)
    assert_exact()
    Verdict.objects.filter(transcript=calls[0], rule_version=one_q).update(flagged=False)
    assert_exact()
    Verdict.objects.filter(transcript=calls[1]).update(error="rate limit")
    assert_exact()
    Verdict.objects.filter(transcript=calls[2]).update(rationale="Changed nothing counted.")
    assert_exact()
    # A call moves to another agent version, with its verdicts.
    Transcript.objects.filter(pk=calls[0].pk).update(agent_version=verdicts["v2"])
    assert_exact()
    # Deleted on their own and with their call.
    Verdict.objects.filter(transcript=calls[1]).delete()
    assert_exact()
    calls[3].delete()
    assert_exact()
    Verdict.objects.all().delete()
    assert counts() == Counter() and verdict_counts_differences() == 0


def test_a_replace_import_forgets_the_verdicts_of_changed_calls(verdicts):
    transcripts_import(
        lines=[
            json.dumps(
                {
                    "id": "call-0",
                    "agent": "phone-screen",
                    "agent_version": "2026-12-01.1",
                    "turns": [{"speaker": "agent", "text": "Hello again."}],
                }
            )
        ],
        replace=True,
    )
    assert not Verdict.objects.filter(transcript__external_id="call-0").exists()
    assert_exact()


def test_check_catches_a_tampered_count_and_rebuild_mends_it(verdicts):
    out = StringIO()
    call_command("verdict_counts_rebuild", "--check", stdout=out)
    assert "0 counts differ" in out.getvalue()
    row = VerdictCount.objects.filter(n__gt=0).order_by("pk").first()
    VerdictCount.objects.filter(pk=row.pk).update(flagged=row.flagged + 1)
    with pytest.raises(SystemExit):
        call_command("verdict_counts_rebuild", "--check", stdout=(out := StringIO()))
    assert "1 counts differ" in out.getvalue()
    call_command("verdict_counts_rebuild", stdout=StringIO())
    assert_exact()
    VerdictCount.objects.filter(pk=VerdictCount.objects.order_by("pk").first().pk).delete()
    assert verdict_counts_differences() == 1


def test_writers_fold_the_deltas_after_commit_and_the_figures_stay(
    db, django_capture_on_commit_callbacks
):
    RuleVersionFactory(rule__rule_id="asking.one-question")
    TranscriptFactory(external_id="call-0")
    TranscriptFactory(external_id="call-1")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        for ext in ("call-0", "call-1"):
            verdicts_import(
                lines=[_line(ext, "asking.one-question", "detectors", flagged=ext == "call-0")]
            )
    folds = [f for f in callbacks if f is VERDICT_COUNTS.fold_default]
    assert len(folds) == 1  # once however many writes asked for it
    assert_exact()
    keys = list(VerdictCount.objects.values_list("rule_version", "judge", "agent_version"))
    assert len(keys) == len(set(keys)) == 1
    Verdict.objects.filter(transcript__external_id="call-1").update(flagged=True)  # not folded
    assert VerdictCount.objects.count() > 1
    assert verdict_counts_compact() == 1
    assert VerdictCount.objects.count() == 1
    assert_exact()
