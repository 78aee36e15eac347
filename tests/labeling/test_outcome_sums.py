"""The outcome check sums (labeling/services/outcome_sums.py): after every kind of write the
outcomes report's predictors and bad unflagged calls equal a straightforward recompute from the
ratings, verdicts and scores, and `outcome_sums_rebuild --check` finds a tampered row."""

import json

import pytest
from django.core.management import call_command

from core import stats as metrics
from evals.catalog.models import Transcript
from evals.conversation.models import ConversationScore
from evals.judging.models import Verdict
from evals.judging.services.importing import verdicts_import
from labeling.models import (
    BAD_AT_MOST,
    Assignment,
    OutcomeCheckSums,
    OutcomeQuestion,
    OutcomeRating,
    SampleItem,
)
from labeling.selectors import outcomes
from labeling.selectors.outcomes import (
    SOURCE_LABELS,
    call_outcomes,
    outcome_bad_unflagged,
    outcome_data,
    outcome_figures,
    outcome_figures_stored,
    outcome_predictors,
    outcome_summary,
)
from labeling.selectors.resolution import sample_weight
from labeling.services.issue_rows import issue_row_create
from labeling.services.outcome_sums import outcome_sums_differences, outcome_sums_rebuild
from labeling.services.outcomes import outcome_rate, outcome_unrate
from tests.factories import (
    AgentVersionFactory,
    JudgeFactory,
    RuleVersionFactory,
    TranscriptFactory,
    VerdictFactory,
    logged_in,
)
from tests.labeling.test_outcomes import _at, _held

pytestmark = pytest.mark.django_db


def _recompute(question) -> tuple[dict, set]:
    """Per check label: (calls, mean) on each side, and the bad calls nothing flagged, from the
    rows themselves call by call."""
    sides: dict[tuple[str, str], dict[bool, list]] = {}
    unflagged = set()
    for call in Transcript.objects.filter(outcome_ratings__question=question).distinct():
        ratings = OutcomeRating.objects.filter(transcript=call, question=question)
        x = sum(r.rating for r in ratings) / len(ratings)
        ps = [
            r.assignment.item.inclusion_probability
            for r in ratings.select_related("assignment__item")
            if r.assignment
        ]
        w = sample_weight(max(ps) if ps else None)
        fired: dict[tuple[str, str], bool] = {}
        for v in Verdict.objects.filter(transcript=call, error="").select_related(
            "rule_version__rule", "judge"
        ):
            check = (SOURCE_LABELS[v.judge.kind], v.rule_version.rule.rule_id)
            fired[check] = fired.get(check, False) or v.flagged
        for s in ConversationScore.objects.filter(
            transcript=call, error="", score__isnull=False
        ).select_related("judge"):
            fired[("conversation judge", f"{s.judge.name} score ≤ 5")] = s.score <= 5
        for check, f in fired.items():
            sides.setdefault(check, {True: [], False: []})[f].append((x, w))
        if x <= BAD_AT_MOST and not any(
            f for c, f in fired.items() if c[0] != "conversation judge"
        ):
            unflagged.add(call.external_id)
    out = {}
    for check, by in sides.items():
        out[check] = {}
        for side, key in ((True, "fired"), (False, "not_fired")):
            m = metrics.weighted_mean([x for x, _ in by[side]], [w for _, w in by[side]])
            out[check][key] = (len(by[side]), None if m.value is None else round(m.value, 3))
    return out, unflagged


def _assert_current(question):
    assert outcome_sums_differences() == 0
    want, unflagged = _recompute(question)
    have = {
        (r["source"], r["check"]): {
            k: (r[k]["calls"], r[k]["mean"]) for k in ("fired", "not_fired")
        }
        for r in outcome_predictors(question=question)
    }
    assert have == want
    calls = call_outcomes(question=question)
    assert outcome_bad_unflagged(question=question) == outcome_bad_unflagged(
        calls, question=question
    )
    assert {r["transcript"] for r in outcome_bad_unflagged(question=question)} == unflagged
    # The page's count comes from the sums; it is the number of rows listed.
    assert outcomes._bad_unflagged_count(question) == len(unflagged)
    for by in ("week", "day"):
        stored = outcome_figures_stored(question=question, by=by)
        assert stored == outcome_figures(calls, by=by)
        assert stored["overall"] == outcome_summary(calls)


