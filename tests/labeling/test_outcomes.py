"""Outcome ratings: the service's rules, the weighted figures, the predictors, the bad calls nothing
flagged, the review page's panel and the outcomes page."""

import datetime as dt

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from core import stats as metrics
from core.errors import DomainError
from evals.catalog.models import Transcript
from labeling.models import Assignment, OutcomeQuestion, OutcomeRating
from labeling.selectors.outcomes import (
    call_outcomes,
    outcome_bad_unflagged,
    outcome_data,
    outcome_predictors,
)
from labeling.services.issue_rows import issue_row_create
from labeling.services.outcomes import outcome_question_set, outcome_rate
from tests.factories import (
    AgentFactory,
    AgentVersionFactory,
    DailySampleFactory,
    JudgeFactory,
    RuleVersionFactory,
    SampleItemFactory,
    TranscriptFactory,
    VerdictFactory,
    logged_in,
)

pytestmark = pytest.mark.django_db


def _at(day: str) -> dt.datetime:
    return dt.datetime.fromisoformat(day + "T10:00:00+00:00")


def _held(call, reviewer, p=0.5, day=None):
    """Put the call in a sample with inclusion probability p and give it to the reviewer."""
    item = SampleItemFactory(
        sample=DailySampleFactory(day=day or timezone.localdate()),
        transcript=call,
        inclusion_probability=p,
    )
    now = timezone.now()
    return Assignment.objects.create(
        item=item, reviewer=reviewer, claimed_at=now, lease_expires_at=now + dt.timedelta(hours=1)
    )


# ---- the service -------------------------------------------------------------------------------


def test_rating_again_replaces_it_and_creates_the_default_question_once(reviewer):
    call = TranscriptFactory()
    _held(call, reviewer)
    outcome_rate(reviewer=reviewer, transcript=call, rating=4, key_factor="Clear questions")
    outcome_rate(reviewer=reviewer, transcript=call, rating=3)
    ratings = OutcomeRating.objects.filter(transcript=call)
    assert ratings.count() == 1 and ratings.get().rating == 3
    assert ratings.get().assignment is not None  # weighed by its sample item
    q = OutcomeQuestion.objects.get()
    assert q.key == "overall" and q.agent == call.agent_version.agent
    assert "good for the candidate and the company" in q.text


def test_a_bad_rating_needs_a_reason_and_the_rating_its_range(reviewer):
    call = TranscriptFactory()
    with pytest.raises(DomainError) as exc:
        outcome_rate(reviewer=reviewer, transcript=call, rating=2, reason="  ")
    assert set(exc.value.field_errors) == {"reason"}
    for bad in (0, 6, "x", None, "3.5"):
        with pytest.raises(DomainError) as exc:
            outcome_rate(reviewer=reviewer, transcript=call, rating=bad)
        assert "rating" in exc.value.field_errors
    assert not OutcomeRating.objects.exists()
    outcome_rate(reviewer=reviewer, transcript=call, rating=1, reason="Hung up on her.")
    assert OutcomeRating.objects.get().assignment is None  # outside the sample: weight 1


