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
    """Two raters' yes/no answers on the same things: two reviewers' right/wrong marks on the same
    verdicts, or two judges' flags on the same calls (read "right" as "flagged").

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


def kappa_estimate(a: float, b: float, c: float, d: float, n: float | None = None) -> Estimate:
    """Return Cohen's kappa of the 2x2 table [[a, b], [c, d]] (rows: the first rater's yes, no;
    columns: the second's) with a 95% interval; undefined (None) without cells or when chance
    agreement is 1.

    The interval is Wald's, kappa +/- 1.96 se, with the large-sample standard error of Fleiss,
    Cohen and Everitt (1969), which statsmodels' cohens_kappa and Stata's kap report: it needs only
    the four cells, so it is computed from the same sums as the other figures. It is clipped to
    [-1, 1]. `n` replaces the cells' total in the variance (Kish's effective n for a weighted
    table, whose cells are sums of weights); the proportions always come from the cells.
    """
    total = a + b + c + d
    n = total if n is None else n
    if total <= 0 or n <= 0:
        return Estimate(None, None, 0)
    p = ((a / total, b / total), (c / total, d / total))
    row = (p[0][0] + p[0][1], p[1][0] + p[1][1])
    col = (p[0][0] + p[1][0], p[0][1] + p[1][1])
    observed = p[0][0] + p[1][1]
    expected = row[0] * col[0] + row[1] * col[1]
    if math.isclose(expected, 1.0):
        return Estimate(None, None, n)
    k = (observed - expected) / (1 - expected)
    diagonal = sum(p[i][i] * (1 - (row[i] + col[i]) * (1 - k)) ** 2 for i in (0, 1))
    off = (1 - k) ** 2 * sum(p[i][j] * (col[i] + row[j]) ** 2 for i, j in ((0, 1), (1, 0)))
    variance = (diagonal + off - (k - expected * (1 - k)) ** 2) / ((1 - expected) ** 2 * n)
    half = Z95 * math.sqrt(max(variance, 0.0))
    return Estimate(k, (max(-1.0, k - half), min(1.0, k + half)), n)


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


# ---- a judge against the humans' truth, and two judges against each other -------------------
#
# Reusable wherever a judge's answers meet a truth (calibration, the rule workbench): the figures
# take a Confusion, which rows of (what the judge said, the truth, a weight) build.

ERRORS_EXCLUDE = "exclude"
ERRORS_AS_WRONG = "as_wrong"
ERRORS = (ERRORS_EXCLUDE, ERRORS_AS_WRONG)


def answer(said: bool | None, truth: bool | None, errors: str = ERRORS_EXCLUDE) -> bool | None:
    """Return the answer a verdict counts as: what the judge said (True: flagged); for an errored
    verdict (said None), the wrong answer (not truth) under errors="as_wrong" when the truth is
    settled, else None (left out, as under "exclude")."""
    if errors not in ERRORS:
        raise ValueError(f"errors: expected one of {', '.join(ERRORS)}, got {errors!r}")
    if said is not None:
        return said
    if errors == ERRORS_AS_WRONG and truth is not None:
        return not truth
    return None


@dataclass(frozen=True)
class Confusion:
    """A judge's answers against the truth (True: the rule was broken): the count, or the sum of
    weights, in each cell, and each cell's sum of squared weights (`sq`: tp, fp, fn, tn; None when
    unweighted, where a count is its own sum of squares)."""

    tp: float = 0.0
    fp: float = 0.0
    fn: float = 0.0
    tn: float = 0.0
    sq: tuple[float, float, float, float] | None = None

    @property
    def n(self) -> float:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def squares(self) -> tuple[float, float, float, float]:
        return self.sq if self.sq is not None else (self.tp, self.fp, self.fn, self.tn)

    @property
    def effective_n(self) -> float:
        """Kish's effective sample size of the cells' weights (n itself when unweighted)."""
        return kish_effective_n(self.n, sum(self.squares))

    def __add__(self, other: Confusion) -> Confusion:
        sq = None
        if self.sq is not None or other.sq is not None:
            sq = tuple(x + y for x, y in zip(self.squares, other.squares, strict=True))
        return Confusion(
            self.tp + other.tp, self.fp + other.fp, self.fn + other.fn, self.tn + other.tn, sq
        )


@dataclass(frozen=True)
class JudgedRows:
    """What rows of (said, truth, weight) come to: the raw and the weighted confusion, and how many
    rows were errored, how many of those were counted (as wrong) and how many rows were left out
    for want of a settled truth."""

    raw: Confusion
    weighted: Confusion
    errored: int = 0
    errored_counted: int = 0
    unsettled: int = 0


def confusion_from_rows(rows, *, errors: str = ERRORS_EXCLUDE) -> JudgedRows:
    """Count rows of (what the judge said: True flagged, False not, None errored; the truth: True
    broken, False not, None unsettled; weight, e.g. 1 / inclusion probability) into confusions."""
    cells = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    w = dict.fromkeys(cells, 0.0)
    w2 = dict.fromkeys(cells, 0.0)
    errored = counted = unsettled = 0
    for said, truth, weight in rows:
        errored += said is None
        if truth is None:
            unsettled += 1
            continue
        counts_as = answer(said, truth, errors)
        if counts_as is None:
            continue
        counted += said is None
        cell = outcome(counts_as, counts_as == truth)
        cells[cell] += 1
        w[cell] += weight
        w2[cell] += weight * weight
    return JudgedRows(
        Confusion(**cells),
        Confusion(**w, sq=(w2["tp"], w2["fp"], w2["fn"], w2["tn"])),
        errored,
        counted,
        unsettled,
    )


@dataclass(frozen=True)
class JudgeAgreement:
    """A judge's agreement with the truth, the way papers on LLM judges report it, each figure with
    its 95% interval: accuracy, precision, recall, F1 and specificity (Wilson; F1 through the
    Jaccard index), and Cohen's kappa between judge and truth (Wald, Fleiss-Cohen-Everitt). On a
    weighted confusion the intervals use Kish's effective sample size."""

    accuracy: Estimate
    precision: Estimate
    recall: Estimate
    f1: Estimate
    specificity: Estimate
    kappa: Estimate
    n: float
    effective_n: float


