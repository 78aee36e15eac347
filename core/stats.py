"""Pure maths, the one home of every interval: proportions with Wilson intervals, weighting,
agreement, eligibility, means, percentiles and counts.

No Django imports: everything here takes plain numbers and returns plain numbers. A figure
whose denominator is zero is undefined and comes back as None, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054  # two-sided 95% normal quantile, as statsmodels uses

Interval = tuple[float, float]


def proportion(successes: float, n: float) -> float | None:
    """Return successes / n, or None when n is 0."""
    if n <= 0:
        return None
    return successes / n


def wilson_from_proportion(p: float | None, n: float, z: float = Z95) -> Interval | None:
    """Return the Wilson score interval for proportion
    p observed on n (possibly fractional) trials."""
    if p is None or n <= 0:
        return None
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p) / n + z2 / (4 * n * n), 0.0)) / denom
    low = 0.0 if p <= 0 else max(0.0, centre - half)
    high = 1.0 if p >= 1 else min(1.0, centre + half)
    return (low, high)


def wilson_interval(successes: float, n: float, z: float = Z95) -> Interval | None:
    """Return the 95% Wilson score interval for successes out of n, or None when n is 0."""
    return wilson_from_proportion(proportion(successes, n), n, z)


@dataclass(frozen=True)
class Estimate:
    """A proportion with its interval; both None when undefined."""

    value: float | None
    ci: Interval | None
    n: float = 0

    @classmethod
    def of(cls, successes: float, n: float) -> Estimate:
        return cls(proportion(successes, n), wilson_interval(successes, n), n)


def precision(tp: float, fp: float) -> Estimate:
    """Return TP / (TP + FP) with its Wilson interval."""
    return Estimate.of(tp, tp + fp)


def recall(tp: float, fn: float) -> Estimate:
    """Return TP / (TP + FN) with its Wilson interval."""
    return Estimate.of(tp, tp + fn)


def specificity(tn: float, fp: float) -> Estimate:
    """Return TN / (TN + FP) with its Wilson interval."""
    return Estimate.of(tn, tn + fp)


def _f1_from_jaccard(j: float) -> float:
    return 2 * j / (1 + j)


def f1(tp: float, fp: float, fn: float) -> Estimate:
    """Return F1 = 2TP / (2TP + FP + FN) with an interval.

    F1 is a monotone function of the proportion J = TP / (TP + FP + FN) (F1 = 2J / (1 + J)),
    so the Wilson interval of J, mapped through that function, covers F1 at the same level.
    """
    n = tp + fp + fn
    if n <= 0:
        return Estimate(None, None, 0)
    j_ci = wilson_interval(tp, n)
    value = 2 * tp / (2 * tp + fp + fn)
    return Estimate(value, (_f1_from_jaccard(j_ci[0]), _f1_from_jaccard(j_ci[1])), n)


def kish_effective_n(sum_w: float, sum_w2: float) -> float:
    """Return Kish's effective sample size (sum w)^2 / sum w^2, 0 when there is nothing."""
    if sum_w2 <= 0:
        return 0.0
    return sum_w * sum_w / sum_w2


def weighted_estimate(
    w_success: float, w_fail: float, w2_success: float, w2_fail: float
) -> Estimate:
    """Return a weighted proportion with a Wilson interval on its Kish effective sample size.

    w_* are the sums of weights of the successes and failures, w2_* the sums of squared weights.
    """
    total = w_success + w_fail
    p = proportion(w_success, total)
    n_eff = kish_effective_n(total, w2_success + w2_fail)
    return Estimate(p, wilson_from_proportion(p, n_eff), n_eff)


def weighted_f1(
    wtp: float, wfp: float, wfn: float, w2tp: float, w2fp: float, w2fn: float
) -> Estimate:
    """Return weighted F1 with the Jaccard-mapped Wilson interval on the effective sample size."""
    j = weighted_estimate(wtp, wfp + wfn, w2tp, w2fp + w2fn)
    if j.value is None:
        return Estimate(None, None, 0)
    value = 2 * wtp / (2 * wtp + wfp + wfn)
    return Estimate(value, (_f1_from_jaccard(j.ci[0]), _f1_from_jaccard(j.ci[1])), j.n)


@dataclass(frozen=True)
class AgreementTable:
    """Two raters' right/wrong calls on the same verdicts.

    both_right: both said right; first_right: the first said right, the second wrong;
    second_right: the first said wrong, the second right; both_wrong: both said wrong.
    """

    both_right: int = 0
    first_right: int = 0
    second_right: int = 0
    both_wrong: int = 0

    @property
    def n(self) -> int:
        return self.both_right + self.first_right + self.second_right + self.both_wrong

    def __add__(self, other: AgreementTable) -> AgreementTable:
        return AgreementTable(
            self.both_right + other.both_right,
            self.first_right + other.first_right,
            self.second_right + other.second_right,
            self.both_wrong + other.both_wrong,
        )


