"""A call replaced while a judge run works on it: no verdict is stored for text it no longer has."""

import json

import pytest
from django.db import connections
from django.urls import reverse

from evals.catalog.models import Transcript
from evals.catalog.services.importing import transcripts_import
from evals.judging.models import JudgeRun, JudgeRunItem, Verdict
from evals.judging.services.runs import judge_run_create, judge_run_item_execute
from tests.factories import token_client

pytestmark = pytest.mark.django_db(transaction=True)


def _line(n_turns: int) -> str:
    turns = [
        {
            "speaker": "agent" if i % 2 == 0 else "user",
            "text": f"Question {i}?" if i % 2 == 0 else f"Answer {i}.",
            "start_ms": i * 4000,
            "end_ms": i * 4000 + 3000,
        }
        for i in range(n_turns)
    ]
    return json.dumps(
        {"id": "call-12", "agent": "phone-screen", "agent_version": "v1", "turns": turns}
    )


def _import(n_turns: int, *, replace: bool = False):
    return transcripts_import(lines=[_line(n_turns)], replace=replace, source="test")


def _replace_once(fake_judge, results: list):
    """Have the fake judge replace the 12-turn call by a 2-turn one while it answers its first
    request (in its own thread, as a second client would), then answer as usual."""

    def responder(body):
        if not results:
            try:
                results.append(_import(2, replace=True))
            finally:
                connections.close_all()

    fake_judge.responder = responder


def test_a_replace_mid_run_stores_no_verdict_on_the_old_text(fake_judge, rules, client, engineer):
    _import(12)
    fake_judge.flag = {"asking.one-question": [10], "boundaries.no-rubric-leak": [10]}
    replaced: list = []
    _replace_once(fake_judge, replaced)

    run = judge_run_create(started_by="ci")
    run.refresh_from_db()

    call = Transcript.objects.get(external_id="call-12")
    assert call.turns.count() == 2 and len(replaced) == 1
    # The replace cancelled every check planned on the old text, the one in flight too: when its
    # answer came back it stored nothing.
    assert replaced[0].details["cancelled_checks"] == run.tasks_total
    assert run.status == JudgeRun.Status.DONE and run.tasks_done == run.tasks_total == 5
    assert run.replaced == 5 and Verdict.objects.count() == 0
    # The call that was made is paid for and counted, once.
    assert run.calls_made == 1 == len(fake_judge.requests) and run.tokens_in > 0 and run.cost > 0
    items = list(run.items.all())
    assert {i.outcome for i in items} == {JudgeRunItem.Outcome.REPLACED}
    assert all("the call was replaced during the run" in i.error for i in items)
    # The page and the API say so.
    client.force_login(engineer)
    page = client.get(reverse("judge-run-detail", args=[run.pk])).content.decode()
    assert "5 checks cancelled: their calls were replaced during the run" in page
    api = token_client(engineer).get(reverse("api-judge-run", args=[run.pk])).json()
    assert api["replaced"] == 5 and api["recoveries"] == 0
    # Its answer was given on the old text: not cached, so the new text is judged afresh.
    fake_judge.responder = None
    fake_judge.flag = {"asking.one-question": [0]}
    again = judge_run_create(started_by="ci")
    again.refresh_from_db()
    assert (
        again.replaced == 0
        and again.cache_hits == 0
        and again.calls_made == 3
        and again.errors == 0
    )
    cited = [t for v in Verdict.objects.filter(transcript=call) for t in v.turns]
    assert Verdict.objects.filter(judge_run=again).count() == 5
    assert all(0 <= t < 2 for t in cited)  # nothing cites a turn the call does not have


def test_a_check_whose_call_changed_before_it_started_is_not_made(fake_judge, rules):
    _import(12)
    run = judge_run_create(started_by="ci", transcript_ids=["call-12"], rule_ids=["asking.*"])
    # Planned on 12 turns; another process replaced the call and its import's cancel missed this
    # item (it was claimed a moment earlier): the check sees it at its start and makes no call.
    item = run.items.get()
    Verdict.objects.filter(judge_run=run).delete()
    JudgeRunItem.objects.filter(pk=item.pk).update(
        outcome=JudgeRunItem.Outcome.PENDING, heartbeat_at=None
    )
    Transcript.objects.filter(pk=item.transcript_id).update(checksum="f" * 64)
    JudgeRun.objects.filter(pk=run.pk).update(tasks_done=0, replaced=0, finished_at=None)
    calls = len(fake_judge.requests)
    assert judge_run_item_execute(item_id=item.pk) == JudgeRunItem.Outcome.REPLACED
    run.refresh_from_db()
    assert len(fake_judge.requests) == calls and run.replaced == 1 and run.finished_at
    assert not Verdict.objects.filter(judge_run=run).exists()
