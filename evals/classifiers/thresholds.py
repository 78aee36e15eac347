"""Thresholds from marks: pure maths over (flagged, confidence, reviewer's truth) triples.

A blocking rule would be "block when the classifier flags with confidence >= t". A reviewer's
mark says whether the verdict was right, so a verdict is truly positive when it was flagged and
marked right, or not flagged and marked wrong. At threshold t:

    TP(t) = flagged, confidence >= t, truly positive      FP(t) = flagged, confidence >= t, not
    FN(t) = truly positive verdicts below t or not flagged

precision = TP / (TP + FP) and recall = TP / (TP + FN), each with its 95% Wilson interval and
None (never 0) when the denominator is 0. A flagged verdict without a confidence counts as 0.
No Django: plain numbers in, plain numbers out.
"""

from collections.abc import Iterable
from dataclasses import dataclass, replace

from core.stats import proportion, wilson_interval

BINS = 10  # the confidence histograms' bins: 0-9, 10-19, ... 90-100


@dataclass(frozen=True)
class Item:
    flagged: bool
    confidence: int | None
    right: bool | None  # the reviewers' truth about the verdict; None: not marked (or tied)
    n: int = 1  # how many verdicts are alike in these three (counted in the database)

    @property
    def positive(self) -> bool | None:
        """Whether the turn truly was a finding, by the marks."""
        return None if self.right is None else (self.flagged == self.right)

    def counted(self) -> "Item":
        """Return this item with only the confidence the figures read: its own when it is
        flagged and marked (the curve's thresholds), else its histogram bin's lowest (the
        classifier spans count verdicts so)."""
        if self.confidence is None or (self.flagged and self.right is not None):
            return self
        return replace(self, confidence=_bin(self.confidence) * (100 // BINS))


@dataclass(frozen=True)
class Point:
    threshold: int
    tp: int
    fp: int
    fn: int
    precision: float | None
    precision_ci: tuple[float, float] | None
    recall: float | None
    recall_ci: tuple[float, float] | None

    def as_dict(self) -> dict:
        return {
            "threshold": self.threshold,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": _r(self.precision),
            "precision_ci": _ci(self.precision_ci),
            "recall": _r(self.recall),
            "recall_ci": _ci(self.recall_ci),
        }


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _ci(ci) -> list[float] | None:
    return None if ci is None else [round(ci[0], 4), round(ci[1], 4)]


def _bin(confidence: int) -> int:
    return min(BINS - 1, max(0, confidence) * BINS // 100)


def histogram(items: Iterable[Item]) -> dict[str, list[int]]:
    """Return the confidence distribution of flagged and of unflagged verdicts in BINS bins
    (verdicts without a confidence are counted apart, under "none")."""
    out = {"flagged": [0] * BINS, "unflagged": [0] * BINS, "none": [0, 0]}
    for it in items:
        if it.confidence is None:
            out["none"][0 if it.flagged else 1] += it.n
            continue
        out["flagged" if it.flagged else "unflagged"][_bin(it.confidence)] += it.n
    return out


def pr_curve(items: Iterable[Item]) -> list[Point]:
    """Return precision and recall at every threshold where they change (each confidence of a
    marked flagged verdict, and 0), lowest threshold first."""
    positives = 0
    at: dict[int, list[int]] = {0: [0, 0]}  # confidence: [true, false] positives flagged at it
    for it in items:
        if it.positive is None:
            continue
        positives += it.n if it.positive else 0
        if it.flagged:
            at.setdefault(it.confidence or 0, [0, 0])[0 if it.positive else 1] += it.n
    points = []
    tp = fp = 0
    # From the highest threshold down, each adding the verdicts flagged at its confidence.
    for t in sorted(at, reverse=True):
        tp, fp = tp + at[t][0], fp + at[t][1]
        fn = positives - tp
        points.append(
            Point(
                t,
                tp,
                fp,
                fn,
                proportion(tp, tp + fp),
                wilson_interval(tp, tp + fp),
                proportion(tp, positives),
                wilson_interval(tp, positives),
            )
        )
    return points[::-1]


@dataclass(frozen=True)
class ThresholdChoice:
    target: float
    threshold: int | None  # the lowest threshold whose precision reaches the target
    point: Point | None
    conservative: int | None  # the lowest threshold whose precision's lower bound reaches it
    conservative_point: Point | None

    def as_dict(self) -> dict:
        return {
            "target_precision": self.target,
            "threshold": self.threshold,
            "precision": _r(self.point.precision) if self.point else None,
            "precision_lower_bound": _r(self.point.precision_ci[0])
            if self.point and self.point.precision_ci
            else None,
            "recall": _r(self.point.recall) if self.point else None,
            "conservative_threshold": self.conservative,
            "conservative_recall": _r(self.conservative_point.recall)
            if self.conservative_point
            else None,
        }


def threshold_choose(points: list[Point], target: float) -> ThresholdChoice:
    """Return the lowest threshold reaching the target precision (with its lower bound), and the
    lowest whose lower bound does too; None where no threshold does."""
    reach = next((p for p in points if p.precision is not None and p.precision >= target), None)
    safe = next(
        (p for p in points if p.precision_ci is not None and p.precision_ci[0] >= target), None
    )
    return ThresholdChoice(
        target,
        reach.threshold if reach else None,
        reach,
        safe.threshold if safe else None,
        safe,
    )
