"""How many more marks a rule version needs before it can be eligible for the gate.

At least DOCKET_MIN_MARKS marks, and enough for the lower ends of its precision and recall
intervals to reach their floors at the proportions it shows: its own marks' once it has some, else
the rule workbench's estimate from the version it replaced (labeled so). Precision counts only the
flagged verdicts and recall only the calls where the rule was broken, so each need is divided by
the share of marks that count for it. A proportion whose whole 95% interval lies below its floor
will not clear it with more marks: the row says so. One at or below its floor, but not surely, says
nothing yet about how many: the minimum stands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core import stats
from labeling.selectors.calibration import CalibrationRow


@dataclass(frozen=True)
class MarksNeeded:
    more: int | None  # None: more marks alone will not make it eligible
    total: int | None
    source: str  # "its marks", "estimated from version n's marks", or "" (the minimum only)
    reason: str = ""


def _from_estimate(rv) -> tuple[dict, str] | None:
    est = rv.estimate or {}
    weights = (est.get("figures") or {}).get("weights")
    if not est.get("carried") or not weights:
        return None
    return weights, f"estimated from version {est['from_version']}'s marks"


def marks_needed(row: CalibrationRow) -> MarksNeeded:
    """Return how many more marks the row's rule version needs (see module doc)."""
    floors = row.floors
    marked = row.counts.marked
    if marked:
        c = row.counts
        cells, source = {"tp": c.tp, "fp": c.fp, "fn": c.fn, "tn": c.tn}, "its marks"
    else:
        found = _from_estimate(row.rule_version)
        if found is None:
            return MarksNeeded(max(0, floors.min_marks - marked), floors.min_marks, "")
        cells, source = found
    total_w = sum(cells.values())
    need = floors.min_marks
    for name, hit, miss, floor in (
        ("precision", cells["tp"], cells["fp"], row.precision_floor),
        ("recall", cells["tp"], cells["fn"], row.recall_floor),
    ):
        counted = hit + miss
        if not counted or not total_w:
            continue  # unknown yet: the minimum says how many to mark first
        p = hit / counted
        ci = stats.wilson_from_proportion(p, counted)
        if ci[1] < floor:
            return MarksNeeded(
                None,
                None,
                source,
                f"{name} [{ci[0]:.2f}, {ci[1]:.2f}] is below its floor {floor:.2f}: more "
                "marks alone will not do",
            )
        n = stats.marks_to_clear(p, floor)
        if n is not None:
            need = max(need, math.ceil(n * total_w / counted))
    # The source is named only when its figures ask for more than the minimum.
    return MarksNeeded(max(0, need - marked), need, source if need > floors.min_marks else "")
