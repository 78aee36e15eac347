"""The conversation figures database triggers keep (per agent version and conversation judge)
stay equal to a recount of the scores after every kind of write, the pages' figures equal the
full count `_conversation_versions`, and `conversation_figures_rebuild --check` catches drift."""

import threading
from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from evals.catalog.models import AgentVersion, Transcript
from evals.conversation.figures import (
    CONVERSATION_FINDINGS,
    CONVERSATION_SUMS,
    conversation_figures_compact,
    conversation_figures_differences,
)
from evals.conversation.models import ConversationFindingCount, ConversationScore, ConversationSums
from evals.conversation.selectors import _conversation_versions, conversation_versions
from evals.conversation.services import conversation_judge_create
from evals.judging.models import Judge
from tests.evals.conversation_helpers import DRIFT, scored_calls
from tests.evals.judge_helpers import make_call
from tests.factories import AgentVersionFactory

pytestmark = pytest.mark.django_db

SUM_FIELDS = ("calls", "errored", "n", "sx", "sxx", "flagged")


def recount() -> tuple[dict, Counter]:
    """Each score read one by one in Python: the sums and finding counts the tables must equal."""
    sums: dict = {}
    findings: Counter = Counter()
    for s in ConversationScore.objects.select_related("transcript"):
        key = (s.transcript.agent_version_id, s.judge_id)
        row = sums.setdefault(key, dict.fromkeys(SUM_FIELDS, 0))
        if s.error:
            row["errored"] += 1
            continue
        row["calls"] += 1
        if s.score is not None:
            row["n"] += 1
            row["sx"] += s.score
            row["sxx"] += s.score * s.score
        row["flagged"] += bool(s.findings)
        for f in s.findings:
            findings[(*key, f.get("type", "?"))] += 1
    return sums, findings


def stored() -> tuple[dict, Counter]:
    """The tables' figures: each the sum of its delta rows."""
    sums: dict = {}
    for r in ConversationSums.objects.all():
        row = sums.setdefault((r.agent_version_id, r.judge_id), dict.fromkeys(SUM_FIELDS, 0))
        for name in SUM_FIELDS:
            row[name] += getattr(r, name)
    findings: Counter = Counter()
    for r in ConversationFindingCount.objects.all():
        findings[(r.agent_version_id, r.judge_id, r.kind)] += r.n
    return {k: v for k, v in sums.items() if any(v.values())}, +findings


def assert_exact():
    assert stored() == recount()
    assert conversation_figures_differences() == 0
    for version_id in (None, *AgentVersion.objects.values_list("pk", flat=True)):
        assert conversation_versions(version_id) == _conversation_versions(version_id)


@pytest.fixture
def scores(db):
    """scored_calls (two versions, one judge) and a second judge's many kinds of score on v2:
    errored, without a score, findings with and without a type."""
    old, new = scored_calls()
    other = Judge.objects.create(name="gpt-4o/conversation-v1", kind="llm")
    for n in range(12):
        ConversationScore.objects.create(
            transcript=make_call(f"more-{n}", agent_version=new if n % 3 else old),
            judge=other,
            score=None if n in (4, 7) else n % 10 + 1,
            error="timeout" if n == 5 else "",
            findings=[{"type": "phase_missing", "turns": [2]}, {"turns": [4]}][: n % 3],
        )
    return old, new, other


def test_inserts_are_counted_per_version_and_judge(scores):
    _, new, other = scores
    assert_exact()
    rows = {(r.version_id, r.judge_id): r for r in conversation_versions()}
    assert len(rows) == 4
    assert rows[(new.pk, other.pk)].finding_counts == {"?": 3, "phase_missing": 7}
    assert rows[(new.pk, other.pk)].errored == 1


def test_rejudged_and_edited_scores_move_between_figures(scores):
    other = scores[2]
    errored = ConversationScore.objects.get(error="timeout")
    ConversationScore.objects.filter(pk=errored.pk).update(
        score=2, error="", findings=DRIFT, reason="rejudged"
    )
    assert_exact()
    ConversationScore.objects.filter(judge=other, score__gte=5).update(findings=[], score=10)
    assert_exact()
    ConversationScore.objects.filter(score=10).update(error="failed late")
    assert_exact()
    edited = ConversationScore.objects.get(transcript__external_id="v2-1")
    edited.findings = [*edited.findings, {"type": "phase_missing"}]
    edited.save()
    assert_exact()
    before = (ConversationSums.objects.count(), ConversationFindingCount.objects.count())
    ConversationScore.objects.update(reason="only the reasons change", judge_run=None)
    assert (ConversationSums.objects.count(), ConversationFindingCount.objects.count()) == before


