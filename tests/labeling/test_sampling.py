import random
from datetime import UTC, date, datetime, timedelta

import pytest
from django.core.management import call_command

from evals.rules.models import RuleVersion
from labeling.models import DailySample, SampleItem
from labeling.selectors.sampling import rule_versions_untrusted
from labeling.services.sampling import (
    daily_sample_make,
    judge_check_probability,
    sample_item_queue_by_hand,
)
from tests.factories import RuleVersionFactory, TranscriptFactory, VerdictFactory

pytestmark = pytest.mark.django_db
DAY = date(2026, 11, 29)


def at(hours_before_day: float) -> datetime:
    return datetime(2026, 11, 29, tzinfo=UTC) - timedelta(hours=hours_before_day)


def make_calls(n, *, flagged_every=0, rv=None, start=0):
    calls = []
    for i in range(n):
        t = TranscriptFactory(external_id=f"call-{start + i:05d}", started_at=at(1 + (i % 20)))
        if rv is not None:
            VerdictFactory(
                transcript=t,
                rule_version=rv,
                flagged=bool(flagged_every and i % flagged_every == 0),
                turn=None,
            )
        calls.append(t)
    return calls


def test_same_day_gives_the_same_sample_and_making_twice_does_not_duplicate(settings):
    settings.DOCKET_SAMPLE_SIZE = 10
    make_calls(40)
    first, _ = daily_sample_make(day=DAY)
    ids = list(first.items.order_by("pk").values_list("transcript__external_id", flat=True))
    again, _ = daily_sample_make(day=DAY, size=30)
    assert again.pk == first.pk
    assert list(again.items.order_by("pk").values_list("transcript__external_id", flat=True)) == ids
    assert DailySample.objects.count() == 1 and SampleItem.objects.count() == 10

    # Drawn afresh from the same inputs (another database), the same calls come out.
    DailySample.objects.all().delete()
    redrawn, _ = daily_sample_make(day=DAY)
    assert sorted(redrawn.items.values_list("transcript__external_id", flat=True)) == sorted(ids)


def test_another_day_draws_differently(settings):
    settings.DOCKET_SAMPLE_SIZE = 10
    settings.DOCKET_SAMPLE_WINDOW_HOURS = 24 * 5
    make_calls(60)
    a = set(daily_sample_make(day=DAY)[0].items.values_list("transcript_id", flat=True))
    b = set(
        daily_sample_make(day=DAY + timedelta(days=1))[0].items.values_list(
            "transcript_id", flat=True
        )
    )
    assert a != b


def test_window_uses_started_at_then_imported_at(settings):
    settings.DOCKET_SAMPLE_SIZE = 50
    inside = TranscriptFactory(started_at=at(3))
    TranscriptFactory(started_at=at(30))  # before the window
    TranscriptFactory(started_at=at(-2))  # during the day itself
    no_start = TranscriptFactory(started_at=None)  # imported now: counts from its import
    sample, _ = daily_sample_make(day=DAY)
    assert set(sample.items.values_list("transcript_id", flat=True)) == {inside.pk}
    today, _ = daily_sample_make(day=date.today() + timedelta(days=1))
    assert no_start.pk in set(today.items.values_list("transcript_id", flat=True))


def test_uniform_probability_is_n_over_N(settings):
    settings.DOCKET_SAMPLE_SIZE = 8
    make_calls(32)
    sample, _ = daily_sample_make(day=DAY)
    probs = set(sample.items.values_list("inclusion_probability", flat=True))
    assert probs == {8 / 32}
    assert set(sample.items.values_list("reason", flat=True)) == {"uniform"}


def test_judge_checks_oversample_flagged_untrusted_calls_and_probabilities_are_right(settings):
    settings.DOCKET_SAMPLE_SIZE = 10
    settings.DOCKET_SAMPLE_JUDGE_SHARE = 0.4
    rv = RuleVersionFactory(status="candidate")
    make_calls(50, flagged_every=5, rv=rv)  # 10 flagged calls
    sample, _ = daily_sample_make(day=DAY)
    p = sample.params
    assert p["population"] == 50 and p["flagged_untrusted"] == 10
    assert p["judge_checks_planned"] == 4 and p["uniform"] == 6
    reasons = list(sample.items.values_list("reason", flat=True))
    assert reasons.count("judge_check") == p["judge_checks"] >= 1
    flagged = {f"call-{i:05d}" for i in range(0, 50, 5)}
    for item in sample.items.select_related("transcript"):
        if item.transcript.external_id in flagged:
            assert item.inclusion_probability == pytest.approx(p["p_flagged"])
        else:
            assert item.inclusion_probability == pytest.approx(6 / 50)
    assert p["p_flagged"] > 6 / 50
    # The probabilities over the whole population add up to the expected sample size.
    assert 40 * (6 / 50) + 10 * p["p_flagged"] == pytest.approx(p["expected_size"])
    assert p["expected_size"] <= 10