def judge_agreement(c: Confusion) -> JudgeAgreement:
    """Return every agreement figure of a confusion (raw or weighted alike)."""
    tp2, fp2, fn2, tn2 = c.squares
    return JudgeAgreement(
        accuracy=weighted_estimate(c.tp + c.tn, c.fp + c.fn, tp2 + tn2, fp2 + fn2),
        precision=weighted_estimate(c.tp, c.fp, tp2, fp2),
        recall=weighted_estimate(c.tp, c.fn, tp2, fn2),
        f1=weighted_f1(c.tp, c.fp, c.fn, tp2, fp2, fn2),
        specificity=weighted_estimate(c.tn, c.fp, tn2, fp2),
        kappa=kappa_estimate(c.tp, c.fp, c.fn, c.tn, c.effective_n),
        n=c.n,
        effective_n=c.effective_n,
    )


@dataclass(frozen=True)
class PairAgreement:
    """Two judges' answers on the same calls: the share on which they agree (Wilson interval) and
    Cohen's kappa between them (Wald, Fleiss-Cohen-Everitt); n the calls counted."""

    agreement: Estimate
    kappa: Estimate
    n: int
    table: AgreementTable


def pair_table_from_rows(rows, *, errors: str = ERRORS_EXCLUDE) -> AgreementTable:
    """Count rows of (first judge said, second judge said, truth) into an AgreementTable (both_right
    reads "both flagged"); each errored answer (None) counts as `answer` says, or leaves the row
    out."""
    cells = [0, 0, 0, 0]
    for first, second, truth in rows:
        a, b = answer(first, truth, errors), answer(second, truth, errors)
        if a is None or b is None:
            continue
        cells[(0 if a else 2) + (0 if b else 1)] += 1
    return AgreementTable(*cells)


def pair_agreement(table: AgreementTable) -> PairAgreement:
    """Return two raters' (judges', reviewers') agreement and kappa, each with its interval."""
    agree = table.both_right + table.both_wrong
    return PairAgreement(
        Estimate.of(agree, table.n),
        kappa_estimate(table.both_right, table.first_right, table.second_right, table.both_wrong),
        table.n,
        table,
    )


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