def test_a_call_moved_to_another_agent_version_takes_its_scores(scores):
    old, new, _ = scores
    moved = Transcript.objects.filter(external_id__in=["more-1", "more-2", "v1-0"])
    moved.update(agent_version=AgentVersionFactory(version="v3"))
    assert_exact()
    calls = list(Transcript.objects.filter(external_id__startswith="more-"))
    for i, call in enumerate(calls):
        call.agent_version = (old, new)[i % 2]
    Transcript.objects.bulk_update(calls, ["agent_version"])  # a replace import's way
    assert_exact()
    Transcript.objects.filter(external_id="v2-0").update(scenario="untouched figures")
    assert_exact()


def test_deletes_take_scores_out_down_to_nothing(scores):
    old = scores[0]
    ConversationScore.objects.filter(transcript__external_id="more-2").delete()
    assert_exact()
    Transcript.objects.filter(external_id__in=["v2-1", "more-5"]).delete()  # cascades
    assert_exact()
    Transcript.objects.filter(agent_version=old).delete()
    old.delete()
    assert_exact()
    ConversationScore.objects.all().delete()
    assert stored() == ({}, Counter()) and conversation_versions() == []
    assert conversation_figures_differences() == 0


def test_check_catches_tampered_rows_and_rebuild_mends_them(scores):
    out = StringIO()
    call_command("conversation_figures_rebuild", "--check", stdout=out)
    assert "0 agent version and judge pairs differ" in out.getvalue()
    row = ConversationSums.objects.order_by("pk").first()
    ConversationSums.objects.filter(pk=row.pk).update(sx=row.sx + 1)
    with pytest.raises(SystemExit):
        call_command("conversation_figures_rebuild", "--check", stdout=(out := StringIO()))
    assert "1 agent version and judge pairs differ" in out.getvalue()
    ConversationFindingCount.objects.create(
        agent_version=AgentVersionFactory(version="v9"), judge=scores[2], kind="x", n=1
    )
    assert conversation_figures_differences() == 2  # a pair that has no score
    call_command("conversation_figures_rebuild", stdout=StringIO())
    assert_exact()
    ConversationFindingCount.objects.filter(kind="phase_missing").delete()
    assert conversation_figures_differences() == 1  # only the second judge's v2 names it


def test_stored_results_fold_once_after_their_transaction(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks, transaction.atomic():
        scored_calls()
    for table in (CONVERSATION_SUMS, CONVERSATION_FINDINGS):
        # once however many scores the transaction stored
        assert sum(f is table.fold_default for f in callbacks) == 1
    assert ConversationSums.objects.count() == 2 and ConversationFindingCount.objects.count() == 1
    assert_exact()


@pytest.mark.django_db(transaction=True)
def test_a_judge_runs_items_fold_as_they_commit_and_the_figures_stay(fake_judge):
    """Real commits: each item of a run stores its score in its own transaction and folds after."""
    runs = [make_call(f"run-{n}").external_id for n in range(3)]
    fake_judge.mode = "malformed"
    conversation_judge_create(transcript_ids=runs)  # errored scores
    assert ConversationScore.objects.exclude(error="").count() == 3
    assert_exact()
    fake_judge.mode = ""
    conversation_judge_create(transcript_ids=runs)  # re-judged: the errored ones replaced
    assert not ConversationScore.objects.exclude(error="").exists()
    assert_exact()
    (row,) = conversation_versions()
    assert (row.calls, row.errored, row.mean) == (3, 0, 9.0)
    assert ConversationSums.objects.count() == 1  # folded: one row for the one pair
    ConversationScore.objects.filter(transcript__external_id="run-0").update(score=3)  # no fold
    assert ConversationSums.objects.count() == 2
    assert conversation_figures_compact() == 1 and ConversationSums.objects.count() == 1
    assert_exact()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_score_does_not_wait_for_another_workers_score_of_the_same_version():
    """A judge worker's item is one transaction; while it is open, another worker stores a score
    under the same agent version and judge. That commits at once (no lock on a shared row) and,
    once both commit, the figures equal the recount."""
    version = AgentVersionFactory(version="v1")
    judge = Judge.objects.create(name="gpt-4o-mini/conversation-v1", kind="llm")
    first, second = (make_call(f"c-{n}", agent_version=version) for n in range(2))
    stored_one, release, errors = threading.Event(), threading.Event(), []

    def worker():
        try:
            with transaction.atomic():
                ConversationScore.objects.create(transcript=first, judge=judge, score=3)
                stored_one.set()
                release.wait(30)
        except Exception as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)
        finally:
            stored_one.set()
            connection.close()

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert stored_one.wait(30)
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL lock_timeout = '2s'")
            ConversationScore.objects.create(transcript=second, judge=judge, score=7)
            conversation_figures_compact()  # a fold beside the open transaction waits for nothing
    finally:
        release.set()
        thread.join()
    assert not errors, errors
    assert_exact()
    (row,) = conversation_versions()
    assert (row.calls, row.mean) == (2, 5.0)