def test_every_kind_of_write_keeps_the_sums_equal_to_a_recompute(reviewer, make_user):
    one_q = RuleVersionFactory(rule__rule_id="asking.one-question")
    greet = RuleVersionFactory(rule__rule_id="opening.greet-by-name")
    llm = JudgeFactory(name="gpt-4o-mini/conduct-v3")
    calls = [TranscriptFactory(external_id=f"call-{i}") for i in range(4)]
    for i, call in enumerate(calls):
        VerdictFactory(transcript=call, rule_version=one_q, judge=llm, flagged=i % 2 == 0)
    assignments = [_held(calls[0], reviewer, p=0.25), _held(calls[1], reviewer, p=0.5)]
    # Ratings through the service, in and outside the sample, a second reviewer.
    for call, rating in zip(calls, (1, 4, 2, 5), strict=True):
        outcome_rate(reviewer=reviewer, transcript=call, rating=rating, reason="Bad.")
    other = make_user("reviewer")
    outcome_rate(reviewer=other, transcript=calls[3], rating=2, reason="Bad.")
    question = OutcomeQuestion.objects.get()
    _assert_current(question)
    # Rating again replaces it; a rating withdrawn.
    outcome_rate(reviewer=reviewer, transcript=calls[1], rating=2, reason="Slow.")
    outcome_unrate(reviewer=other, transcript=calls[3], question=question)
    _assert_current(question)
    # Verdicts written one at a time on a rated call, flipped, errored, deleted.
    v = VerdictFactory(transcript=calls[2], rule_version=greet, judge=llm, flagged=True)
    _assert_current(question)
    Verdict.objects.filter(pk=v.pk).update(flagged=False)
    _assert_current(question)
    Verdict.objects.filter(transcript=calls[0]).update(error="timeout")
    _assert_current(question)
    Verdict.objects.filter(transcript=calls[2], rule_version=one_q).delete()
    _assert_current(question)
    # Verdicts imported in bulk (COPY on PostgreSQL), some on calls nobody rated.
    TranscriptFactory(external_id="unrated")
    lines = [
        json.dumps(
            {"transcript": ext, "rule": "opening.greet-by-name", "rule_version": 1, "judge": j}
            | {"flagged": flagged}
        )
        for ext, j, flagged in (
            ("call-1", "gpt-4o-mini/conduct-v3", True),
            ("call-3", "detectors", False),
            ("unrated", "gpt-4o-mini/conduct-v3", True),
        )
    ]
    assert verdicts_import(lines=lines).created == 3
    _assert_current(question)
    # Conversation scores: written, changed, errored.
    conv = JudgeFactory(name="gpt-4o/conversation-v1")
    ConversationScore.objects.create(transcript=calls[0], judge=conv, score=3)
    s = ConversationScore.objects.create(transcript=calls[1], judge=conv, score=8)
    _assert_current(question)
    ConversationScore.objects.filter(pk=s.pk).update(score=4)
    ConversationScore.objects.create(transcript=calls[2], judge=conv, error="timeout")
    _assert_current(question)
    # The sample moves under a rating: its weight changes.
    SampleItem.objects.filter(pk=assignments[0].item_id).update(inclusion_probability=0.5)
    _assert_current(question)
    Assignment.objects.filter(pk=assignments[1].pk).delete()  # the rating's claim: SET NULL
    _assert_current(question)
    # A call's start moves it to another day and week; another version.
    Transcript.objects.filter(pk=calls[1].pk).update(started_at=_at("2026-11-17"))
    Transcript.objects.filter(pk=calls[2].pk).update(
        agent_version=AgentVersionFactory(version="2026-11-28.1"), started_at=_at("2026-11-29")
    )
    _assert_current(question)
    assert len(outcome_figures_stored(question=question, by="week")["trend"]) == 3
    # A rated call deleted takes its rows with it.
    calls[3].delete()
    _assert_current(question)
    assert OutcomeCheckSums.objects.filter(question_id=question.pk).exists()


def test_check_finds_a_tampered_row_and_rebuild_puts_it_right(reviewer):
    rv = RuleVersionFactory(rule__rule_id="asking.one-question")
    for i, rating in enumerate((1, 4, 5)):
        call = TranscriptFactory()
        VerdictFactory(transcript=call, rule_version=rv, flagged=i == 0)
        outcome_rate(reviewer=reviewer, transcript=call, rating=rating, reason="Bad.")
    call_command("outcome_sums_rebuild", "--check")
    row = OutcomeCheckSums.objects.filter(fired=0).exclude(src="*").get()
    OutcomeCheckSums.objects.filter(pk=row.pk).update(wx=row.wx + 0.5)
    with pytest.raises(SystemExit) as exc:
        call_command("outcome_sums_rebuild", "--check")
    assert exc.value.code == 1
    call_command("outcome_sums_rebuild")
    call_command("outcome_sums_rebuild", "--check")
    assert OutcomeCheckSums.objects.get(src=row.src, chk=row.chk, fired=0).wx == row.wx
    assert outcome_sums_rebuild() > 0 and outcome_sums_differences() == 0


