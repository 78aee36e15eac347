"""Marks: a reviewer says a verdict is right or wrong. One mark per (verdict, reviewer)."""

import logging

from django.db import transaction
from django.db.models import Exists, OuterRef

from core.errors import DomainError
from evals.catalog.models import Transcript
from evals.judging.models import Verdict
from labeling.models import Assignment, Mark
from labeling.services.held import (
    assignment_lease_renew,
    assignment_locked,
    assignment_version_bump,
    assignment_version_check,
)

logger = logging.getLogger(__name__)

NOTE_MAX = Mark._meta.get_field("note").max_length


def _clean_note(note: str) -> str:
    note = " ".join((note or "").split())  # one line
    if len(note) > NOTE_MAX:
        raise DomainError(f"note: at most {NOTE_MAX} characters, got {len(note)}.")
    return note


@transaction.atomic
def mark_set(
    *, reviewer, verdict: Verdict, correct: bool, note: str = "", version: int | None = None
) -> Mark:
    """Create or change the reviewer's mark on a verdict
    (idempotent); errored verdicts cannot be marked.

    The mark is tied to the reviewer's assignment on the call when there is one; a mark made
    outside the sample (through the API) has none and counts with weight 1. With `version` (the
    assignment's version the client saw), a call that changed since is refused (ReviewChanged).
    """
    if verdict.error:
        raise DomainError(
            f"verdict: {verdict.pk} errored in the judge; an errored verdict cannot be marked."
        )
    note = _clean_note(note)
    assignment = _hold(reviewer=reviewer, transcript=verdict.transcript, version=version)
    mark = Mark.objects.filter(verdict=verdict, reviewer=reviewer).first()
    created = mark is None
    if created or (mark.correct, mark.note, mark.assignment_id) != (
        bool(correct),
        note,
        assignment.pk if assignment else None,
    ):
        mark, created = Mark.objects.update_or_create(
            verdict=verdict,
            reviewer=reviewer,
            defaults={"correct": bool(correct), "note": note, "assignment": assignment},
        )
        assignment_version_bump(assignment)  # only a change moves it: a repeated press is free
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


def _hold(*, reviewer, transcript: Transcript, version: int | None) -> Assignment | None:
    """Return the reviewer's assignment on the call, locked, checked against `version` and with
    its lease renewed while it is held; None outside the sample."""
    assignment = assignment_locked(reviewer=reviewer, transcript_id=transcript.pk)
    assignment_version_check(
        assignment=assignment, version=version, external_id=transcript.external_id
    )
    if assignment is not None:
        assignment_lease_renew(assignment)
    return assignment


@transaction.atomic
def mark_rest_right(*, reviewer, transcript: Transcript, version: int | None = None) -> list[int]:
    """Mark right every verdict on the call that the judge did not flag and the reviewer has not
    marked; return their ids. Refused while a flagged verdict still lacks the reviewer's mark, so
    the bulk action only ever covers the checks that found nothing, after the flags were read."""
    assignment = _hold(reviewer=reviewer, transcript=transcript, version=version)
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
    Mark.objects.bulk_create(
        [Mark(verdict_id=i, reviewer=reviewer, correct=True, assignment=assignment) for i in ids]
    )
    if ids:
        assignment_version_bump(assignment)
    logger.info(
        "mark_rest_right",
        extra={"transcript_id": transcript.pk, "reviewer_id": reviewer.pk, "marked": len(ids)},
    )
    return ids


@transaction.atomic
def mark_undo_many(
    *, reviewer, transcript: Transcript, verdict_ids: list[int], version: int | None = None
) -> int:
    """Remove the reviewer's marks on these verdicts of the call (one undo for a bulk action);
    return how many there were."""
    assignment = _hold(reviewer=reviewer, transcript=transcript, version=version)
    deleted, _ = Mark.objects.filter(
        reviewer=reviewer, verdict__transcript=transcript, verdict_id__in=verdict_ids
    ).delete()
    if deleted:
        assignment_version_bump(assignment)
    logger.info(
        "marks_undone",
        extra={"transcript_id": transcript.pk, "reviewer_id": reviewer.pk, "undone": deleted},
    )
    return deleted


@transaction.atomic
def mark_undo(*, reviewer, verdict: Verdict, version: int | None = None) -> bool:
    """Remove the reviewer's mark on a verdict; return whether there was one."""
    assignment = _hold(reviewer=reviewer, transcript=verdict.transcript, version=version)
    deleted, _ = Mark.objects.filter(verdict=verdict, reviewer=reviewer).delete()
    if deleted:
        assignment_version_bump(assignment)
        logger.info("mark_undone", extra={"verdict_id": verdict.pk, "reviewer_id": reviewer.pk})
    return bool(deleted)
