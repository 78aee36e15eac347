"""Mark the rest right (with undo) and the reviewer's choice of queue: service, page and API."""

import pytest
from django.urls import reverse
from django.utils import timezone

from core.errors import DomainError
from labeling.models import Mark
from labeling.selectors.queue import ReviewQueue
from labeling.services.marks import mark_rest_right, mark_set, mark_undo_many
from labeling.services.queue import sample_claim_next
from tests.factories import (
    DailySampleFactory,
    RuleVersionFactory,
    SampleItemFactory,
    TranscriptFactory,
    VerdictFactory,
    logged_in,
    token_client,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def call():
    """A sampled call with two flagged verdicts, three clean ones and one errored."""
    t = TranscriptFactory(external_id="call-bulk")
    flagged = [VerdictFactory(transcript=t, flagged=True, turn=None) for _ in range(2)]
    clean = [VerdictFactory(transcript=t, flagged=False) for _ in range(3)]
    VerdictFactory(transcript=t, flagged=False, error="judge timeout")
    SampleItemFactory(sample=DailySampleFactory(day=timezone.localdate()), transcript=t)
    return t, flagged, clean


def test_rest_right_waits_for_the_flagged_ones_then_marks_only_unmarked_clean_verdicts(
    reviewer, call
):
    t, flagged, clean = call
    sample_claim_next(reviewer=reviewer)
    with pytest.raises(DomainError, match="mark the 2 flagged verdicts on call-bulk first"):
        mark_rest_right(reviewer=reviewer, transcript=t)
    assert not Mark.objects.exists()
    for v in flagged:
        mark_set(reviewer=reviewer, verdict=v, correct=True)
    mark_set(reviewer=reviewer, verdict=clean[0], correct=False, note="missed it")
    ids = mark_rest_right(reviewer=reviewer, transcript=t)
    assert ids == sorted(v.pk for v in clean[1:])
    marks = {m.verdict_id: m for m in Mark.objects.filter(reviewer=reviewer)}
    assert marks[clean[0].pk].correct is False  # a mark already made is left as it is
    assert all(marks[i].correct and marks[i].assignment_id for i in ids)
    assert mark_rest_right(reviewer=reviewer, transcript=t) == []  # nothing left: a no-op

    assert mark_undo_many(reviewer=reviewer, transcript=t, verdict_ids=ids) == 2
    assert set(Mark.objects.values_list("verdict_id", flat=True)) == {
        flagged[0].pk,
        flagged[1].pk,
        clean[0].pk,
    }


def test_the_page_marks_the_rest_and_undoes_it_in_one_step(client, reviewer, call):
    _t, flagged, clean = call
    logged_in(client, reviewer)
    client.post(reverse("review-next"))
    page = client.get(reverse("review-call", args=["call-bulk"])).content.decode()
    assert 'id="mark-rest" disabled' in page and "Mark the 2 flagged first." in page
    url = reverse("review-mark-rest", args=["call-bulk"])
    refused = client.post(url, headers={"HX-Request": "true"})
    assert refused.status_code == 400 and b"flagged" in refused.content
    for v in flagged:
        mark_set(reviewer=reviewer, verdict=v, correct=True)
    done = client.post(url, headers={"HX-Request": "true"})
    assert done.status_code == 200
    html = done.content.decode()
    assert html.count('hx-swap-oob="true"') == 3 and html.count("Saved") == 3
    assert (
        '"undo": [' in done.headers["HX-Trigger"]
        and "Marked 3 unflagged" in (done.headers["HX-Trigger"])
    )
    assert Mark.objects.filter(reviewer=reviewer).count() == 5
    undo = client.post(
        reverse("review-unmark-many", args=["call-bulk"]),
        {"verdict": [v.pk for v in clean]},
        headers={"HX-Request": "true"},
    )
    assert undo.status_code == 200 and "Undone: 3 marks removed." in undo.headers["HX-Trigger"]
    assert Mark.objects.filter(reviewer=reviewer).count() == 2
    # Without JavaScript the form posts and the page comes back with a message.
    plain = client.post(url)
    assert plain.status_code == 302 and plain.url == reverse("review-call", args=["call-bulk"])


def test_someone_elses_call_cannot_be_bulk_marked(client, make_user, call):
    other = make_user("reviewer", username="other")
    logged_in(client, other)
    r = client.post(reverse("review-mark-rest", args=["call-bulk"]))
    assert r.status_code == 400 and not Mark.objects.exists()


def test_a_queue_of_flagged_calls_by_group_or_rule(client, reviewer):
    sample = DailySampleFactory(day=timezone.localdate())
    asking = RuleVersionFactory(rule__rule_id="asking.one-question", rule__group="asking")
    opening = RuleVersionFactory(rule__rule_id="opening.greet", rule__group="opening")
    quiet = TranscriptFactory(external_id="call-quiet")
    VerdictFactory(transcript=quiet, rule_version=asking, flagged=False)
    greet = TranscriptFactory(external_id="call-greet")
    VerdictFactory(transcript=greet, rule_version=opening, flagged=True)
    ask = TranscriptFactory(external_id="call-ask")
    VerdictFactory(transcript=ask, rule_version=asking, flagged=True)
    for t in (quiet, greet, ask):
        SampleItemFactory(sample=sample, transcript=t)

    assert ReviewQueue.parse("rule:asking.one-question").key == "rule:asking.one-question"
    assert ReviewQueue.parse("nonsense") == ReviewQueue()
    logged_in(client, reviewer)
    home = client.get(reverse("review")).content.decode()
    assert 'value="group:asking"' in home and 'value="rule:opening.greet"' in home
    r = client.post(reverse("review-next"), {"queue": "group:asking"})
    assert r.url == reverse("review-call", args=["call-ask"])
    assert "queue: calls where the judge flagged a rule of asking" in (
        client.get(r.url).content.decode()
    )
    client.post(reverse("review-skip", args=["call-ask"]))  # the queue is kept for the next call
    assert b"Nothing left in your queue" in client.get(reverse("review")).content

    api = token_client(reviewer)
    got = api.post("/api/v1/queue/next/", {"queue": "flagged"}, format="json")
    assert got.status_code == 200 and got.json()["transcript"]["id"] == "call-greet"


def test_mark_rest_right_through_the_api(reviewer, call):
    _t, flagged, clean = call
    api = token_client(reviewer)
    refused = api.post("/api/v1/queue/mark-rest-right/", {"transcript": "call-bulk"}, format="json")
    assert refused.status_code == 400 and "flagged" in str(refused.json())
    for v in flagged:
        api.post("/api/v1/marks/", {"verdict": v.pk, "correct": True}, format="json")
    r = api.post("/api/v1/queue/mark-rest-right/", {"transcript": "call-bulk"}, format="json")
    assert r.status_code == 200 and r.json() == {"marked": sorted(v.pk for v in clean)}
