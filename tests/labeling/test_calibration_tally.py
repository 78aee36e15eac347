"""The verdict tally behind the calibration page stays equal to a fresh recount from the marks,
whoever writes the marks, settlements, sample items and verdicts it depends on."""

import datetime as dt
import threading

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import DomainError
from labeling.models import Assignment, Mark, SampleItem, Settlement, TallyCell, VerdictTally
from labeling.selectors import calibration as cal
from labeling.services.marks import mark_set, mark_undo
from labeling.services.settlements import verdict_settle
from labeling.services.tally import verdict_tally_differences, verdict_tally_rebuild
from labeling.services.tally_cells import tally_cells_compact
from tests.factories import (
    DailySampleFactory,
    JudgeFactory,
    RuleVersionFactory,
    SampleItemFactory,
    TranscriptFactory,
    VerdictFactory,
)

CELL = {"fn": 0, "tn": 1, "fp": 2, "tp": 3}
CELL_KEY = ("rule_version_id", "judge_id", "cell", "pair", "outside")


def recount() -> dict[int, tuple]:
    """Each marked verdict's tally, computed in Python
    from the rows themselves (independent of the SQL)."""
    out = {}
    marks_by: dict[int, list[Mark]] = {}
    for m in Mark.objects.select_related("assignment__item", "verdict").order_by("id"):
        marks_by.setdefault(m.verdict_id, []).append(m)
    settled = dict(Settlement.objects.values_list("verdict_id", "correct"))
    for vid, marks in marks_by.items():
        v = marks[0].verdict
        n, r = len(marks), sum(m.correct for m in marks)
        if vid in settled:
            truth = int(settled[vid])
        else:
            truth = 1 if 2 * r > n else 0 if 2 * r < n else None
        probs = [m.assignment.item.inclusion_probability for m in marks if m.assignment is not None]
        if v.error:
            cell = 5
        elif truth is None:
            cell = 4
        else:
            cell = int(v.flagged) * 2 + truth
        pair = 1 + 2 * marks[0].correct + marks[-1].correct if n >= 2 and not v.error else 0
        out[vid] = (
            v.rule_version_id,
            v.judge_id,
            n,
            r,
            truth,
            cell,
            pair,
            int(not probs),
            1 / max(probs) if probs else 1.0,
        )
    return out


def stored() -> dict[int, tuple]:
    return {
        t.verdict_id: (
            t.rule_version_id,
            t.judge_id,
            t.n_marks,
            t.n_right,
            t.truth,
            t.cell,
            t.pair,
            t.outside,
            t.weight,
        )
        for t in VerdictTally.objects.all()
    }


def assert_tally_right():
    expected, got = recount(), stored()
    assert got.keys() == expected.keys()
    for vid, row in expected.items():
        assert got[vid][:-1] == row[:-1], vid
        assert got[vid][-1] == pytest.approx(row[-1]), vid
    assert verdict_tally_differences() == 0
    # The page's aggregate over the tally equals the same aggregate straight from the marks.
    fast, slow = cal.calibration_counts(), cal.calibration_counts(from_marks=True)
    assert fast.keys() == slow.keys()
    for key, c in fast.items():
        s = slow[key]
        assert (c.tp, c.fp, c.fn, c.tn, c.waiting, c.errored, c.outside_sample, c.pairs) == (
            s.tp,
            s.fp,
            s.fn,
            s.tn,
            s.waiting,
            s.errored,
            s.outside_sample,
            s.pairs,
        )
        assert c.w == pytest.approx(s.w) and c.w2 == pytest.approx(s.w2)
    # Folding the cells' delta rows leaves one row per cell and the same figures.
    tally_cells_compact()
    keys = list(TallyCell.objects.values_list(*CELL_KEY))
    assert len(keys) == len(set(keys)) and TallyCell.objects.filter(n__lte=0).count() == 0
    assert verdict_tally_differences() == 0
    assert cal.calibration_counts().keys() == fast.keys()


op = st.one_of(
    st.tuples(st.just("mark"), st.integers(0, 3), st.integers(0, 3), st.booleans()),
    st.tuples(st.just("undo"), st.integers(0, 3), st.integers(0, 3)),
    st.tuples(st.just("settle"), st.integers(0, 3), st.booleans()),
    st.tuples(st.just("probability"), st.sampled_from([0.02, 0.25, 0.5, 1.0])),
    st.tuples(st.just("drop_assignment"), st.integers(0, 3)),
)


