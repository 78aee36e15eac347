"""The review queue: claim the next sampled call under a lease, skip it, finish it.

Claiming is atomic. On PostgreSQL candidate items are locked with SELECT ... FOR UPDATE SKIP LOCKED
and re-counted after the lock (a READ COMMITTED statement sees only what was committed when it
started, so the count in the locking query can be stale); on SQLite every transaction begins
IMMEDIATE (see settings), so claims are serialized. A reviewer's own row is locked first so two
tabs of one reviewer cannot claim two calls at once.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from core.errors import DomainError
from evals.catalog.models import Transcript
from labeling.models import Assignment
from labeling.selectors.queue import (
    ReviewQueue,
    assignment_held,
    assignments_holding,
    sample_items_claimable,
    verdicts_unmarked_count,
)

logger = logging.getLogger(__name__)


def _slots_taken(item_id: int, now) -> int:
    return Assignment.objects.filter(assignments_holding(now), item_id=item_id).count()


@transaction.atomic
def sample_claim_next(*, reviewer, queue: ReviewQueue | None = None) -> Assignment | None:
    """Return the reviewer's held call (lease renewed), else claim the next open one (of the
    chosen queue), else None."""
    get_user_model().objects.select_for_update().filter(pk=reviewer.pk).first()
    now = timezone.now()
    lease = timedelta(minutes=settings.DOCKET_LEASE_MINUTES)
    held = assignment_held(reviewer=reviewer, now=now)
    if held is not None:
        held.lease_expires_at = now + lease
        held.save(update_fields=["lease_expires_at"])
        return held

    skip_locked = connection.features.has_select_for_update_skip_locked
    passed: list[int] = []
    for _ in range(50):
        qs = sample_items_claimable(reviewer=reviewer, now=now, queue=queue).exclude(pk__in=passed)
        if skip_locked:
            qs = qs.select_for_update(skip_locked=True, of=("self",))
        item = qs.first()
        if item is None:
            return None
        if skip_locked and _slots_taken(item.pk, timezone.now()) >= item.reviews_needed:
            passed.append(item.pk)  # filled by a claim that committed after our query began
            continue
        assignment = Assignment.objects.create(
            item=item, reviewer=reviewer, claimed_at=now, lease_expires_at=now + lease
        )
        logger.info(
            "sample_item_claimed",
            extra={
                "item_id": item.pk,
                "transcript_id": item.transcript_id,
                "reviewer_id": reviewer.pk,
            },
        )
        return assignment
    return None


def _assignment_for(*, reviewer, transcript: Transcript, lock: bool = True) -> Assignment:
    qs = Assignment.objects.filter(
        reviewer=reviewer, item__transcript=transcript, released_at__isnull=True
    )
    if lock:
        qs = qs.select_for_update()
    assignment = qs.order_by(F("finished_at").asc(nulls_first=True), "-claimed_at").first()
    if assignment is None:
        raise DomainError(
            f"transcript: {transcript.external_id} is not "
            "held by you; claim it from the queue first."
        )
    return assignment


@transaction.atomic
def assignment_skip(*, reviewer, transcript: Transcript) -> Assignment:
    """Give the held call back to the queue for someone else."""
    assignment = _assignment_for(reviewer=reviewer, transcript=transcript)
    if assignment.finished_at is not None:
        raise DomainError(
            f"transcript: {transcript.external_id} is already finished; it cannot be skipped."
        )
    assignment.released_at = timezone.now()
    assignment.save(update_fields=["released_at"])
    logger.info(
        "assignment_skipped", extra={"assignment_id": assignment.pk, "reviewer_id": reviewer.pk}
    )
    return assignment


@transaction.atomic
def assignment_finish(*, reviewer, transcript: Transcript) -> Assignment:
    """Finish the held call once every verdict on it carries this reviewer's mark (idempotent)."""
    assignment = _assignment_for(reviewer=reviewer, transcript=transcript)
    if assignment.finished_at is not None:
        return assignment
    left = verdicts_unmarked_count(reviewer=reviewer, transcript=transcript)
    if left:
        raise DomainError(
            f"transcript: {transcript.external_id} has {left} verdict{'s' if left != 1 else ''} "
            "without your mark; mark every verdict before finishing."
        )
    assignment.finished_at = timezone.now()
    assignment.save(update_fields=["finished_at"])
    logger.info(
        "assignment_finished", extra={"assignment_id": assignment.pk, "reviewer_id": reviewer.pk}
    )
    return assignment