@pytest.mark.parametrize(
    "N,f,n_u,m", [(12, 4, 3, 2), (10, 6, 4, 3), (8, 2, 5, 1), (15, 15, 4, 6), (9, 3, 0, 2)]
)
def test_judge_check_probability_matches_simulation(N, f, n_u, m):
    p = judge_check_probability(population=N, flagged=f, uniform=n_u, checks=m)
    rng = random.Random(7)
    flagged = list(range(f))
    hits = 0
    runs = 40000
    for _ in range(runs):
        s1 = set(rng.sample(range(N), n_u))
        left = [c for c in flagged if c not in s1]
        s2 = set(rng.sample(left, min(m, len(left))))
        hits += 0 in s1 or 0 in s2
    assert p == pytest.approx(hits / runs, abs=0.012)


def test_judge_check_share_shrinks_as_rules_become_trusted(settings):
    settings.DOCKET_SAMPLE_SIZE = 10
    settings.DOCKET_SAMPLE_JUDGE_SHARE = 0.4
    rv = RuleVersionFactory(status="gated")
    make_calls(50, flagged_every=2, rv=rv)
    assert rv not in rule_versions_untrusted()
    sample, _ = daily_sample_make(day=DAY)
    assert sample.params["judge_checks"] == 0 and sample.params["uniform"] == 10
    assert set(sample.items.values_list("inclusion_probability", flat=True)) == {10 / 50}


def test_small_population_takes_everyone_with_probability_one(settings):
    settings.DOCKET_SAMPLE_SIZE = 20
    make_calls(5)
    sample, _ = daily_sample_make(day=DAY)
    assert sample.items.count() == 5
    assert set(sample.items.values_list("inclusion_probability", flat=True)) == {1.0}


def test_queue_by_hand_has_probability_one_and_survives_the_draw(settings, lead):
    settings.DOCKET_SAMPLE_SIZE = 40
    calls = make_calls(10)
    item = sample_item_queue_by_hand(transcript=calls[3], added_by=lead, day=DAY)
    assert (item.reason, item.inclusion_probability, item.added_by) == ("manual", 1.0, lead)
    assert sample_item_queue_by_hand(transcript=calls[3], added_by=lead, day=DAY).pk == item.pk
    sample, _ = daily_sample_make(day=DAY)
    assert sample.items.count() == 10
    assert sample.items.get(transcript=calls[3]).reason == "manual"


def test_make_sample_command(settings):
    settings.DOCKET_SAMPLE_SIZE = 3
    make_calls(9)
    from io import StringIO

    out = StringIO()
    call_command("make_sample", "--date", "2026-11-29", "--size", "4", stdout=out)
    assert "sample 2026-11-29: 4 calls (4 uniform" in out.getvalue()
    call_command("make_sample", "--date", "2026-11-29", stdout=out)
    assert SampleItem.objects.count() == 4
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--date"):
        call_command("make_sample", "--date", "29/11/2026")


def test_beat_schedule_draws_the_sample(settings):
    from labeling.tasks import daily_sample_make_task

    entry = settings.CELERY_BEAT_SCHEDULE["daily-sample"]
    assert entry["task"] == daily_sample_make_task.name == "labeling.tasks.daily_sample_make_task"
    assert entry["schedule"].hour == {settings.DOCKET_SAMPLE_HOUR}

    pk = daily_sample_make_task.delay("2026-11-29").get()
    assert DailySample.objects.get(pk=pk).day == DAY


def exact_probabilities(N, d, f, n_u, m):
    """Every first-stage draw enumerated, with fractions: the inclusion probability of a call of D
    (index 0) and of a call of F (index d) under the three-stage draw."""
    from fractions import Fraction
    from itertools import combinations
    from math import comb

    D, Fs = set(range(d)), set(range(d, d + f))
    p_d = p_f = Fraction(0)
    for s1 in combinations(range(N), n_u):
        s1 = set(s1)
        left_d, left_f = D - s1, Fs - s1
        k2 = min(m, len(left_d))
        k3 = min(m - k2, len(left_f))
        if d:
            p_d += 1 if 0 in s1 else (Fraction(k2, len(left_d)) if 0 in left_d else 0)
        if f:
            p_f += 1 if d in s1 else (Fraction(k3, len(left_f)) if d in left_f else 0)
    total = comb(N, n_u)
    return p_d / total, p_f / total