def percent_agreement(table: AgreementTable) -> float | None:
    """Return the share of paired verdicts on which both raters agree, None without pairs."""
    return proportion(table.both_right + table.both_wrong, table.n)


def cohen_kappa(table: AgreementTable) -> float | None:
    """Return Cohen's kappa for two raters, None without pairs or when chance agreement is 1."""
    n = table.n
    if n == 0:
        return None
    observed = (table.both_right + table.both_wrong) / n
    first_right = (table.both_right + table.first_right) / n
    second_right = (table.both_right + table.second_right) / n
    expected = first_right * second_right + (1 - first_right) * (1 - second_right)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


def majority(right: int, wrong: int, settled: bool | None = None) -> bool | None:
    """Return the truth of a verdict: a settlement wins, else the majority; a tie is None."""
    if settled is not None:
        return settled
    if right > wrong:
        return True
    if wrong > right:
        return False
    return None


def outcome(flagged: bool, correct: bool) -> str:
    """Return the confusion cell ("tp", "fp", "fn", "tn") of a verdict and its truth."""
    if flagged:
        return "tp" if correct else "fp"
    return "tn" if correct else "fn"


@dataclass(frozen=True)
class Floors:
    """What a rule version must reach to be eligible for the gate.

    No defaults here: the configured values (DOCKET_MIN_MARKS and the DOCKET_*_FLOOR settings) are
    the one home, read by labeling.selectors.calibration.floors_from_settings.
    """

    min_marks: int
    precision: float
    recall: float
    safety_precision: float
    safety_recall: float


def marks_to_clear(p: float | None, floor: float, *, limit: int = 10_000_000) -> int | None:
    """Return the smallest n at which a proportion p observed on n trials has a Wilson interval
    whose lower end reaches `floor`; None when it never does (p unknown, or p <= floor) within
    `limit`. The lower end grows with n when p > floor, so a binary search finds it."""
    if p is None or p <= floor:
        return None

    def clears(n: int) -> bool:
        return wilson_from_proportion(p, n)[0] >= floor

    if not clears(limit):
        return None
    low, high = 1, limit
    while low < high:
        mid = (low + high) // 2
        if clears(mid):
            high = mid
        else:
            low = mid + 1
    return low


def _bound(value: float, floor: float) -> str:
    # Two decimals read best; use more when two would print "0.70 < 0.70".
    for places in range(2, 7):
        text = f"{value:.{places}f}"
        if float(text) < floor:
            return text
    return repr(value)


def why_not_eligible(
    *,
    marked: int,
    precision_ci: Interval | None,
    recall_ci: Interval | None,
    floors: Floors,
    safety: bool = False,
) -> list[str]:
    """Return the reasons a rule version is not eligible for the gate; empty when it is."""
    reasons: list[str] = []
    if marked < floors.min_marks:
        missing = floors.min_marks - marked
        reasons.append(f"needs {missing} more mark{'s' if missing != 1 else ''}")
    p_floor = floors.safety_precision if safety else floors.precision
    r_floor = floors.safety_recall if safety else floors.recall
    suffix = " (safety rule)" if safety else ""
    for name, ci, floor, cause in (
        ("precision", precision_ci, p_floor, "no flagged verdict marked"),
        ("recall", recall_ci, r_floor, "no broken case marked"),
    ):
        if ci is None:
            reasons.append(f"{name} unknown: {cause}")
        elif ci[0] < floor:
            reasons.append(f"{name} lower bound {_bound(ci[0], floor)} < {floor:.2f}{suffix}")
    return reasons


@dataclass(frozen=True)
class Mean:
    """A (weighted) mean with its standard error and 95% interval; None where undefined.

    n is the number of values, effective_n Kish's effective sample size of their weights.
    """

    value: float | None
    se: float | None
    ci: Interval | None
    n: int = 0
    effective_n: float = 0.0


def weighted_mean(values: list[float], weights: list[float] | None = None, z: float = Z95) -> Mean:
    """Return the weighted mean of values with a normal 95% interval (see weighted_mean_of_sums)."""
    weights = [1.0] * len(values) if weights is None else list(weights)
    if len(weights) != len(values):
        raise ValueError("values and weights differ in length")
    return weighted_mean_of_sums(
        WeightedSums(
            n=len(values),
            w=sum(weights),
            wx=sum(w * x for w, x in zip(weights, values)),
            w2=sum(w * w for w in weights),
            w2x=sum(w * w * x for w, x in zip(weights, values)),
            w2x2=sum(w * w * x * x for w, x in zip(weights, values)),
        ),
        z,
    )


