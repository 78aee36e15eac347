"""The classifiers as checks over stored calls: one verdict per call from the verdicts of its
turns, and the category each verdict carries (VerdictCategory)."""

from collections.abc import Sequence

from evals.classifiers.models import VerdictCategory
from evals.classifiers.runtime import FRUSTRATION, ClassifierVerdict
from evals.judging.models import Verdict
from evals.rules.detectors import DetectorResult


def call_result(
    classifier: str, checked: Sequence[tuple[int, ClassifierVerdict]], *, nothing: str
) -> DetectorResult:
    """Return one call's result from its turns' verdicts: flagged when any turn is, citing them,
    with the confidence and category of the surest flagged turn; an error when any turn's
    model pass failed (the call's verdict is then errored, not a degraded guess)."""
    failed = [(i, v) for i, v in checked if v.error]
    if failed:
        i, v = failed[0]
        return DetectorResult(
            False, error=f"{len(failed)} of {len(checked)} turns failed (turn {i}: {v.error})"
        )
    if not checked:
        return DetectorResult(False, [], nothing)
    flagged = [(i, v) for i, v in checked if v.flagged]
    if flagged:
        top_i, top = max(flagged, key=lambda iv: (iv[1].confidence or 0, -iv[0]))
        more = f" (and {len(flagged) - 1} more turns)" if len(flagged) > 1 else ""
        return DetectorResult(
            True,
            [i for i, _ in flagged],
            f"Turn {top_i}: {top.rationale}{more}",
            confidence=top.confidence,
            category=top.category,
        )
    sures = [v.confidence for _, v in checked if v.confidence is not None]
    category = ""
    if classifier == FRUSTRATION:
        category = "situation" if any(v.category == "situation" for _, v in checked) else "none"
    asked = sum(1 for _, v in checked if not v.skipped)
    return DetectorResult(
        False,
        [],
        f"No turn flagged ({len(checked)} checked, {asked} by the model)."
        if asked
        else f"No turn flagged ({len(checked)} checked by the pattern layer or skipped).",
        # The least sure of the negatives: a negative is as sure as its weakest turn.
        confidence=min(sures) if sures else None,
        category=category,
    )


def verdict_categories_put(transcript_id: int, verdicts: dict, judges: dict) -> int:
    """Store the category of each verdict a check just wrote (fields with a "category");
    return how many."""
    wanted = {
        (rv_pk, judges[rv_pk].pk): fields["category"]
        for rv_pk, fields in verdicts.items()
        if fields.get("category") and "error" not in fields and rv_pk in judges
    }
    if not wanted:
        return 0
    rows = Verdict.objects.filter(
        transcript_id=transcript_id,
        rule_version_id__in={rv for rv, _ in wanted},
        judge_id__in={j for _, j in wanted},
    ).values_list("pk", "rule_version_id", "judge_id")
    n = 0
    for pk, rv, judge in rows:
        category = wanted.get((rv, judge))
        if category:
            # A verdict kept from an earlier run keeps the category it was written with.
            VerdictCategory.objects.get_or_create(verdict_id=pk, defaults={"category": category})
            n += 1
    return n
