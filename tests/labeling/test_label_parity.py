"""Labels and ratings: the review page and the API side by side keep one rule (the services'),
and the outcome issue page keeps double review blind.

A call other reviewers hold (or finished) and this reviewer does not is refused by both (the page
400, the API 409 `not_held`) and nothing is stored; a call the reviewer holds is accepted by both;
a call outside the sample (nobody holds it) is accepted by both and weighs 1.
"""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from evals.decisions.models import Decision
from labeling.models import DecisionLabel, OutcomeRating
from tests.factories import held_by, logged_in, token_client
from tests.labeling.test_decisions import TAKE, calls  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def label_by_page(client, reviewer, decision: Decision) -> int:
    logged_in(client, reviewer)
    url = reverse("review-decision-label", args=[decision.transcript.external_id, decision.pk])
    return client.post(url, {"answer": TAKE}).status_code


def label_by_api(client, reviewer, decision: Decision) -> int:
    body = {"decision": decision.pk, "answer": TAKE}
    return token_client(reviewer).post("/api/v1/decision-labels/", body, format="json").status_code


def rate_by_page(client, reviewer, decision: Decision) -> int:
    logged_in(client, reviewer)
    url = reverse("review-outcome", args=[decision.transcript.external_id])
    return client.post(url, {"rating": "4"}).status_code


def rate_by_api(client, reviewer, decision: Decision) -> int:
    body = {"transcript": decision.transcript.external_id, "rating": 4}
    return token_client(reviewer).post("/api/v1/outcome-ratings/", body, format="json").status_code


def stored(reviewer, decision):
    labels = DecisionLabel.objects.filter(decision=decision, reviewer=reviewer).count()
    ratings = OutcomeRating.objects.filter(
        transcript=decision.transcript, reviewer=reviewer
    ).count()
    return labels + ratings


# How it is sent, the answer when refused, the answer when accepted.
WAYS = {
    "label-page": (label_by_page, 400, 302),
    "label-api": (label_by_api, 409, 201),
    "rating-page": (rate_by_page, 400, 302),
    "rating-api": (rate_by_api, 409, 201),
}


@pytest.fixture(params=list(WAYS))
def way(request):
    return WAYS[request.param]


def test_a_call_another_reviewer_holds_is_refused_by_page_and_api_alike(
    client,
    calls,  # noqa: F811
    make_user,
    way,
):
    send, refused, accepted = way
    priya, ruth = make_user("reviewer", username="priya"), make_user("reviewer", username="ruth")
    d = calls["c-1@turn:1/turn-taking"]
    held_by(d.transcript, ruth)
    assert send(client, priya, d) == refused
    assert stored(priya, d) == 0
    d.refresh_from_db()
    assert d.truth == ""  # one reviewer's label never settled the call
    assert send(client, ruth, d) == accepted
    assert stored(ruth, d) == 1


def test_a_held_call_and_a_call_outside_the_sample_are_accepted_alike(
    client,
    calls,  # noqa: F811
    make_user,
    way,
):
    send, _, accepted = way
    priya = make_user("reviewer", username="priya")
    mine, outside = calls["c-1@turn:1/turn-taking"], calls["c-2@turn:1/turn-taking"]
    held_by(mine.transcript, priya)
    assert send(client, priya, mine) == accepted and stored(priya, mine) == 1
    assert send(client, priya, outside) == accepted and stored(priya, outside) == 1


def test_the_api_error_names_the_rule(calls, make_user):  # noqa: F811
    priya, ruth = make_user("reviewer", username="priya"), make_user("reviewer", username="ruth")
    d = calls["c-1@turn:1/turn-taking"]
    held_by(d.transcript, ruth)
    body = (
        token_client(priya)
        .post("/api/v1/decision-labels/", {"decision": d.pk, "answer": TAKE}, format="json")
        .json()
    )
    assert body["code"] == "not_held" and body["errors"][0]["field"] == "transcript"
    assert "ruth" not in body["detail"]  # who holds it is not told


def test_the_outcome_issue_page_hides_other_ratings_until_the_reviewer_rated(
    client,
    calls,  # noqa: F811
    make_user,
    lead,
):
    from labeling.services.outcomes import outcome_rate

    priya, ruth = make_user("reviewer", username="priya"), make_user("reviewer", username="ruth")
    call = calls["c-1@turn:1/turn-taking"].transcript
    held_by(call, ruth)
    held_by(call, priya)
    outcome_rate(reviewer=ruth, transcript=call, rating=1, reason="Hung up on her.")
    url = reverse("outcome-call-issue", args=[call.external_id])
    logged_in(client, priya)
    before = client.get(url).content.decode()
    assert "Hung up on her." not in before and "ruth" not in before
    assert "their ratings show once you have rated it" in before
    outcome_rate(reviewer=priya, transcript=call, rating=4)
    after = client.get(url).content.decode()
    assert "Hung up on her." in after and "(ruth)" in after and "(priya)" in after
    logged_in(client, lead)  # leads read the outcome report: everyone's
    assert "Hung up on her." in client.get(url).content.decode()


def test_the_services_say_whether_they_created(calls, make_user):  # noqa: F811
    """The API's 201 or 200 comes from the write itself (issue 25), not a read before it that a
    concurrent request could make stale."""
    from labeling.services.decisions import decision_label_set
    from labeling.services.marks import mark_set
    from labeling.services.outcomes import outcome_question_set, outcome_rate
    from labeling.services.sampling import daily_sample_make
    from tests.factories import VerdictFactory

    priya = make_user("reviewer", username="priya")
    d = calls["c-1@turn:1/turn-taking"]
    assert decision_label_set(reviewer=priya, decision=d, answer=TAKE)[1] is True
    assert decision_label_set(reviewer=priya, decision=d, answer=TAKE)[1] is False
    assert outcome_rate(reviewer=priya, transcript=d.transcript, rating=4)[1] is True
    assert outcome_rate(reviewer=priya, transcript=d.transcript, rating=5)[1] is False
    agent = d.transcript.agent_version.agent
    assert outcome_question_set(agent=agent, key="fair", text="Fair?")[1] is True
    assert outcome_question_set(agent=agent, key="fair", text="Fair at all?")[1] is False
    v = VerdictFactory()
    assert mark_set(reviewer=priya, verdict=v, correct=True)[1] is True
    assert mark_set(reviewer=priya, verdict=v, correct=False)[1] is False
    day = timezone.localdate() + dt.timedelta(days=3)
    assert daily_sample_make(day=day, size=5)[1] is True
    assert daily_sample_make(day=day, size=5)[1] is False