def test_the_database_refuses_a_bad_rating_without_reason(reviewer):
    call = TranscriptFactory()
    q = OutcomeQuestion.objects.create(agent=call.agent_version.agent, key="overall", text="Q?")
    with pytest.raises(IntegrityError), transaction.atomic():
        OutcomeRating.objects.create(transcript=call, question=q, reviewer=reviewer, rating=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        OutcomeRating.objects.create(
            transcript=call, question=q, reviewer=reviewer, rating=6, reason="x"
        )


def test_questions_are_per_agent(reviewer):
    call = TranscriptFactory()
    other = AgentFactory(name="support")
    q, _ = outcome_question_set(agent=other, key="resolved", text="Was the problem solved?")
    with pytest.raises(DomainError) as exc:
        outcome_rate(reviewer=reviewer, transcript=call, rating=4, question=q)
    assert "question" in exc.value.field_errors
    with pytest.raises(DomainError) as exc:
        outcome_question_set(agent=other, key="not a slug!", text="")
    assert set(exc.value.field_errors) == {"key", "text"}
    same, _ = outcome_question_set(agent=other, key="resolved", text="Was the problem solved?")
    assert same.pk == q.pk and OutcomeQuestion.objects.count() == 1


# ---- figures, predictors, bad calls ------------------------------------------------------------


@pytest.fixture
def rated(reviewer):
    """Six calls over two weeks and two versions, rated; two rules and a detector on them.

    good-1..3 (v1, p 1.0) rated 5, 4, 4; bad-1 (v1, p 0.25) rated 1, one-q fired;
    bad-2 (v2, p 0.5) rated 2, nothing flagged; mid (v2, outside the sample) rated 3, one-q fired.
    """
    v1 = AgentVersionFactory(version="2026-11-21.1")
    v2 = AgentVersionFactory(version="2026-11-28.1")
    one_q = RuleVersionFactory(rule__rule_id="asking.one-question")
    greet = RuleVersionFactory(rule__rule_id="opening.greet-by-name")
    silence = RuleVersionFactory(rule__rule_id="timing.no-long-silence")
    llm, det = JudgeFactory(), JudgeFactory(name="detectors", kind="detector")
    spec = [
        ("good-1", v1, "2026-11-23", 1.0, 5, []),
        ("good-2", v1, "2026-11-24", 1.0, 4, []),
        ("good-3", v1, "2026-11-17", 1.0, 4, []),
        ("bad-1", v1, "2026-11-24", 0.25, 1, [one_q]),
        ("bad-2", v2, "2026-11-29", 0.5, 2, []),
        ("mid", v2, "2026-11-29", None, 3, [one_q]),
    ]
    calls = {}
    for ext, version, day, p, rating, fired in spec:
        call = TranscriptFactory(external_id=ext, agent_version=version, started_at=_at(day))
        for rv in (one_q, greet):
            VerdictFactory(transcript=call, rule_version=rv, judge=llm, flagged=rv in fired)
        VerdictFactory(transcript=call, rule_version=silence, judge=det, flagged=False)
        if p is not None:
            _held(call, reviewer, p=p, day=dt.date.fromisoformat(day) + dt.timedelta(days=1))
        outcome_rate(
            reviewer=reviewer,
            transcript=call,
            rating=rating,
            reason="Bad." if rating <= 2 else "",
            key_factor="talked over her" if ext == "bad-2" else "",
        )
        calls[ext] = call
    # An errored verdict says nothing: bad-2 stays "nothing flagged".
    VerdictFactory(
        transcript=calls["bad-2"],
        rule_version=greet,
        judge=JudgeFactory(name="other"),
        flagged=True,
        error="timeout",
    )
    return calls


def test_call_outcomes_weigh_like_calibration(rated):
    q = OutcomeQuestion.objects.get()
    by = {c.external_id: c for c in call_outcomes(question=q)}
    assert by["bad-1"].weight == 4.0 and by["bad-2"].weight == 2.0 and by["good-1"].weight == 1.0
    assert by["mid"].weight == 1.0 and by["mid"].outside_sample
    assert by["bad-1"].bad and not by["mid"].bad


def test_figures_per_version_and_week_are_weighted(rated):
    data = outcome_data({"agent": "phone-screen"})
    v1 = next(v for v in data["versions"] if v["version"] == "2026-11-21.1")
    expected = metrics.weighted_mean([5, 4, 4, 1], [1, 1, 1, 4])
    assert v1["mean"] == pytest.approx(expected.value, abs=1e-3)
    assert v1["raw_mean"] == pytest.approx(3.5)
    assert v1["bad"] == 1 and v1["bad_share"] == pytest.approx(4 / 7, abs=1e-4)
    assert v1["calls"] == 4 and v1["outside_sample"] == 0
    trend = [(r["version"], r["period"], r["calls"]) for r in data["trend"]]
    assert trend == [
        ("2026-11-21.1", "2026-11-16", 1),
        ("2026-11-21.1", "2026-11-23", 3),
        ("2026-11-28.1", "2026-11-23", 2),
    ]
    week = data["trend"][1]
    assert week["mean_ci"][0] >= 1 and week["mean_ci"][1] <= 5
    assert week["mean_ci"][0] <= week["mean"] <= week["mean_ci"][1]
    days = outcome_data({"agent": "phone-screen", "by": "day"})["trend"]
    assert {r["period"] for r in days} == {"2026-11-17", "2026-11-23", "2026-11-24", "2026-11-29"}
    with pytest.raises(DomainError):
        outcome_data({"agent": "phone-screen", "by": "month"})
    with pytest.raises(DomainError) as exc:
        outcome_data({"agent": "nobody"})
    assert "agent" in exc.value.field_errors


def test_predictors_compare_fired_with_not_fired(rated):
    q = OutcomeQuestion.objects.get()
    rows = {p["check"]: p for p in outcome_predictors(question=q)}
    one_q = rows["asking.one-question"]
    assert one_q["source"] == "LLM judge"
    assert one_q["fired"]["calls"] == 2 and one_q["not_fired"]["calls"] == 4
    fired = metrics.weighted_mean([1, 3], [4, 1])
    clean = metrics.weighted_mean([5, 4, 4, 2], [1, 1, 1, 2])
    assert one_q["difference"] == pytest.approx(fired.value - clean.value, abs=1e-3)
    assert one_q["difference_ci"][0] < one_q["difference"] < one_q["difference_ci"][1]
    assert not one_q["enough_calls"] and not one_q["worth_a_look"]
    # Never fired on a rated call: worth a look, and the detector shows as its own source.
    assert rows["timing.no-long-silence"]["source"] == "detector"
    assert (
        rows["timing.no-long-silence"]["never_fired"]
        and rows["opening.greet-by-name"]["worth_a_look"]
    )


def test_a_rule_that_does_not_move_the_outcome_is_worth_a_look(reviewer):
    rv = RuleVersionFactory(rule__rule_id="opening.greet-by-name")
    calls = []
    for n, (rating, fired) in enumerate(
        [(4, True), (3, True), (5, True), (4, False), (3, False), (5, False)]
    ):
        call = TranscriptFactory(started_at=_at("2026-11-24"))
        VerdictFactory(transcript=call, rule_version=rv, flagged=fired)
        outcome_rate(reviewer=reviewer, transcript=call, rating=rating)
        calls.append(call)
    q = OutcomeQuestion.objects.get()
    (row,) = outcome_predictors(question=q)
    assert row["enough_calls"] and row["difference"] == 0 and row["worth_a_look"]


def test_bad_calls_nothing_flagged_list_those_without_an_issue_row_first(rated, reviewer):
    q = OutcomeQuestion.objects.get()
    calls = call_outcomes(question=q)
    rows = outcome_bad_unflagged(calls, question=q)
    assert [r["transcript"] for r in rows] == ["bad-2"]  # bad-1 had a flag
    assert rows[0]["issue_rows"] == 0 and rows[0]["ratings"][0]["key_factor"] == "talked over her"
    other = TranscriptFactory(external_id="bad-3", started_at=_at("2026-11-29"))
    outcome_rate(reviewer=reviewer, transcript=other, rating=1, reason="Rude.")
    issue_row_create(
        reporter=reviewer,
        transcript=rated["bad-2"],
        turn=None,
        what="Talked over.",
        severity="major",
    )
    rows = outcome_bad_unflagged(call_outcomes(question=q), question=q)
    assert [(r["transcript"], r["issue_rows"]) for r in rows] == [("bad-3", 0), ("bad-2", 1)]


# ---- pages -------------------------------------------------------------------------------------


def test_the_review_page_shows_the_panel_and_saves_a_rating(client, reviewer):
    call = TranscriptFactory(external_id="call-000777")
    VerdictFactory(transcript=call)
    _held(call, reviewer)
    logged_in(client, reviewer)
    page = client.get(reverse("review-call", args=[call.external_id])).content.decode()
    assert 'id="outcome-panel"' in page and "good for the candidate and the company" in page
    assert "js/outcome.js" in page
    url = reverse("review-outcome", args=[call.external_id])
    bad = client.post(
        url, {"question": "overall", "rating": "2", "key_factor": "cut off"}, HTTP_HX_REQUEST="true"
    )
    html = bad.content.decode()
    assert bad.status_code == 200 and 'aria-invalid="true"' in html
    assert "a rating of 2 needs a reason" in html and 'value="cut off"' in html
    assert 'value="2" checked' in html  # the typed values are kept
    assert not OutcomeRating.objects.exists()
    ok = client.post(
        url,
        {"question": "overall", "rating": "2", "reason": "Cut her off twice.", "key_factor": "x"},
        HTTP_HX_REQUEST="true",
    )
    assert "Saved: 2 of 5" in ok.content.decode()
    assert OutcomeRating.objects.get().reason == "Cut her off twice."
    plain = client.post(url, {"question": "overall", "rating": "4"})
    assert plain.status_code == 302 and plain.url.endswith("#outcome-panel")
    assert OutcomeRating.objects.get().rating == 4


def test_rating_a_call_another_reviewer_holds_is_refused(client, reviewer, make_user):
    """The API refuses it too (tests/labeling/test_label_parity.py: page and API side by side);
    a call outside the sample is rated by both, weighing 1."""
    call = TranscriptFactory()
    _held(call, make_user("reviewer", username="ruth"))
    logged_in(client, reviewer)
    response = client.post(reverse("review-outcome", args=[call.external_id]), {"rating": "4"})
    assert response.status_code == 400 and not OutcomeRating.objects.exists()


def test_the_outcomes_page_lists_bad_unflagged_calls_first(client, lead, rated):
    logged_in(client, lead)
    html = client.get(reverse("outcomes")).content.decode()
    assert html.index("Bad outcome, nothing flagged") < html.index("What predicts the outcome")
    assert 'data-testid="outcome-trend"' in html and "bad-2" in html
    assert reverse("outcome-call-issue", args=["bad-2"]) in html
    assert "worth a look" in html


def test_the_issue_form_for_a_bad_call_files_a_row_and_comes_back(client, lead, rated):
    logged_in(client, lead)
    url = reverse("outcome-call-issue", args=["bad-2"])
    page = client.get(url).content.decode()
    assert 'id="issue-form"' in page and "talked over her" in page
    response = client.post(
        reverse("review-issue", args=["bad-2"]),
        {"what": "Talks over the candidate.", "severity": "major", "next": url},
    )
    assert response.status_code == 302 and response.url == url
    assert rated["bad-2"].issue_rows.count() == 1
    evil = client.post(
        reverse("review-issue", args=["bad-2"]),
        {"what": "Again.", "severity": "minor", "next": "https://evil.example.com/"},
    )
    assert evil.url == reverse("review-call", args=["bad-2"])


def test_a_reviewer_cannot_read_the_outcomes_page(client, reviewer):
    logged_in(client, reviewer)
    assert client.get(reverse("outcomes")).status_code == 403


def test_the_dashboard_shows_a_lead_the_outcome_trend(client, lead, reviewer, rated):
    logged_in(client, lead)
    html = client.get(reverse("dashboard")).content.decode()
    assert 'data-testid="outcome-trend"' in html and "Outcomes · phone-screen" in html
    assert html.count("<circle") == 3  # v1 in two weeks, v2 in one
    logged_in(client, reviewer)
    assert 'data-testid="outcome-trend"' not in client.get(reverse("dashboard")).content.decode()


def test_the_conversation_score_is_a_predictor_too(rated):
    from evals.conversation.models import ConversationScore

    judge = JudgeFactory(name="gpt-4o/conversation-v1")
    for ext, score in (("bad-1", 3), ("bad-2", 4), ("good-1", 9), ("good-2", 8)):
        ConversationScore.objects.create(transcript=rated[ext], judge=judge, score=score)
    ConversationScore.objects.create(transcript=rated["mid"], judge=judge, error="timeout")
    q = OutcomeQuestion.objects.get()
    rows = {p["check"]: p for p in outcome_predictors(question=q)}
    row = rows["gpt-4o/conversation-v1 score ≤ 5"]
    assert row["source"] == "conversation judge"
    assert row["fired"]["calls"] == 2 and row["not_fired"]["calls"] == 2  # the errored one: out
    assert row["difference"] < 0


def test_predictors_and_bad_unflagged_match_a_recompute_call_by_call(reviewer):
    """Both selectors against a straightforward recompute over random calls: a check fired on a
    call when any of its non-errored verdicts there (two judges of one kind, two versions of one
    rule) was flagged; a bad call is unflagged when none of its non-errored verdicts was."""
    import random

    from labeling.selectors.resolution import sample_weight

    rng = random.Random(26)
    rules = [RuleVersionFactory(rule__rule_id=f"asking.rule-{i}") for i in range(3)]
    rules.append(RuleVersionFactory(rule=rules[0].rule, number=2))  # rule-0's second version
    judges = [JudgeFactory(name="llm-a"), JudgeFactory(name="llm-b")]
    truth = {}  # transcript pk -> (rating, weight, {check: fired}, any flagged)
    for n in range(24):
        call = TranscriptFactory(started_at=_at("2026-11-24"))
        fired, flagged = {}, False
        for rv in rules:
            for judge in judges[: rng.choice([1, 2])]:
                f, err = rng.random() < 0.4, rng.random() < 0.1
                VerdictFactory(
                    transcript=call,
                    rule_version=rv,
                    judge=judge,
                    flagged=f,
                    error="x" if err else "",
                )
                if not err:
                    check = rv.rule.rule_id
                    fired[check] = fired.get(check, False) or f
                    flagged = flagged or f
        p = rng.choice([None, 0.25, 0.5, 1.0])
        if p is not None:
            _held(call, reviewer, p=p, day=dt.date(2026, 11, 25))
        rating = rng.randint(1, 5)
        outcome_rate(reviewer=reviewer, transcript=call, rating=rating, reason="Bad.")
        truth[call.pk] = (rating, sample_weight(p), fired, flagged)
    q = OutcomeQuestion.objects.get()
    for row in outcome_predictors(question=q):
        sides = {True: [], False: []}
        for rating, w, fired, _ in truth.values():
            if row["check"] in fired:
                sides[fired[row["check"]]].append((rating, w))
        for side, key in ((True, "fired"), (False, "not_fired")):
            want = metrics.weighted_mean([x for x, _ in sides[side]], [w for _, w in sides[side]])
            assert row[key]["calls"] == len(sides[side])
            assert row[key]["mean"] == (None if want.value is None else round(want.value, 3))
    assert {r["check"] for r in outcome_predictors(question=q)} == {
        c for _, _, fired, _ in truth.values() for c in fired
    }
    unflagged = outcome_bad_unflagged(call_outcomes(question=q), question=q)
    assert {r["transcript"] for r in unflagged} == {
        t.external_id
        for t in Transcript.objects.filter(pk__in=truth)
        if truth[t.pk][0] <= 2 and not truth[t.pk][3]
    }