@dataclass(frozen=True)
class WeightedSums:
    """What a weighted mean and its variance need, summable in SQL: the count n and the sums of
    w, w x, w^2, w^2 x and w^2 x^2 over the values x with weights w."""

    n: int = 0
    w: float = 0.0
    wx: float = 0.0
    w2: float = 0.0
    w2x: float = 0.0
    w2x2: float = 0.0


def weighted_mean_of_sums(s: WeightedSums, z: float = Z95) -> Mean:
    """Return the weighted mean with a normal 95% interval from its sums.

    The variance is the linearised (ratio) estimator of a sample weighted by inverse inclusion
    probabilities, n / (n - 1) * sum w^2 (x - m)^2 / (sum w)^2, expanded into the sums; with equal
    weights it is s^2 / n, the textbook standard error of a mean. One value has a mean but no
    interval.
    """
    if s.n == 0 or s.w <= 0:
        return Mean(None, None, None, 0, 0.0)
    m = s.wx / s.w
    n_eff = kish_effective_n(s.w, s.w2)
    if s.n < 2:
        return Mean(m, None, None, s.n, n_eff)
    spread = max(0.0, s.w2x2 - 2 * m * s.w2x + m * m * s.w2)
    se = math.sqrt(s.n / (s.n - 1) * spread / (s.w * s.w))
    return Mean(m, se, (m - z * se, m + z * se), s.n, n_eff)


def mean_difference(a: Mean, b: Mean, z: float = Z95) -> Mean:
    """Return a - b with a normal 95% interval from the two standard errors (unequal variances);
    undefined (None) unless both means and both standard errors are known."""
    if a.value is None or b.value is None:
        return Mean(None, None, None, a.n + b.n, a.effective_n + b.effective_n)
    d = a.value - b.value
    if a.se is None or b.se is None:
        return Mean(d, None, None, a.n + b.n, a.effective_n + b.effective_n)
    se = math.sqrt(a.se**2 + b.se**2)
    return Mean(d, se, (d - z * se, d + z * se), a.n + b.n, a.effective_n + b.effective_n)


# ---- decision points -------------------------------------------------------------------------


def decision_accuracy(pairs: list[tuple[str, str]]) -> Estimate:
    """Return the share of (agent's choice, reviewers' answer) pairs that agree, with its Wilson
    interval; pairs without an answer ("") are left out."""
    labeled = [(c, t) for c, t in pairs if t]
    return Estimate.of(sum(1 for c, t in labeled if c == t), len(labeled))


def confusion_matrix(
    counts: dict[tuple[str, str], int], answers: list[str]
) -> list[tuple[str, list[int]]]:
    """Return one row per agent choice, one column per reviewers' answer, in `answers` order
    (answers outside it are appended), from counts keyed by (choice, answer)."""
    order = list(answers)
    for choice, truth in counts:
        for a in (choice, truth):
            if a and a not in order:
                order.append(a)
    return [(c, [counts.get((c, t), 0) for t in order]) for c in order]


def histogram(values: list[float], edges: list[float]) -> list[int]:
    """Return how many values fall in each bin: below edges[0], [edges[i], edges[i+1]), and at or
    above edges[-1] (len(edges) + 1 bins)."""
    out = [0] * (len(edges) + 1)
    for v in values:
        i = 0
        while i < len(edges) and v >= edges[i]:
            i += 1
        out[i] += 1
    return out


# ---- gate figures: percentiles, means and counts with 95% intervals ---------------------------


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile (one real observation, as the response-time detector does)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return float(ordered[rank - 1])


def percentile_interval(values: Sequence[float], pct: float) -> tuple[float, float] | None:
    """Distribution-free 95% interval for a percentile from binomial order-statistic ranks."""
    n = len(values)
    if n == 0:
        return None
    ordered = sorted(values)
    p = pct / 100
    spread = Z95 * math.sqrt(n * p * (1 - p))
    lo = max(1, math.floor(n * p - spread))
    hi = min(n, math.ceil(n * p + spread) + 1)
    return (float(ordered[lo - 1]), float(ordered[hi - 1]))


def mean_interval(values: Sequence[float]) -> Interval | None:
    """Normal-approximation 95% interval for an unweighted mean (None below two values): the
    interval of weighted_mean with equal weights."""
    return weighted_mean(list(values)).ci if len(values) >= 2 else None


def count_interval(count: int) -> tuple[float, float]:
    """Poisson-approximation 95% interval for an event count."""
    half = Z95 * math.sqrt(count + 1)
    return (max(0.0, count - half), count + half)


def moved(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """True when two values' 95% intervals do not overlap: the change is more than the noise."""
    if a is None or b is None:
        return False
    return a[1] < b[0] or b[1] < a[0]
