"""Marks: a reviewer says a verdict is right or wrong. One mark per (verdict, reviewer).

Every mark is written by `marks_write`, whoever makes it: the review page and the API one at a time
(`mark_set`), an import many at once (labeling.services.marks_import). The verdict tally follows
through its database triggers in the same transaction.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from core.errors import DomainError
from core.importing import chunked
from evals.catalog.models import Transcript
from evals.judging.models import Verdict
from labeling.models import Assignment, Mark
from labeling.services.held import (
    assignment_lease_renew,
    assignment_locked,
    assignment_version_bump,
    assignment_version_check,
)
from labeling.services.tally_cells import tally_cells_compact_on_commit

logger = logging.getLogger(__name__)

NOTE_MAX = Mark._meta.get_field("note").max_length
SOURCE_MAX = Mark._meta.get_field("source").max_length


def _clean_note(note: str) -> str:
    note = " ".join((note or "").split())  # one line
    if len(note) > NOTE_MAX:
        raise DomainError(f"note: at most {NOTE_MAX} characters, got {len(note)}.")
    return note


def mark_refusal(*, verdict_id: int, error: str) -> str | None:
    """Return why a verdict cannot be marked (it errored in the judge: there is no answer to call
    right or wrong), or None when it can."""
    if error:
        return f"verdict {verdict_id} errored in the judge; an errored verdict cannot be marked."
    return None


@dataclass(frozen=True)
class MarkInput:
    """One mark to write: checked (markable verdict, clean note) by its caller."""

    verdict_id: int
    transcript_id: int
    reviewer_id: int
    correct: bool
    note: str = ""


@dataclass
class MarksWritten:
    """What marks_write did."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    assignments: dict = field(default_factory=dict)  # (reviewer, transcript) -> Assignment


def marks_write(
    marks: Sequence[MarkInput], *, source: str = "", renew_leases: bool = False
) -> MarksWritten:
    """Create or change reviewers' marks (idempotent: a mark that says the same stays as it is,
    source included).

    Each mark is tied to the reviewer's assignment on the call when there is one (so it weighs as
    the sample says); a mark made outside the sample has none and weighs 1. `source` says where
    imported marks came from ("" for marks made in Docket). With `renew_leases` (a reviewer at
    work) a held call's lease is renewed. Must run inside a transaction.
    """
    done = MarksWritten()
    done.assignments = _assignments({(m.reviewer_id, m.transcript_id) for m in marks})
    source = source[:SOURCE_MAX]
    now = timezone.now()
    new, changed = [], []
    touched: set[tuple[int, int]] = set()  # (reviewer, call) whose marks change
    for part in chunked(list(marks), 2000):
        existing = {
            (v, r): (pk, correct, note, assignment, src)
            for pk, v, r, correct, note, assignment, src in Mark.objects.filter(
                verdict_id__in={m.verdict_id for m in part},
                reviewer_id__in={m.reviewer_id for m in part},
            ).values_list(
                "pk", "verdict_id", "reviewer_id", "correct", "note", "assignment_id", "source"
            )
        }
        for m in part:
            a = done.assignments.get((m.reviewer_id, m.transcript_id))
            a_id = a.pk if a is not None else None
            old = existing.get((m.verdict_id, m.reviewer_id))
            if old is None or old[1:4] != (m.correct, m.note, a_id):
                touched.add((m.reviewer_id, m.transcript_id))
            if old is None:
                new.append(
                    Mark(
                        verdict_id=m.verdict_id,
                        reviewer_id=m.reviewer_id,
                        correct=m.correct,
                        note=m.note,
                        assignment_id=a_id,
                        source=source,
                    )
                )
            elif old[1:4] == (m.correct, m.note, a_id):  # it says the same: keep its source
                done.unchanged += 1
            else:
                changed.append(
                    Mark(
                        pk=old[0],
                        correct=m.correct,
                        note=m.note,
                        assignment_id=a_id,
                        source=source,
                        updated_at=now,
                    )
                )
    Mark.objects.bulk_create(new, batch_size=2000)
    Mark.objects.bulk_update(
        changed, ["correct", "note", "assignment", "source", "updated_at"], batch_size=1000
    )
    done.created, done.updated = len(new), len(changed)
    if new or changed:
        tally_cells_compact_on_commit()
    # A page or client that read these calls must learn they changed (labeling.services.held).
    assignment_version_bump(*(done.assignments[k] for k in touched if k in done.assignments))
    if renew_leases:
        for a in done.assignments.values():
            assignment_lease_renew(a)
    return done


def _assignments(pairs: set[tuple[int, int]]) -> dict[tuple[int, int], Assignment]:
    """Return each (reviewer, call)'s assignment that its marks belong to: the latest claim not
    given back (held or finished)."""
    out: dict[tuple[int, int], Assignment] = {}
    transcripts = sorted({t for _, t in pairs})
    reviewers = {r for r, _ in pairs}
    for part in chunked(transcripts):
        for a in (
            Assignment.objects.filter(
                reviewer_id__in=reviewers, item__transcript_id__in=part, released_at__isnull=True
            )
            .select_related("item")
            .order_by("claimed_at")
        ):
            key = (a.reviewer_id, a.item.transcript_id)
            if key in pairs:
                out[key] = a  # the latest claim wins
    return out


@transaction.atomic
def mark_set(
    *, reviewer, verdict: Verdict, correct: bool, note: str = "", version: int | None = None
) -> tuple[Mark, bool]:
    """Create or change the reviewer's mark on a verdict (idempotent); errored verdicts cannot be
    marked. Return (the mark, whether it was created).

    The mark is tied to the reviewer's assignment on the call when there is one; a mark made
    outside the sample (through the API) has none and counts with weight 1. With `version` (the
    assignment's version the client saw), a call that changed since is refused (ReviewChanged).
    """
    refusal = mark_refusal(verdict_id=verdict.pk, error=verdict.error)
    if refusal:
        raise DomainError(f"verdict: {refusal}")
    note = _clean_note(note)
    # Locked, checked against the version the caller saw, its lease renewed; marks_write moves
    # the version on only when the mark changes (a repeated press is free).
    _hold(reviewer=reviewer, transcript=verdict.transcript, version=version)
    written = marks_write(
        [MarkInput(verdict.pk, verdict.transcript_id, reviewer.pk, bool(correct), note)]
    )
    mark = Mark.objects.get(verdict=verdict, reviewer=reviewer)
    logger.info(
        "mark_set",
        extra={
            "verdict_id": verdict.pk,
            "reviewer_id": reviewer.pk,
            "correct": bool(correct),
            "mark_created": bool(written.created),
        },
    )
    return mark, bool(written.created)


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
        tally_cells_compact_on_commit()
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
        tally_cells_compact_on_commit()
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
        tally_cells_compact_on_commit()
        logger.info("mark_undone", extra={"verdict_id": verdict.pk, "reviewer_id": reviewer.pk})
    return bool(deleted)
