"""Decision points in labeling: labels and the truth they settle on, hard moments, the review
panel, the accuracy figures by page, API and command."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from core.errors import DomainError
from evals.catalog.services.importing import transcripts_import
from evals.decisions.models import Decision
from evals.decisions.services.kinds import decision_kinds_import
from labeling.models import DecisionLabel, HardMoment, SampleItem
from labeling.services.decisions import (
    decision_label_set,
    decision_label_undo,
    decision_truth,
    hard_moments_queue,
)
from tests.evals.decision_helpers import KINDS_YAML
from tests.evals.import_helpers import call
from tests.factories import held_by, logged_in, token_client

pytestmark = pytest.mark.django_db

TAKE, WAIT = "take the turn", "wait"


def timed_call(id, version, gaps, decisions=()):
    """A call alternating user and agent turns; the agent starts each `gaps[i]` ms after."""
    turns, t = [], 0
    for gap in gaps:
        turns.append({"speaker": "user", "text": "…", "start_ms": t, "end_ms": t + 2000})
        t += 2000 + gap
        turns.append({"speaker": "agent", "text": "…", "start_ms": t, "end_ms": t + 2000})
        t += 2500
    return call(id, agent_version=version, turns=turns, decisions=list(decisions))


@pytest.fixture
def calls(db):
    decision_kinds_import(text=KINDS_YAML)
    transcripts_import(
        lines=[
            timed_call(
                "c-1",
                "v1",
                [300, 700, 1200],
                [{"kind": "handoff", "turn": 1, "choice": "keep helping", "confidence": 0.35}],
            ),
            timed_call("c-2", "v2", [-200, 650]),
        ]
    )
    return {d.transcript.external_id + "@" + d.key + "/" + d.kind.kind_id: d for d in _all()}


def _all():
    return Decision.objects.select_related("transcript", "kind", "kind_version")


def test_truth_is_the_majority_and_a_tie_is_nothing(calls, make_user):
    d = calls["c-1@turn:1/turn-taking"]
    a, b, c = (make_user("reviewer", username=n) for n in "abc")
    decision_label_set(reviewer=a, decision=d, answer=WAIT)
    d.refresh_from_db()
    assert d.truth == WAIT and d.agent_right is False
    decision_label_set(reviewer=b, decision=d, answer=TAKE)
    d.refresh_from_db()
    assert d.truth == "" and d.agent_right is None
    decision_label_set(reviewer=c, decision=d, answer=TAKE)
    decision_label_set(reviewer=c, decision=d, answer=TAKE)  # idempotent
    d.refresh_from_db()
    assert d.truth == TAKE and DecisionLabel.objects.filter(decision=d).count() == 3
    decision_label_undo(reviewer=c, decision=d)
    d.refresh_from_db()
    assert d.truth == ""
    with pytest.raises(DomainError, match="answer: 'maybe' is not one of"):
        decision_label_set(reviewer=a, decision=d, answer="maybe")
    assert decision_truth([]) == ""


def test_hard_moments_are_unsure_or_near_the_boundary_and_queue_their_calls(calls, make_user):
    lead = make_user("lead", username="lena")
    made = hard_moments_queue(by=lead, boundary_ms=700, within_ms=60)
    got = {
        (m.decision.transcript.external_id, m.decision.key, m.decision.kind.kind_id) for m in made
    }
    # c-1: handoff at confidence 0.35, the 700 ms gap; c-2: the 650 ms gap
    assert got == {
        ("c-1", "turn:1", "handoff"),
        ("c-1", "turn:3", "turn-taking"),
        ("c-2", "turn:3", "turn-taking"),
    }
    reasons = {(m.decision.transcript.external_id, m.decision.kind.kind_id): m.reason for m in made}
    assert reasons["c-1", "handoff"] == "agent confidence 0.35"
    assert reasons["c-2", "turn-taking"] == "gap 650 ms, 50 ms from 700 ms"
    queued = SampleItem.objects.filter(sample__day=timezone.localdate(), reason="manual")
    assert sorted(queued.values_list("transcript__external_id", flat=True)) == ["c-1", "c-2"]
    assert hard_moments_queue(by=lead, boundary_ms=700, within_ms=60) == []  # queued already
    assert HardMoment.objects.count() == 3


def hold(client, reviewer, external_id):
    """Queue the call and let the reviewer claim it."""
    from evals.catalog.models import Transcript
    from labeling.services.sampling import sample_item_queue_by_hand

    sample_item_queue_by_hand(
        transcript=Transcript.objects.get(external_id=external_id), added_by=None
    )
    logged_in(client, reviewer)
    response = client.post(reverse("review-next"))
    assert response.url == reverse("review-call", args=[external_id])


def test_the_review_page_shows_moments_and_saves_a_label(client, reviewer, calls, make_user):
    hold(client, reviewer, "c-1")
    html = client.get(reverse("review-call", args=["c-1"])).content.decode()
    assert 'id="decision-panel"' in html and "0 of 4 labeled" in html
    d = calls["c-1@turn:3/turn-taking"]
    assert f'id="moment-{d.pk}"' in html and "gap 700 ms" in html
    url = reverse("review-decision-label", args=["c-1", d.pk])
    response = client.post(url, {"answer": WAIT}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    fragment = response.content.decode()
    assert "agent-wrong" in fragment and "Saved" in fragment
    assert "decision-labeled" in response["HX-Trigger"]
    d.refresh_from_db()
    assert d.truth == WAIT
    bad = client.post(url, {"answer": "nope"}, HTTP_HX_REQUEST="true")
    assert "is not one of" in bad.content.decode()
    # a call another reviewer holds cannot be labeled (tests/labeling/test_label_parity.py has
    # the page and the API side by side)
    other = calls["c-2@turn:1/turn-taking"]
    held_by(other.transcript, make_user("reviewer", username="ruth"))
    refused = client.post(
        reverse("review-decision-label", args=["c-2", other.pk]), {"answer": TAKE}
    )
    assert refused.status_code == 400 and not DecisionLabel.objects.filter(decision=other)


def label_all(calls, reviewer, wrong_keys):
    for name, d in calls.items():
        if d.kind.kind_id == "turn-taking":
            answer = WAIT if name in wrong_keys else TAKE
            decision_label_set(reviewer=reviewer, decision=d, answer=answer)


def test_accuracy_page_api_and_command_agree(client, lead, calls):
    label_all(calls, lead, {"c-2@turn:1/turn-taking"})
    logged_in(client, lead)
    page = client.get(reverse("decision-accuracy"))
    html = page.content.decode()
    assert page.status_code == 200 and 'data-testid="gap-histogram"' in html
    assert "chose “take the turn” where reviewers say “wait” (1)" in html
    assert 'href="/calls/c-2/#turn-1">c-2 turn 1</a>' in html  # where the agent chose wrong
    api = token_client(lead).get("/api/v1/decision-accuracy/?kind=turn-taking").json()
    by_version = {r["agent_version"]: r for r in api}
    v2 = by_version["v2"]
    assert (v2["decisions"], v2["labeled"], v2["right"], v2["accuracy"]) == (2, 2, 1, 0.5)
    assert v2["confusion"][0] == {"choice": TAKE, "answers": {TAKE: 1, WAIT: 1}}
    assert v2["gaps"]["by_answer"][WAIT][0] == 1  # the -200 ms overlap, labeled "wait"
    assert by_version["v1"]["accuracy"] == 1.0
    out = StringIO()
    call_command("decision_accuracy", "--format", "json", "--kind", "turn-taking", stdout=out)
    assert json.loads(out.getvalue()) == api
    out = StringIO()
    call_command("decision_accuracy", stdout=out)
    assert "0.50 [0.09, 0.91]" in out.getvalue()


def test_api_labels_and_queues(lead, reviewer, calls):
    d = calls["c-1@turn:1/turn-taking"]
    api = token_client(reviewer)
    first = api.post("/api/v1/decision-labels/", {"decision": d.pk, "answer": TAKE}, format="json")
    assert first.status_code == 201 and first.json()["truth"] == TAKE
    again = api.post("/api/v1/decision-labels/", {"decision": d.pk, "answer": TAKE}, format="json")
    assert again.status_code == 200
    bad = api.post("/api/v1/decision-labels/", {"decision": d.pk, "answer": "x"}, format="json")
    assert bad.status_code == 400
    queued = token_client(lead).post(
        "/api/v1/decision-moments/hard/", {"max_confidence": 0.5, "within_ms": 0}, format="json"
    )
    assert queued.status_code == 201 and queued.json() == {"queued": 2, "calls": ["c-1"]}


def test_gap_histograms_are_the_gaps_binned_one_by_one(lead, calls):
    """The histogram binned in SQL against core.stats.histogram over each decision's gap, on
    every edge and between: overlaps, each bin's lower edge (in it) and upper edge (the next)."""
    from core import stats
    from evals.decisions.selectors import GAP_EDGES, decision_accuracy_table

    edges = [-1, 0, 199, 200, 1600, 1999, 2000, 3000, 9000]
    transcripts_import(lines=[timed_call("c-edges", "v2", edges)])
    label_all({k: d for k, d in calls.items() if k.startswith("c-1")}, lead, {"c-1@turn:1/x"})
    want: dict = {}
    for d in Decision.objects.filter(gap_ms__isnull=False).select_related(
        "transcript__agent_version"
    ):
        by = want.setdefault(d.transcript.agent_version.version, {})
        by.setdefault(d.truth or "unlabeled", []).append(d.gap_ms)
    got = {
        r["agent_version"]: r["gaps"]["by_answer"]
        for r in decision_accuracy_table(kind="turn-taking")
    }
    assert got == {
        v: {t: stats.histogram(gaps, GAP_EDGES) for t, gaps in by.items()} for v, by in want.items()
    }
    assert sum(got["v2"]["unlabeled"]) == len(edges) + 2
