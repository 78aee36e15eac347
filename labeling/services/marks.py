"""Marks: a reviewer says a verdict is right or wrong. One mark per (verdict, reviewer)."""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from core.errors import DomainError
from evals.catalog.models import Transcript
from evals.judging.models import Verdict
from labeling.models import Assignment, Mark

logger = logging.getLogger(__name__)

NOTE_MAX = Mark._meta.get_field("note").max_length


def _clean_note(note: str) -> str:
    note = " ".join((note or "").split())  # one line
    if len(note) > NOTE_MAX:
        raise DomainError(f"note: at most {NOTE_MAX} characters, got {len(note)}.")
    return note


@transaction.atomic
def mark_set(*, reviewer, verdict: Verdict, correct: bool, note: str = "") -> Mark:
    """Create or change the reviewer's mark on a verdict
    (idempotent); errored verdicts cannot be marked.

    The mark is tied to the reviewer's assignment on the call when there is one; a mark made
    outside the sample (through the API) has none and counts with weight 1.
    """
    if verdict.error:
        raise DomainError(
            f"verdict: {verdict.pk} errored in the judge; an errored verdict cannot be marked."
        )
    note = _clean_note(note)
    assignment = _assignment_renewed(reviewer=reviewer, transcript_id=verdict.transcript_id)
    mark, created = Mark.objects.update_or_create(
        verdict=verdict,
        reviewer=reviewer,
        defaults={"correct": bool(correct), "note": note, "assignment": assignment},
    )
    logger.info(
        "mark_set",
        extra={
            "verdict_id": verdict.pk,
            "reviewer_id": reviewer.pk,
            "correct": bool(correct),
            "mark_created": created,
        },
    )
    return mark


def _assignment_renewed(*, reviewer, transcript_id: int) -> Assignment | None:
    """Return the reviewer's live assignment on the call (lease renewed if held), or None."""
    assignment = (
        Assignment.objects.filter(
            reviewer=reviewer, item__transcript_id=transcript_id, released_at__isnull=True
        )
        .order_by("-claimed_at")
        .first()
    )
    if assignment is not None and assignment.finished_at is None:
        _lease_renew(assignment)
    return assignment


@transaction.atomic
def mark_rest_right(*, reviewer, transcript: Transcript) -> list[int]:
    """Mark right every verdict on the call that the judge did not flag and the reviewer has not
    marked; return their ids. Refused while a flagged verdict still lacks the reviewer's mark, so
    the bulk action only ever covers the checks that found nothing, after the flags were read."""
    markable = Verdict.objects.filter(transcript=transcript, error="")
    mine = Mark.objects.filter(verdict=OuterRef("pk"), reviewer=reviewer)
    unmarked = markable.exclude(Exists(mine))
    flagged_left = unmarked.filter(flagged=True).count()
    if flagged_left:
        raise DomainError(
            f"verdicts: mark the {flagged_left} flagged verdict"
            f"{'s' if flagged_left != 1 else ''} on {transcript.external_id} first."
        )
    ids = list(unmarked.filter(flagged=False).order_by("pk").values_list("pk", flat=True))
    assignment = _assignment_renewed(reviewer=reviewer, transcript_id=transcript.pk)
    Mark.objects.bulk_create(
        [Mark(verdict_id=i, reviewer=reviewer, correct=True, assignment=assignment) for i in ids]
    )
    logger.info(
        "mark_rest_right",
        extra={"transcript_id": transcript.pk, "reviewer_id": reviewer.pk, "marked": len(ids)},
    )
    return ids


@transaction.atomic
def mark_undo_many(*, reviewer, transcript: Transcript, verdict_ids: list[int]) -> int:
    """Remove the reviewer's marks on these verdicts of the call (one undo for a bulk action);
    return how many there were."""
    deleted, _ = Mark.objects.filter(
        reviewer=reviewer, verdict__transcript=transcript, verdict_id__in=verdict_ids
    ).delete()
    logger.info(
        "marks_undone",
        extra={"transcript_id": transcript.pk, "reviewer_id": reviewer.pk, "undone": deleted},
    )
    return deleted


def _lease_renew(assignment: Assignment) -> None:
    """Working on a call keeps it held: renew the lease once half of it has run out."""
    lease = timedelta(minutes=settings.DOCKET_LEASE_MINUTES)
    now = timezone.now()
    if assignment.lease_expires_at - now < lease / 2:
        Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=now + lease)


@transaction.atomic
def mark_undo(*, reviewer, verdict: Verdict) -> bool:
    """Remove the reviewer's mark on a verdict; return whether there was one."""
    deleted, _ = Mark.objects.filter(verdict=verdict, reviewer=reviewer).delete()
    if deleted:
        logger.info("mark_undone", extra={"verdict_id": verdict.pk, "reviewer_id": reviewer.pk})
    return bool(deleted)
