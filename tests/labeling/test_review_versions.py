"""A change made from a stale view of a call is refused, never applied or dropped silently: the
assignment's version moves on with every change to the reviewer's marks on the call and with
finishing or skipping it, and a page or client that sends the version it saw is refused
(ReviewChanged, 409) when the call changed since. The page and the API refuse alike: one rule,
in labeling.services.held.
"""

import io
import json
import threading

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from labeling.models import Assignment, Mark
from labeling.services.held import ReviewChanged
from labeling.services.marks import mark_rest_right, mark_set, mark_undo, mark_undo_many
from labeling.services.marks_import import marks_import
from labeling.services.queue import assignment_finish, assignment_skip, sample_claim_next
from tests.factories import (
    DailySampleFactory,
    SampleItemFactory,
    TranscriptFactory,
    VerdictFactory,
    logged_in,
    token_client,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def call():
    t = TranscriptFactory(external_id="call-v")
    VerdictFactory(transcript=t, flagged=True, turn=None)
    VerdictFactory(transcript=t, flagged=False)
    VerdictFactory(transcript=t, flagged=False)
    SampleItemFactory(sample=DailySampleFactory(day=timezone.localdate()), transcript=t)
    return t


def version(reviewer) -> int:
    return Assignment.objects.get(reviewer=reviewer).version


def marks(reviewer) -> dict[int, tuple[bool, str]]:
    return {m.verdict_id: (m.correct, m.note) for m in Mark.objects.filter(reviewer=reviewer)}


def finished_elsewhere(reviewer, call) -> int:
    """Claim the call, read its version (a tab opens it), then mark and finish it as another tab
    would; return the version the first tab still holds."""
    sample_claim_next(reviewer=reviewer)
    seen = version(reviewer)
    for v in call.verdicts.all():
        mark_set(reviewer=reviewer, verdict=v, correct=True)
    assignment_finish(reviewer=reviewer, transcript=call)
    return seen


def test_every_change_moves_the_version_on_and_a_repeated_press_does_not(reviewer, call):
    sample_claim_next(reviewer=reviewer)
    flagged, *clean = call.verdicts.order_by("-flagged", "pk")
    v0 = version(reviewer)
    mark_set(reviewer=reviewer, verdict=flagged, correct=False, note="misread", version=v0)
    assert version(reviewer) == v0 + 1
    mark_set(reviewer=reviewer, verdict=flagged, correct=False, note="misread", version=v0 + 1)
    assert version(reviewer) == v0 + 1  # nothing changed: the other tab need not look again
    ids = mark_rest_right(reviewer=reviewer, transcript=call, version=v0 + 1)
    assert sorted(ids) == sorted(v.pk for v in clean) and version(reviewer) == v0 + 2
    mark_undo_many(reviewer=reviewer, transcript=call, verdict_ids=ids, version=v0 + 2)
    assert version(reviewer) == v0 + 3
    mark_undo(reviewer=reviewer, verdict=flagged, version=v0 + 3)
    assert version(reviewer) == v0 + 4 and marks(reviewer) == {}
    for v in call.verdicts.all():
        mark_set(reviewer=reviewer, verdict=v, correct=True)
    assignment_finish(reviewer=reviewer, transcript=call, version=v0 + 7)
    assert version(reviewer) == v0 + 8


def test_a_mark_from_a_view_that_missed_the_finish_is_refused_and_says_so(reviewer, call):
    seen = finished_elsewhere(reviewer, call)
    before = marks(reviewer)
    flagged = call.verdicts.get(flagged=True)
    with pytest.raises(ReviewChanged) as refused:
        mark_set(reviewer=reviewer, verdict=flagged, correct=False, note="x", version=seen)
    finished_at = Assignment.objects.get(reviewer=reviewer).finished_at
    assert f"finished at {timezone.localtime(finished_at):%H:%M}" in refused.value.message
    assert "call-v changed in another tab or window" in refused.value.message
    assert "not saved" in refused.value.message and refused.value.status == 409
    assert marks(reviewer) == before
    # Every other change from that view is refused the same way.
    for change in (
        lambda: mark_undo(reviewer=reviewer, verdict=flagged, version=seen),
        lambda: mark_rest_right(reviewer=reviewer, transcript=call, version=seen),
        lambda: mark_undo_many(
            reviewer=reviewer, transcript=call, verdict_ids=[flagged.pk], version=seen
        ),
        lambda: assignment_finish(reviewer=reviewer, transcript=call, version=seen),
        lambda: assignment_skip(reviewer=reviewer, transcript=call, version=seen),
    ):
        with pytest.raises(ReviewChanged):
            change()
    assert marks(reviewer) == before
    assert Assignment.objects.get(reviewer=reviewer).released_at is None


def test_a_view_that_knows_the_call_is_finished_may_still_change_a_mark(reviewer, call):
    finished_elsewhere(reviewer, call)
    flagged = call.verdicts.get(flagged=True)
    mark_set(reviewer=reviewer, verdict=flagged, correct=False, version=version(reviewer))
    assert marks(reviewer)[flagged.pk] == (False, "")


def test_without_a_version_the_last_write_wins_as_before(reviewer, call):
    finished_elsewhere(reviewer, call)
    flagged = call.verdicts.get(flagged=True)
    mark_set(reviewer=reviewer, verdict=flagged, correct=False)
    assert marks(reviewer)[flagged.pk] == (False, "")


def test_a_stale_view_of_an_open_call_is_refused_too(reviewer, call):
    sample_claim_next(reviewer=reviewer)
    seen = version(reviewer)
    flagged = call.verdicts.get(flagged=True)
    mark_set(reviewer=reviewer, verdict=flagged, correct=False, note="tab one", version=seen)
    with pytest.raises(ReviewChanged, match="your marks on it changed"):
        mark_set(reviewer=reviewer, verdict=flagged, correct=True, version=seen)
    assert marks(reviewer) == {flagged.pk: (False, "tab one")}


def test_imported_marks_move_the_version_of_the_call_they_change(reviewer, call):
    sample_claim_next(reviewer=reviewer)
    seen = version(reviewer)
    flagged = call.verdicts.select_related("rule_version__rule", "judge").get(flagged=True)
    mark = {
        "transcript": "call-v",
        "rule": flagged.rule_version.rule.rule_id,
        "rule_version": flagged.rule_version.number,
        "judge": flagged.judge.name,
        "reviewer": reviewer.username,
        "correct": False,
        "note": "from the spreadsheet",
    }
    text = json.dumps(mark) + "\n"
    marks_import(lines=io.StringIO(text), source="labels.jsonl")
    assert version(reviewer) == seen + 1
    with pytest.raises(ReviewChanged, match="your marks on it changed"):
        mark_set(reviewer=reviewer, verdict=flagged, correct=True, version=seen)
    marks_import(lines=io.StringIO(text), source="labels.jsonl")  # the same again: no change
    assert version(reviewer) == seen + 1


def test_a_skipped_call_refuses_a_versioned_mark(reviewer, call):
    sample_claim_next(reviewer=reviewer)
    seen = version(reviewer)
    assignment_skip(reviewer=reviewer, transcript=call, version=seen)
    with pytest.raises(ReviewChanged, match="no longer held by you"):
        mark_set(reviewer=reviewer, verdict=call.verdicts.first(), correct=True, version=seen)
    assert marks(reviewer) == {}


def test_the_api_and_the_page_refuse_a_mark_on_a_call_finished_elsewhere_alike(
    client, reviewer, call
):
    seen = finished_elsewhere(reviewer, call)
    flagged = call.verdicts.get(flagged=True)
    before = marks(reviewer)

    api = token_client(reviewer).post(
        "/api/v1/marks/",
        {"verdict": flagged.pk, "correct": False, "note": "late", "version": seen},
        format="json",
    )
    assert api.status_code == 409
    body = api.json()
    assert body["code"] == "conflict" and body["errors"][0]["field"] == "version"
    message = body["errors"][0]["message"]
    assert "call-v changed in another tab or window" in message and "finished at" in message

    logged_in(client, reviewer)
    url = reverse("review-mark", args=["call-v", flagged.pk])
    form = {"correct": "0", "note": "late", "version": str(seen)}
    page = client.post(url, form, headers={"HX-Request": "true"})
    assert page.status_code == 409
    html = page.content.decode()
    # The same refusal, with every verdict and the progress as saved: the page shows them.
    assert f"{message} The page now shows what is saved." in html.replace("&#x27;", "'")
    assert html.count("<article ") == call.verdicts.count() and 'id="call-progress"' in html
    assert "Finished at" in html and 'data-version="' + str(version(reviewer)) + '"' in html
    # Without JavaScript: back to the page, the refusal said there.
    plain = client.post(url, form, follow=True)
    assert plain.redirect_chain[-1][0] == reverse("review-call", args=["call-v"])
    assert message in plain.content.decode().replace("&#x27;", "'")
    assert marks(reviewer) == before

    # Finish and skip from the stale view are refused alike, through either door.
    for path in ("/api/v1/queue/finish/", "/api/v1/queue/skip/"):
        r = token_client(reviewer).post(
            path, {"transcript": "call-v", "version": seen}, format="json"
        )
        assert r.status_code == 409 and r.json()["errors"][0]["message"] == message
    skip = client.post(reverse("review-skip", args=["call-v"]), {"version": seen}, follow=True)
    assert message in skip.content.decode().replace("&#x27;", "'")
    assert Assignment.objects.get(reviewer=reviewer).released_at is None


def test_the_api_hands_out_the_version_and_each_mark_answers_the_next(reviewer, call):
    client = token_client(reviewer)
    claimed = client.post("/api/v1/queue/next/").json()
    v = claimed["assignment"]["version"]
    for verdict in claimed["verdicts"]:
        r = client.post(
            "/api/v1/marks/",
            {"verdict": verdict["id"], "correct": True, "version": v},
            format="json",
        )
        assert r.status_code == 201 and r.json()["version"] == v + 1
        v = r.json()["version"]
    r = client.post("/api/v1/queue/finish/", {"transcript": "call-v", "version": v}, format="json")
    assert r.status_code == 200 and r.json()["version"] == v + 1
    outside = VerdictFactory()
    r = client.post("/api/v1/marks/", {"verdict": outside.pk, "correct": True}, format="json")
    assert r.status_code == 201 and r.json()["version"] is None


def test_the_progress_tells_a_page_that_comes_back_what_changed(client, reviewer, call):
    seen = finished_elsewhere(reviewer, call)
    logged_in(client, reviewer)
    url = reverse("review-call-progress", args=["call-v"])
    now = version(reviewer)
    same = client.get(url, {"version": now}, headers={"HX-Request": "true"})
    assert same.status_code == 200 and "<article " not in same.content.decode()
    assert "no-store" in same["Cache-Control"]
    changed = client.get(url, {"version": seen}, headers={"HX-Request": "true"}).content.decode()
    assert changed.count("<article ") == call.verdicts.count()
    assert "call-v changed in another tab or window (finished at" in changed


def test_the_review_page_is_never_cached(client, reviewer, call):
    logged_in(client, reviewer)
    client.post(reverse("review-next"))
    page = client.get(reverse("review-call", args=["call-v"]))
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    assert f'data-version="{version(reviewer)}"' in page.content.decode()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_tabs_saving_from_the_same_version_at_once_one_wins_one_is_told(reviewer, call):
    sample_claim_next(reviewer=reviewer)
    seen = version(reviewer)
    flagged = call.verdicts.get(flagged=True)
    barrier = threading.Barrier(2)
    outcome: dict[bool, str] = {}

    def tab(correct: bool):
        try:
            barrier.wait()
            mark_set(reviewer=reviewer, verdict=flagged, correct=correct, version=seen)
            outcome[correct] = "saved"
        except ReviewChanged:
            outcome[correct] = "refused"
        finally:
            connection.close()

    threads = [threading.Thread(target=tab, args=(c,)) for c in (True, False)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcome.values()) == ["refused", "saved"]
    winner = next(c for c, o in outcome.items() if o == "saved")
    assert marks(reviewer) == {flagged.pk: (winner, "")} and version(reviewer) == seen + 1