@pytest.mark.django_db
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(op, min_size=1, max_size=25))
def test_random_marks_undos_and_settlements_keep_the_tally_equal_to_a_recount(make_user, ops):
    with transaction.atomic():
        reviewers = [make_user("reviewer") for _ in range(4)]
        lead = make_user("lead")
        rv, judge = RuleVersionFactory(), JudgeFactory()
        t1, t2 = TranscriptFactory(), TranscriptFactory()
        verdicts_rv2 = RuleVersionFactory()
        verdicts = [
            VerdictFactory(transcript=t1, rule_version=rv, judge=judge, flagged=True, turn=0),
            VerdictFactory(transcript=t1, rule_version=verdicts_rv2, judge=judge),
            VerdictFactory(transcript=t2, rule_version=rv, judge=judge, flagged=True, turn=0),
            VerdictFactory(transcript=t2, rule_version=verdicts_rv2, judge=judge),
        ]
        # Reviewers 0 and 1 work call 1 through today's sample; the others mark outside it.
        item = SampleItemFactory(
            sample=DailySampleFactory(day=timezone.localdate()),
            transcript=t1,
            inclusion_probability=0.5,
        )
        now = timezone.now()
        for r in reviewers[:2]:
            Assignment.objects.create(
                item=item, reviewer=r, claimed_at=now, lease_expires_at=now + dt.timedelta(hours=1)
            )
        for o in ops:
            if o[0] == "mark":
                mark_set(reviewer=reviewers[o[1]], verdict=verdicts[o[2]], correct=o[3])
            elif o[0] == "undo":
                mark_undo(reviewer=reviewers[o[1]], verdict=verdicts[o[2]])
            elif o[0] == "settle":
                try:
                    verdict_settle(
                        verdict=verdicts[o[1]], actor=lead, correct=o[2], reason="listened"
                    )
                except DomainError:
                    assert not Mark.objects.filter(verdict=verdicts[o[1]]).exists()
            elif o[0] == "probability":
                SampleItem.objects.filter(pk=item.pk).update(inclusion_probability=o[1])
            else:
                Assignment.objects.filter(
                    item=item, reviewer=reviewers[o[1]]
                ).delete()  # marks keep, unsampled
        assert_tally_right()
        transaction.set_rollback(True)


@pytest.mark.django_db
def test_writes_outside_the_services_keep_the_tally_right(make_user):
    reviewers = [make_user("reviewer") for _ in range(3)]
    rv, judge = RuleVersionFactory(), JudgeFactory()
    verdicts = [
        VerdictFactory(
            rule_version=rv, judge=judge, flagged=i % 2 == 0, turn=0 if i % 2 == 0 else None
        )
        for i in range(6)
    ]
    Mark.objects.bulk_create(
        [
            Mark(verdict=v, reviewer=r, correct=(v.pk + r.pk) % 3 == 0)
            for v in verdicts
            for r in reviewers[:2]
        ]
    )
    assert VerdictTally.objects.count() == 6
    assert_tally_right()
    Mark.objects.filter(verdict=verdicts[0]).update(correct=False)
    Settlement.objects.create(verdict=verdicts[1], correct=True, settled_by=reviewers[2])
    Mark.objects.create(verdict=verdicts[2], reviewer=reviewers[2], correct=True)
    type(verdicts[3]).objects.filter(pk=verdicts[3].pk).update(
        error="timeout"
    )  # a verdict re-judged as errored
    assert_tally_right()
    assert VerdictTally.objects.get(verdict=verdicts[3]).cell == 5
    verdicts[4].delete()  # cascades to its marks and its tally row
    reviewers[1].delete()  # cascades to that reviewer's marks
    Settlement.objects.filter(verdict=verdicts[1]).delete()
    assert_tally_right()
    assert not VerdictTally.objects.filter(verdict_id=verdicts[4].pk).exists()


@pytest.mark.django_db
def test_rebuild_repairs_a_drifted_tally(reviewer, capsys):
    v = VerdictFactory(flagged=True, turn=0)
    mark_set(reviewer=reviewer, verdict=v, correct=True)
    assert VerdictTally.objects.get(verdict=v).cell == 3  # TP
    VerdictTally.objects.filter(verdict=v).update(cell=2)  # drift by hand
    assert verdict_tally_differences() == 1
    with pytest.raises(SystemExit):
        call_command("verdict_tally_rebuild", "--check")
    call_command("verdict_tally_rebuild")
    assert "rebuilt: 1 marked verdicts" in capsys.readouterr().out
    assert VerdictTally.objects.get(verdict=v).cell == 3
    assert verdict_tally_rebuild() == 1 and verdict_tally_differences() == 0