def test_the_bad_calls_nothing_flagged_come_a_page_at_a_time(client, lead, reviewer, monkeypatch):
    for i in range(5):
        call = TranscriptFactory(external_id=f"bad-{i}")
        VerdictFactory(transcript=call, flagged=False)
        outcome_rate(reviewer=reviewer, transcript=call, rating=1 + i % 2, reason="Bad.")
    question = OutcomeQuestion.objects.get()
    everything = outcome_bad_unflagged(call_outcomes(question=question), question=question)
    monkeypatch.setattr(outcomes, "BAD_PAGE_SIZE", 2)
    pages = [outcome_data({"agent": "phone-screen", "bad_page": str(n)}) for n in (1, 2, 3)]
    assert [p["bad_unflagged"] for p in pages] == [everything[0:2], everything[2:4], everything[4:]]
    assert {(p["bad_unflagged_total"], p["bad_pages"]) for p in pages} == {(5, 3)}
    assert outcome_data({"agent": "phone-screen", "bad_page": "9"})["bad_page"] == 3
    logged_in(client, lead)
    html = client.get("/outcomes/?agent=phone-screen&bad_page=2").content.decode()
    assert "page 2 of 3" in html and "· 5 calls" in html
    assert html.count('class="mono" href="/calls/') == 2


def test_any_slice_of_the_stored_bad_calls_is_the_recomputed_order_sliced(
    reviewer, make_user, monkeypatch
):
    """The stored list, those without an issue row (the index, in order) then those with, sliced
    anywhere (within the first part, across its end, within the second, past it) and paged,
    equals the order recomputed from call_outcomes sliced alike: no issue row first, the worst
    by exact mean, then by external id."""
    other = make_user("reviewer")
    rv = RuleVersionFactory()
    for i in range(9):
        call = TranscriptFactory(external_id=f"bad-{i * 5 % 9}")
        VerdictFactory(transcript=call, rule_version=rv, flagged=i == 4)  # bad-2: flagged
        outcome_rate(reviewer=reviewer, transcript=call, rating=1 + i % 2, reason="Bad.")
        if i % 3 == 0:  # means 1.5, 2 and 1.5: ties broken by external id
            outcome_rate(reviewer=other, transcript=call, rating=2, reason="Bad.")
        if i in (1, 2, 6):
            issue_row_create(
                reporter=reviewer, transcript=call, turn=None, what="Slow.", severity="major"
            )
    outcome_rate(reviewer=reviewer, transcript=TranscriptFactory(), rating=4)
    question = OutcomeQuestion.objects.get()
    want = outcome_bad_unflagged(call_outcomes(question=question), question=question)
    assert [(r["transcript"], r["rating"], r["issue_rows"]) for r in want] == [
        ("bad-4", 1.0, 0),
        ("bad-0", 1.5, 0),
        ("bad-6", 2.0, 0),
        ("bad-7", 2.0, 0),
        ("bad-8", 2.0, 0),
        ("bad-1", 1.0, 1),
        ("bad-3", 1.5, 1),
        ("bad-5", 2.0, 1),
    ]
    for start in range(10):
        for stop in (*range(start, 11), None):
            got = outcomes._bad_unflagged_slice(question, start, stop)
            assert outcomes._bad_unflagged_rows(got, question) == want[start:stop], (start, stop)
    monkeypatch.setattr(outcomes, "BAD_PAGE_SIZE", 3)
    pages = [outcome_data({"agent": "phone-screen", "bad_page": str(n)}) for n in (1, 2, 3)]
    assert [p["bad_unflagged"] for p in pages] == [want[0:3], want[3:6], want[6:]]


def test_renaming_a_call_or_flagging_a_verdict_on_it_moves_it_in_the_bad_calls(reviewer):
    rv = RuleVersionFactory()
    verdicts = {}
    for ext in ("bad-a", "bad-b", "bad-c"):
        call = TranscriptFactory(external_id=ext)
        verdicts[ext] = VerdictFactory(transcript=call, rule_version=rv, flagged=False)
        outcome_rate(reviewer=reviewer, transcript=call, rating=1, reason="Bad.")
    question = OutcomeQuestion.objects.get()

    def listed() -> list[str]:
        assert outcome_sums_differences() == 0
        stored = outcome_data({"agent": "phone-screen"})
        recomputed = outcome_bad_unflagged(call_outcomes(question=question), question=question)
        assert stored["bad_unflagged"] == recomputed
        assert stored["bad_unflagged_total"] == len(recomputed)
        return [r["transcript"] for r in recomputed]

    assert listed() == ["bad-a", "bad-b", "bad-c"]
    Transcript.objects.filter(external_id="bad-a").update(external_id="bad-z")
    assert listed() == ["bad-b", "bad-c", "bad-z"]
    Verdict.objects.filter(pk=verdicts["bad-b"].pk).update(flagged=True)
    assert listed() == ["bad-c", "bad-z"]
    Verdict.objects.filter(pk=verdicts["bad-b"].pk).update(error="timeout")  # says nothing
    assert listed() == ["bad-b", "bad-c", "bad-z"]
    flag = VerdictFactory(transcript=verdicts["bad-c"].transcript, flagged=True)
    assert listed() == ["bad-b", "bad-z"]
    flag.delete()
    assert listed() == ["bad-b", "bad-c", "bad-z"]
    call_command("outcome_sums_rebuild", "--check")
