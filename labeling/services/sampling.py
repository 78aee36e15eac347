"""Drawing the daily sample, and putting a call in the queue by hand.

The design, for a day D (population U: the N calls that started in the window before D began):

1. Uniform part: a simple random sample S1 of n_u calls from U.
2. Judge checks, m of them, drawn first from D, then from F:
   D is the set of the d calls in U on which an untrusted rule version and the version it replaces
   disagree (one flagged, the other not, by the same judge, neither errored): where a rule's new
   text changed the judge's answer, the most informative calls to mark it on. The version it
   replaces is the one its rule-workbench estimate came from, else the one numbered just below.
   F is the set of the f calls in U \\ D on which the judge flagged an untrusted rule version.
   A simple random sample S2 of min(m, |D \\ S1|) calls is drawn from D \\ S1, then a simple random
   sample S3 of min(m - |S2|, |F \\ S1|) calls from F \\ S1.

n = n_u + m is the configured size; m = round(n * DOCKET_SAMPLE_JUDGE_SHARE * untrusted share),
capped at d + f, where the untrusted share is the fraction of the rule versions judged in the
window that are untrusted. So the judge-check part shrinks to nothing as rules get gated; the
uniform part then keeps the judge honest on every rule.

Inclusion probabilities (what calibration weights by 1/p):

- a call outside D and F is only in S1:  p = n_u / N
- a call c in D is in S1, or, missing S1, in S2. Given c is not in S1, S1 is an SRS of n_u from
  the other N - 1 calls, so the number X of other D calls in it is hypergeometric
  (population N - 1, successes d - 1, draws n_u), and c is then one of the d - X calls left in D,
  of which min(m, d - X) are drawn:
      p = n_u / N + (1 - n_u / N) * E[min(1, m / (d - X))]
  computed exactly by summing the hypergeometric distribution.
- a call c in F is in S1, or, missing S1, in S3. Given c is not in S1, the numbers X of D calls
  and Y of other F calls in S1 are jointly (multivariate) hypergeometric; S2 then takes
  min(m, d - X) calls, leaving max(0, m - (d - X)) for the f - Y calls left in F:
      p = n_u / N + (1 - n_u / N) * E[min(1, max(0, m - (d - X)) / (f - Y))]
  summed exactly over the joint distribution (at most n_u^2 terms). Without D (d = 0) both
  formulas are the single-stratum one.

The probabilities sum to the expected sample size. The draw is seeded by the date and the calls
are taken in external-id order, so the same inputs give the same sample.
"""

import logging
import random
from datetime import date
from math import comb

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.parsing import MAX_INT32
from evals.catalog.models import Transcript
from evals.judging.models import Verdict
from labeling.models import DailySample, SampleItem
from labeling.selectors.sampling import (
    flagged_untrusted_filter,
    rule_versions_untrusted,
    sample_window,
    transcripts_in_window,
    transcripts_versions_disagree,
)
from labeling.services.sample_counts import sample_item_counts_compact_on_commit

logger = logging.getLogger(__name__)


def judge_check_probability(*, population: int, flagged: int, uniform: int, checks: int) -> float:
    """Return the inclusion probability of a call of the first judge-check stratum (D, or F when
    there is no D) under the draw of the module doc: the second stratum's formula with no stratum
    before it."""
    return judge_check_second_probability(
        population=population, first=0, second=flagged, uniform=uniform, checks=checks
    )


def judge_check_second_probability(
    *, population: int, first: int, second: int, uniform: int, checks: int
) -> float:
    """Return the inclusion probability of a call of the second judge-check stratum (F), drawn
    after the first (D) under the three-stage draw (see module doc)."""
    N, d, f, n_u, m = population, first, second, uniform, checks
    if N <= 0 or f <= 0:
        return 0.0
    n_u = min(n_u, N)
    p1 = n_u / N
    if m <= 0 or p1 >= 1:
        return p1
    others = N - 1 - d - (f - 1)  # calls in neither stratum, c left out
    total = comb(N - 1, n_u)
    expected = 0.0
    for x in range(max(0, d - m + 1), min(d, n_u) + 1):  # S2 leaves room only when d - x < m
        left = m - (d - x)
        for y in range(max(0, n_u - x - others), min(f - 1, n_u - x) + 1):
            weight = comb(d, x) * comb(f - 1, y) * comb(others, n_u - x - y)
            expected += (weight / total) * min(1.0, left / (f - y))
    return min(1.0, p1 + (1 - p1) * expected)


def _seed(day: date) -> str:
    return f"docket-daily-sample:{day.isoformat()}"


