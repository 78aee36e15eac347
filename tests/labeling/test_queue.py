from datetime import timedelta

import pytest
from django.utils import timezone

from core.errors import DomainError
from labeling.models import Assignment, Mark
from labeling.selectors.queue import progress_today
from labeling.services.issue_rows import issue_row_create
from labeling.services.marks import mark_set, mark_undo
from labeling.services.queue import assignment_finish, assignment_skip, sample_claim_next
from tests.factories import (
    DailySampleFactory,
    SampleItemFactory,
    TranscriptFactory,
    TurnFactory,
    VerdictFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def today_sample():
    return DailySampleFactory(day=timezone.localdate())


def item(sample, reviews=1, verdicts=2):
    t = TranscriptFactory()
    for _ in range(verdicts):
        VerdictFactory(transcript=t)
    return SampleItemFactory(sample=sample, transcript=t, reviews_needed=reviews)


def test_claim_gives_the_held_call_first_then_the_next_one(today_sample, reviewer):
    a, b = item(today_sample), item(today_sample)
    first = sample_claim_next(reviewer=reviewer)
    assert first.item == a
    assert (
        sample_claim_next(reviewer=reviewer).pk == first.pk
    )  # still held: same call, lease renewed
    for v in a.transcript.verdicts.all():
        mark_set(reviewer=reviewer, verdict=v, correct=True)
    assignment_finish(reviewer=reviewer, transcript=a.transcript)
    assert sample_claim_next(reviewer=reviewer).item == b
    assert sample_claim_next(reviewer=reviewer).item == b


def test_two_reviewers_never_hold_the_same_call(today_sample, make_user):
    item(today_sample), item(today_sample)
    r1, r2, r3 = make_user("reviewer"), make_user("reviewer"), make_user("reviewer")
    a1, a2 = sample_claim_next(reviewer=r1), sample_claim_next(reviewer=r2)
    assert a1.item != a2.item
    assert sample_claim_next(reviewer=r3) is None


def test_lapsed_lease_returns_the_call(today_sample, make_user, settings):
    settings.DOCKET_LEASE_MINUTES = 30
    it = item(today_sample)
    r1, r2 = make_user("reviewer"), make_user("reviewer")
    a1 = sample_claim_next(reviewer=r1)
    assert sample_claim_next(reviewer=r2) is None
    Assignment.objects.filter(pk=a1.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    a2 = sample_claim_next(reviewer=r2)
    assert a2.item == it and a2.reviewer == r2
    assert a2.lease_expires_at > timezone.now() + timedelta(minutes=29)


def test_items_needing_k_reviewers_and_never_the_same_call_twice(today_sample, make_user):
    it = item(today_sample, reviews=2)
    r1, r2, r3 = make_user("reviewer"), make_user("reviewer"), make_user("reviewer")
    assert sample_claim_next(reviewer=r1).item == it
    assert sample_claim_next(reviewer=r2).item == it
    assert sample_claim_next(reviewer=r3) is None
    # The same call sampled again on another day is not given to someone who already had it.
    other_day = DailySampleFactory(day=timezone.localdate() - timedelta(days=1))
    SampleItemFactory(sample=other_day, transcript=it.transcript)
    for v in it.transcript.verdicts.all():
        mark_set(reviewer=r1, verdict=v, correct=True)
    assignment_finish(reviewer=r1, transcript=it.transcript)
    assert sample_claim_next(reviewer=r1) is None
    assert sample_claim_next(reviewer=r3).item.sample == other_day


def test_skip_gives_the_call_to_someone_else_not_back_to_the_skipper(today_sample, make_user):
    it = item(today_sample)
    r1, r2 = make_user("reviewer"), make_user("reviewer")
    sample_claim_next(reviewer=r1)
    assignment_skip(reviewer=r1, transcript=it.transcript)
    assert sample_claim_next(reviewer=r1) is None
    assert sample_claim_next(reviewer=r2).item == it


def test_finish_only_when_every_verdict_is_marked(today_sample, reviewer):
    it = item(today_sample, verdicts=3)
    VerdictFactory(transcript=it.transcript, error="timeout")  # errored: not markable, not needed
    sample_claim_next(reviewer=reviewer)
    verdicts = list(it.transcript.verdicts.filter(error=""))
    mark_set(reviewer=reviewer, verdict=verdicts[0], correct=True)
    mark_set(reviewer=reviewer, verdict=verdicts[1], correct=False, note="asked one")
    with pytest.raises(DomainError, match="1 verdict without your mark"):
        assignment_finish(reviewer=reviewer, transcript=it.transcript)
    mark_set(reviewer=reviewer, verdict=verdicts[2], correct=True)
    done = assignment_finish(reviewer=reviewer, transcript=it.transcript)
    assert done.finished_at is not None
    assert (
        assignment_finish(reviewer=reviewer, transcript=it.transcript).finished_at
        == done.finished_at
    )


def test_finish_needs_a_held_call(today_sample, reviewer):
    it = item(today_sample)
    with pytest.raises(DomainError, match="not held by you"):
        assignment_finish(reviewer=reviewer, transcript=it.transcript)


def test_marks_are_idempotent_changeable_and_undoable(today_sample, reviewer):
    it = item(today_sample, verdicts=1)
    a = sample_claim_next(reviewer=reviewer)
    v = it.transcript.verdicts.get()
    m1, _ = mark_set(reviewer=reviewer, verdict=v, correct=True)
    m2, _ = mark_set(reviewer=reviewer, verdict=v, correct=True)
    assert m1.pk == m2.pk and Mark.objects.count() == 1 and m2.assignment == a
    m3, _ = mark_set(reviewer=reviewer, verdict=v, correct=False, note="two\nlines  here")
    assert m3.pk == m1.pk and not m3.correct and m3.note == "two lines here"
    assert mark_undo(reviewer=reviewer, verdict=v) is True
    assert not Mark.objects.exists()
    assert mark_undo(reviewer=reviewer, verdict=v) is False


def test_errored_verdicts_cannot_be_marked_and_marks_outside_the_sample_have_no_assignment(
    reviewer,
):
    with pytest.raises(DomainError, match="errored"):
        mark_set(reviewer=reviewer, verdict=VerdictFactory(error="judge timeout"), correct=True)
    m, _ = mark_set(reviewer=reviewer, verdict=VerdictFactory(), correct=False)
    assert m.assignment is None


def test_progress_for_the_reviewer_and_the_team(today_sample, make_user):
    a, _, _ = item(today_sample, verdicts=1), item(today_sample), item(today_sample)
    r1, r2 = make_user("reviewer"), make_user("reviewer")
    assert progress_today(reviewer=r1)["team"].left == 3
    sample_claim_next(reviewer=r1)
    mark_set(reviewer=r1, verdict=a.transcript.verdicts.get(), correct=True)
    assignment_finish(reviewer=r1, transcript=a.transcript)
    sample_claim_next(reviewer=r2)  # holds b
    p1, p2 = progress_today(reviewer=r1), progress_today(reviewer=r2)
    assert (p1["mine"].done, p1["mine"].left) == (1, 1)  # only c is open to r1
    assert (p2["mine"].done, p2["mine"].left) == (0, 2)  # b held + c
    assert (p1["team"].done, p1["team"].left) == (1, 2)


def test_issue_rows_get_sequential_numbers_and_validate(reviewer):
    t = TranscriptFactory()
    TurnFactory(transcript=t, index=0)
    TurnFactory(transcript=t, index=1)
    r1 = issue_row_create(
        reporter=reviewer,
        transcript=t,
        turn=1,
        what="talks over",
        severity="major",
        audio_only=True,
    )
    r2 = issue_row_create(
        reporter=reviewer, transcript=t, turn=None, what="long hold", severity="minor"
    )
    assert (r1.number, r2.number) == (1, 2)
    assert r1.audio_only and r1.events.get().kind == "filed"
    with pytest.raises(DomainError, match="no turn 7"):
        issue_row_create(reporter=reviewer, transcript=t, turn=7, what="x", severity="minor")
    with pytest.raises(DomainError, match="severity"):
        issue_row_create(reporter=reviewer, transcript=t, turn=0, what="x", severity="awful")
    with pytest.raises(DomainError, match="what"):
        issue_row_create(reporter=reviewer, transcript=t, turn=0, what="  ", severity="minor")


def test_marking_keeps_the_call_held(today_sample, reviewer, settings):
    settings.DOCKET_LEASE_MINUTES = 30
    it = item(today_sample, verdicts=1)
    a = sample_claim_next(reviewer=reviewer)
    Assignment.objects.filter(pk=a.pk).update(
        lease_expires_at=timezone.now() + timedelta(minutes=5)
    )
    mark_set(reviewer=reviewer, verdict=it.transcript.verdicts.get(), correct=True)
    a.refresh_from_db()
    assert a.lease_expires_at > timezone.now() + timedelta(minutes=29)


def test_review_page_puts_verdicts_beside_their_turns_and_shows_only_my_marks(
    today_sample, make_user
):
    from labeling.selectors.queue import review_page_data

    it = item(today_sample, verdicts=0)
    t = it.transcript
    for i, (speaker, phase) in enumerate(
        [("agent", "opening"), ("user", "opening"), ("tool", "asking")]
    ):
        TurnFactory(
            transcript=t,
            index=i,
            speaker=speaker,
            phase=phase,
            start_ms=i * 1000 if i < 2 else None,
        )
    at_turn = VerdictFactory(transcript=t, flagged=True, turn=1, turns=[1])
    whole = VerdictFactory(transcript=t, flagged=False)
    dangling = VerdictFactory(
        transcript=t, flagged=True, turn=9, turns=[9]
    )  # cites a turn the call lacks
    me, other = make_user("reviewer"), make_user("reviewer")
    a = sample_claim_next(reviewer=me)
    mark_set(reviewer=other, verdict=whole, correct=False)
    mark_set(reviewer=me, verdict=at_turn, correct=True)
    page = review_page_data(reviewer=me, transcript=t, assignment=a)
    assert [v.pk for v in page.turns[1].verdicts_here] == [at_turn.pk]
    assert {v.pk for v in page.top_verdicts} == {whole.pk, dangling.pk}
    assert (
        next(v for v in page.top_verdicts if v.pk == whole.pk).my_mark is None
    )  # not the other's mark
    assert (page.marked, page.markable) == (1, 3)
    assert [x.phase_starts for x in page.turns] == [True, False, True]
    # The timeline's bars and length: timed turns only (the factory's end_ms, if any).
    assert page.duration_ms == max((x.end_ms or x.start_ms or 0) for x in page.turns)
    assert [x.span_ms is None for x in page.turns][2] is True
    assert [x.speaker_label for x in page.turns] == ["Agent", "User", "Tool"]