@pytest.mark.django_db
def test_tally_cells_fold_after_the_mark_services_and_a_drifted_cell_is_caught(
    make_user, django_capture_on_commit_callbacks, capsys
):
    reviewers = [make_user("reviewer") for _ in range(2)]
    lead = make_user("lead")
    rv, other, judge = RuleVersionFactory(), RuleVersionFactory(), JudgeFactory()
    verdicts = [
        VerdictFactory(rule_version=rv, judge=judge, flagged=i % 2 == 0, turn=None if i % 2 else 0)
        for i in range(4)
    ]
    Mark.objects.create(
        verdict=VerdictFactory(rule_version=other, judge=judge), reviewer=reviewers[0], correct=True
    )
    with django_capture_on_commit_callbacks(execute=True):
        for v in verdicts:
            for r in reviewers:
                mark_set(reviewer=r, verdict=v, correct=(v.pk + r.pk) % 2 == 0)
        mark_undo(reviewer=reviewers[1], verdict=verdicts[0])
        verdict_settle(verdict=verdicts[1], actor=lead, correct=False, reason="listened")
    # Each mark rewrote its verdict's tally row (a delta row out, one in); folded after commit,
    # each cell is one row again.
    cells = list(TallyCell.objects.values_list(*CELL_KEY, "n"))
    assert len(cells) == len({k[:-1] for k in cells}) and min(k[-1] for k in cells) > 0
    assert sum(k[-1] for k in cells if k[0] == rv.pk) == 4
    assert verdict_tally_differences() == 0
    TallyCell.objects.create(
        rule_version_id=rv.pk, judge_id=judge.pk, cell=3, pair=0, outside=1, n=1, w=1.0, w2=1.0
    )
    assert verdict_tally_differences() == 1
    with pytest.raises(SystemExit):
        call_command("verdict_tally_rebuild", "--check")
    call_command("verdict_tally_rebuild")
    assert verdict_tally_differences() == 0
    assert "rebuilt: 5 marked verdicts" in capsys.readouterr().out


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("n", [2, 8])
def test_concurrent_marks_on_one_verdict_leave_the_tally_right(make_user, n):
    reviewers = [make_user("reviewer") for _ in range(n)]
    verdict = VerdictFactory(flagged=True, turn=0)
    barrier = threading.Barrier(n)
    errors = []

    def work(i, correct, undo=False):
        try:
            barrier.wait()
            if undo:
                mark_undo(reviewer=reviewers[i], verdict=verdict)
            else:
                mark_set(reviewer=reviewers[i], verdict=verdict, correct=correct)
        except Exception as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)
        finally:
            connection.close()

    def run(jobs):
        threads = [threading.Thread(target=work, args=job) for job in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors

    run([(i, i % 2 == 1) for i in range(n)])  # everyone marks at once: a tie
    tally = VerdictTally.objects.get(verdict=verdict)
    assert (tally.n_marks, tally.n_right, tally.cell) == (n, n // 2, 4)
    assert_tally_right()
    # Half undo while the other half change their minds, all at once.
    run([(i, True, i % 2 == 1) for i in range(n)])
    tally = VerdictTally.objects.get(verdict=verdict)
    assert (tally.n_marks, tally.n_right, tally.cell) == (n // 2, n // 2, 3)
    assert_tally_right()


def test_the_judge_filter_lists_the_judges_with_a_marked_verdict_and_follows_undo(reviewer):
    marked, unmarked, undone = JudgeFactory(), JudgeFactory(), JudgeFactory()
    kept = VerdictFactory(judge=marked, flagged=False)
    VerdictFactory(judge=unmarked, flagged=True)
    gone = VerdictFactory(judge=undone, flagged=False)
    mark_set(reviewer=reviewer, verdict=kept, correct=True)
    mark_set(reviewer=reviewer, verdict=gone, correct=False)
    mark_undo(reviewer=reviewer, verdict=gone)
    expected = {
        j.pk for j in (marked, unmarked, undone) if Mark.objects.filter(verdict__judge=j).exists()
    }
    assert {j.pk for j in cal.calibration_judges()} == expected == {marked.pk}