@transaction.atomic
def daily_sample_make(
    *, day: date, size: int | None = None, window_hours: int | None = None
) -> tuple[DailySample, bool]:
    """Draw the day's sample once (seeded by the date); making it again returns the same sample.
    Return (the sample, whether this call drew it).

    The window defaults to DOCKET_SAMPLE_WINDOW_HOURS before the day began.
    """
    size = settings.DOCKET_SAMPLE_SIZE if size is None else size
    if not 1 <= size <= MAX_INT32:
        raise ValueError(f"size: must be from 1 to {MAX_INT32}, got {size}")
    sample = _sample_locked(day=day, size=size)
    if sample.params.get("drawn"):
        return sample, False

    start, end = sample_window(day=day, hours=window_hours)
    population = list(transcripts_in_window(start=start, end=end).values_list("pk", "external_id"))
    population.sort(key=lambda row: row[1])
    ids = [pk for pk, _ in population]
    N = len(ids)
    flagged_ids = set(
        transcripts_in_window(start=start, end=end)
        .filter(flagged_untrusted_filter())
        .values_list("pk", flat=True)
    )
    disagree_ids = transcripts_versions_disagree(start=start, end=end)
    flagged_ids -= disagree_ids
    d, f = len(disagree_ids), len(flagged_ids)
    judged = set(
        Verdict.objects.filter(transcript_id__in=ids, error="")
        .values_list("rule_version_id", flat=True)
        .distinct()
    )
    untrusted = set(rule_versions_untrusted().filter(pk__in=judged).values_list("pk", flat=True))
    untrusted_share = len(untrusted) / len(judged) if judged else 0.0
    m = min(d + f, round(size * settings.DOCKET_SAMPLE_JUDGE_SHARE * untrusted_share))
    n_u = min(size - m, N)

    rng = random.Random(_seed(day))
    uniform = rng.sample(ids, n_u)
    chosen = set(uniform)
    remaining = [pk for pk in ids if pk in disagree_ids and pk not in chosen]
    first = rng.sample(remaining, min(m, len(remaining)))
    remaining = [pk for pk in ids if pk in flagged_ids and pk not in chosen]
    checks = first + rng.sample(remaining, min(m - len(first), len(remaining)))

    p_uniform = n_u / N if N else 0.0
    p_disagree = judge_check_probability(population=N, flagged=d, uniform=n_u, checks=m)
    p_flagged = judge_check_second_probability(
        population=N, first=d, second=f, uniform=n_u, checks=m
    )
    rows = [(pk, SampleItem.Reason.UNIFORM) for pk in uniform] + [
        (pk, SampleItem.Reason.JUDGE_CHECK) for pk in checks
    ]

    def probability(pk: int) -> float:
        if pk in disagree_ids:
            return p_disagree
        return p_flagged if pk in flagged_ids else p_uniform

    rng.shuffle(rows)
    already = set(
        sample.items.values_list("transcript_id", flat=True)
    )  # queued by hand before the draw
    reviews = settings.DOCKET_REVIEWS_PER_CALL
    SampleItem.objects.bulk_create(
        [
            SampleItem(
                sample=sample,
                transcript_id=pk,
                reason=reason,
                inclusion_probability=probability(pk),
                reviews_needed=reviews,
            )
            for pk, reason in rows
            if pk not in already
        ]
    )
    sample_item_counts_compact_on_commit()
    sample.size = size
    sample.params = {
        **sample.params,
        "drawn": True,
        "seed": _seed(day),
        "design": "uniform SRS + judge-check SRS from the calls not drawn uniformly: first where "
        "an untrusted version and the one it replaces disagree, then flagged-untrusted",
        "window_start": start.isoformat(),
        "window_end": end.isoformat(),
        "population": N,
        "versions_disagree": d,
        "flagged_untrusted": f,
        "rule_versions_judged": len(judged),
        "rule_versions_untrusted": len(untrusted),
        "judge_share": settings.DOCKET_SAMPLE_JUDGE_SHARE * untrusted_share,
        "uniform": len(uniform),
        "judge_checks_planned": m,
        "judge_checks": len(checks),
        "judge_checks_disagree": len(first),
        "p_uniform": p_uniform,
        "p_disagree": p_disagree,
        "p_flagged": p_flagged,
        "expected_size": (N - d - f) * p_uniform + d * p_disagree + f * p_flagged,
        "reviews_per_call": reviews,
    }
    sample.save(update_fields=["size", "params"])
    logger.info(
        "daily_sample_made",
        extra={
            "day": day.isoformat(),
            "population": N,
            "uniform": len(uniform),
            "judge_checks": len(checks),
        },
    )
    return sample, True


def _sample_locked(*, day: date, size: int) -> DailySample:
    """Return the day's sample row, created if missing, locked for this transaction."""
    try:
        with transaction.atomic():
            DailySample.objects.get_or_create(day=day, defaults={"size": size})
    except IntegrityError:
        pass  # made at the same moment by someone else: theirs stands
    return DailySample.objects.select_for_update().get(day=day)


@transaction.atomic
def sample_item_queue_by_hand(
    *, transcript: Transcript, added_by, day: date | None = None
) -> SampleItem:
    """Put a call in the day's queue by hand (probability
    1); a call already queued stays as it is."""
    day = day or timezone.localdate()
    sample = _sample_locked(day=day, size=settings.DOCKET_SAMPLE_SIZE)
    item, created = SampleItem.objects.get_or_create(
        sample=sample,
        transcript=transcript,
        defaults={
            "reason": SampleItem.Reason.MANUAL,
            "inclusion_probability": 1.0,
            "reviews_needed": settings.DOCKET_REVIEWS_PER_CALL,
            "added_by": added_by,
        },
    )
    if created:
        sample_item_counts_compact_on_commit()
        logger.info(
            "sample_item_queued_by_hand",
            extra={"day": day.isoformat(), "transcript_id": transcript.pk},
        )
    return item