@pytest.mark.parametrize(
    "N,d,f,n_u,m",
    [
        (10, 2, 3, 3, 3),
        (9, 4, 2, 2, 3),
        (8, 1, 5, 4, 2),
        (7, 3, 3, 0, 4),
        (9, 5, 4, 3, 2),
        (6, 2, 4, 2, 6),
        (8, 0, 4, 3, 2),
        (10, 3, 0, 4, 2),
    ],
)
def test_both_judge_check_strata_probabilities_are_exact(N, d, f, n_u, m):
    from labeling.services.sampling import judge_check_second_probability

    exact_d, exact_f = exact_probabilities(N, d, f, n_u, m)
    assert judge_check_probability(population=N, flagged=d, uniform=n_u, checks=m) == pytest.approx(
        float(exact_d), abs=1e-12
    )
    assert judge_check_second_probability(
        population=N, first=d, second=f, uniform=n_u, checks=m
    ) == pytest.approx(float(exact_f), abs=1e-12)
    if d == 0:  # one stratum: the original formula
        assert judge_check_second_probability(
            population=N, first=0, second=f, uniform=n_u, checks=m
        ) == pytest.approx(judge_check_probability(population=N, flagged=f, uniform=n_u, checks=m))


def test_judge_checks_draw_first_where_a_new_version_and_the_one_it_replaces_disagree(settings):
    from evals.judging.models import Judge, Verdict

    settings.DOCKET_SAMPLE_SIZE = 10
    settings.DOCKET_SAMPLE_JUDGE_SHARE = 0.4
    v1 = RuleVersionFactory(status="gated", number=1)
    # Version 3 was saved from the workbench with version 1's marks carried over: it replaces v1
    # (not v2, a candidate nobody judged on these calls).
    RuleVersionFactory(rule=v1.rule, number=2, status="candidate")
    v3 = RuleVersionFactory(
        rule=v1.rule, number=3, status="candidate", estimate={"from_version": 1, "carried": True}
    )
    judge = Judge.objects.create(name="gpt-4o-mini/conduct-v1", kind="llm")
    other = Judge.objects.create(name="other/conduct-v1", kind="llm")
    calls = make_calls(60)
    disagree, flagged = set(), set()
    for i, t in enumerate(calls):
        new, old = i % 3 == 0, i % 4 == 0
        Verdict.objects.create(transcript=t, rule_version=v3, judge=judge, flagged=new, turn=None)
        Verdict.objects.create(transcript=t, rule_version=v1, judge=judge, flagged=old, turn=None)
        if i % 5 == 0:  # another judge's verdicts of v1 do not count against this judge's v3
            Verdict.objects.create(
                transcript=t, rule_version=v1, judge=other, flagged=not new, turn=None
            )
        if new != old:
            disagree.add(t.external_id)
        elif new:
            flagged.add(t.external_id)
    sample, _ = daily_sample_make(day=DAY)
    p = sample.params
    assert p["versions_disagree"] == len(disagree) == 25
    assert p["flagged_untrusted"] == len(flagged) == 5
    # Half the versions judged in the window are untrusted (v3, not the gated v1): 10 x 0.4 x 0.5.
    assert p["judge_checks_planned"] == 2 and p["uniform"] == 8
    # Every judge check comes from the disagreements while they last (25 > 2).
    checks = set(
        sample.items.filter(reason="judge_check").values_list("transcript__external_id", flat=True)
    )
    assert checks and checks <= disagree and p["judge_checks_disagree"] == len(checks)
    for item in sample.items.select_related("transcript"):
        e = item.transcript.external_id
        want = p["p_disagree"] if e in disagree else p["p_flagged"] if e in flagged else 8 / 60
        assert item.inclusion_probability == pytest.approx(want)
    assert p["p_disagree"] > p["p_flagged"] >= 8 / 60
    assert 30 * 8 / 60 + 25 * p["p_disagree"] + 5 * p["p_flagged"] == pytest.approx(
        p["expected_size"]
    )
    # Once the new version is gated it is trusted: no disagreement stratum.
    RuleVersion.objects.filter(pk=v3.pk).update(status="gated")
    DailySample.objects.all().delete()
    assert daily_sample_make(day=DAY)[0].params["versions_disagree"] == 0
