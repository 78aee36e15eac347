"""Labels on decision points, the truth they settle on, and the hard moments a lead queues."""

import logging
from collections import Counter

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.errors import DomainError
from evals.decisions.models import Decision
from evals.decisions.services.cells import decision_cells_compact_on_commit
from labeling.models import DecisionLabel, HardMoment
from labeling.services.held import assignment_own
from labeling.services.marks import _clean_note
from labeling.services.sampling import sample_item_queue_by_hand

logger = logging.getLogger(__name__)

HARD_MAX_CONFIDENCE = 0.6  # the agent was this unsure or less
HARD_BOUNDARY_MS = 700  # where the agent's end-of-turn timer fires
HARD_WITHIN_MS = 150  # a gap this close to the boundary is hard to call
HARD_LIMIT = 40


def decision_truth(answers: list[str]) -> str:
    """Return the majority answer of the labels, "" when there is none or the top is tied."""
    top = Counter(answers).most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return ""
    return top[0][0]


@transaction.atomic
def decision_labels_bulk(labels: list[tuple[object, Decision, str]]) -> int:
    """Store many (reviewer, decision, answer) labels at once (a reviewer's existing label stays
    as it is) and settle the truth of every decision they touch; return how many were new."""
    for _, decision, answer in labels:
        if answer not in decision.kind_version.answers:
            raise DomainError(f"answer: {answer!r} is not one of {decision.kind_version.answers}.")
    before = DecisionLabel.objects.count()
    DecisionLabel.objects.bulk_create(
        [DecisionLabel(decision=d, reviewer=r, answer=a) for r, d, a in labels],
        batch_size=1000,
        ignore_conflicts=True,
    )
    ids = {d.pk for _, d, _ in labels}
    answers: dict[int, list[str]] = {}
    for decision_id, answer in DecisionLabel.objects.filter(decision_id__in=ids).values_list(
        "decision_id", "answer"
    ):
        answers.setdefault(decision_id, []).append(answer)
    changed = []
    for d in Decision.objects.filter(pk__in=ids).only("pk", "truth"):
        truth = decision_truth(answers.get(d.pk, []))
        if truth != d.truth:
            d.truth = truth
            changed.append(d)
    Decision.objects.bulk_update(changed, ["truth"], batch_size=1000)
    if changed:
        decision_cells_compact_on_commit()
    return DecisionLabel.objects.count() - before


def _truth_update(decision: Decision) -> str:
    answers = list(DecisionLabel.objects.filter(decision=decision).values_list("answer", flat=True))
    truth = decision_truth(answers)
    if truth != decision.truth:
        Decision.objects.filter(pk=decision.pk).update(truth=truth)
        decision.truth = truth
        decision_cells_compact_on_commit()
    return truth


@transaction.atomic
def decision_label_set(
    *, reviewer, decision: Decision, answer: str, note: str = ""
) -> tuple[DecisionLabel, bool]:
    """Create or change the reviewer's answer at a decision point (idempotent) and settle the
    decision's truth (the majority of its labels) in the same transaction; return (the label,
    whether it was created). A call other reviewers hold is refused (NotHeld)."""
    decision = (
        Decision.objects.select_for_update()
        .select_related("kind_version", "transcript")
        .get(pk=decision.pk)
    )
    answers = decision.kind_version.answers
    if answer not in answers:
        raise DomainError(f"{answer!r} is not one of {', '.join(answers)}.", field="answer")
    assignment_own(reviewer=reviewer, transcript=decision.transcript)
    label, created = DecisionLabel.objects.update_or_create(
        decision=decision,
        reviewer=reviewer,
        defaults={"answer": answer, "note": _clean_note(note)},
    )
    _truth_update(decision)
    logger.info(
        "decision_labeled",
        extra={"decision_id": decision.pk, "reviewer_id": reviewer.pk, "label_created": created},
    )
    return label, created


@transaction.atomic
def decision_label_undo(*, reviewer, decision: Decision) -> None:
    """Remove the reviewer's label at a decision point and settle its truth again."""
    decision = Decision.objects.select_for_update().get(pk=decision.pk)
    DecisionLabel.objects.filter(decision=decision, reviewer=reviewer).delete()
    _truth_update(decision)


def _hard_reason(d: Decision, *, max_confidence: float, boundary_ms: int, within_ms: int) -> str:
    parts = []
    if d.confidence is not None and d.confidence <= max_confidence:
        parts.append(f"agent confidence {d.confidence:.2f}")
    if d.gap_ms is not None and abs(d.gap_ms - boundary_ms) <= within_ms:
        parts.append(f"gap {d.gap_ms} ms, {abs(d.gap_ms - boundary_ms)} ms from {boundary_ms} ms")
    return "; ".join(parts)


@transaction.atomic
def hard_moments_queue(
    *,
    by,
    kind: str = "",
    max_confidence: float = HARD_MAX_CONFIDENCE,
    boundary_ms: int = HARD_BOUNDARY_MS,
    within_ms: int = HARD_WITHIN_MS,
    limit: int = HARD_LIMIT,
    transcript_ids: list[int] | None = None,
) -> list[HardMoment]:
    """Queue up to `limit` unlabeled decision points that are hard to call (agent confidence at
    most `max_confidence`, or a gap within `within_ms` of `boundary_ms`), newest calls first, and
    put their calls in today's review queue. Moments already queued stay as they are;
    `transcript_ids` keeps to those calls."""
    if not 0 <= max_confidence <= 1:
        raise DomainError("max_confidence: a number from 0 to 1.")
    if within_ms < 0 or limit < 1:
        raise DomainError("within_ms and limit: positive numbers.")
    near = Q(gap_ms__gte=boundary_ms - within_ms, gap_ms__lte=boundary_ms + within_ms)
    qs = (
        Decision.objects.filter(Q(confidence__lte=max_confidence) | near, truth="")
        .filter(hard_moment__isnull=True, labels__isnull=True)
        .select_related("transcript")
        .order_by("-transcript__started_at", "transcript_id", "pk")
    )
    if kind:
        qs = qs.filter(kind__kind_id=kind)
    if transcript_ids is not None:
        qs = qs.filter(transcript_id__in=transcript_ids)
    made = []
    calls = {}
    for d in qs[:limit]:
        reason = _hard_reason(
            d, max_confidence=max_confidence, boundary_ms=boundary_ms, within_ms=within_ms
        )
        made.append(HardMoment(decision=d, reason=reason[:200], queued_by=by))
        calls[d.transcript_id] = d.transcript
    HardMoment.objects.bulk_create(made)
    today = timezone.localdate()
    for t in calls.values():
        sample_item_queue_by_hand(transcript=t, added_by=by, day=today)
    logger.info("hard_moments_queued", extra={"moments": len(made), "calls": len(calls)})
    return made
