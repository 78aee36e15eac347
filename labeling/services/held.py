"""A reviewer's assignment on a call, as the services that change it see it: locked, checked
against the version the page or client last saw, and moved on to the next version.

Every change to the reviewer's marks on a call, and finishing or skipping it, moves the
assignment's version on. A client that sends the version it saw (the review page always does; the
API may) is refused with `ReviewChanged` when the call changed since: a mark from a second tab
that missed a finish, or missed another tab's mark, is neither applied nor dropped silently.
Without a version the change applies as before (the last write wins).
"""

from datetime import timedelta

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from core.errors import Conflict
from labeling.models import Assignment


class ReviewChanged(Conflict):
    """The call changed since the page or client read it (another tab, window or client)."""


class NotHeld(Conflict):
    """The call is in review by other reviewers, and not by this one."""

    code = "not_held"


def assignment_own(*, reviewer, transcript) -> Assignment | None:
    """Return the reviewer's assignment on the call (its lease renewed while held), or None when
    no reviewer has one (a call outside the sample, weighed 1).

    Refuses (NotHeld) when other reviewers hold or finished the call and this one does not: a
    label or a rating on it belongs to the reviewers it was given to, so one reviewer's answer
    cannot settle a sampled call, by the page or by the API alike.
    """
    assignment = assignment_renewed(reviewer=reviewer, transcript_id=transcript.pk)
    if assignment is None and (
        Assignment.objects.filter(item__transcript_id=transcript.pk, released_at__isnull=True)
        .exclude(reviewer=reviewer)
        .exists()
    ):
        raise NotHeld(
            f"{transcript.external_id} is not held by you: another reviewer holds it.",
            field="transcript",
        )
    return assignment


def assignment_locked(*, reviewer, transcript_id: int) -> Assignment | None:
    """Return the reviewer's assignment on the call that is not given back (the unfinished one
    first), locked for the transaction, or None."""
    return (
        Assignment.objects.select_for_update()
        .filter(reviewer=reviewer, item__transcript_id=transcript_id, released_at__isnull=True)
        .select_related("item__transcript")
        .order_by(F("finished_at").asc(nulls_first=True), "-claimed_at")
        .first()
    )


def assignment_lease_renew(assignment: Assignment) -> None:
    """Working on a call keeps it held: renew the lease once half of it has run out."""
    lease = timedelta(minutes=settings.DOCKET_LEASE_MINUTES)
    now = timezone.now()
    if assignment.finished_at is None and assignment.lease_expires_at - now < lease / 2:
        Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=now + lease)


def assignment_renewed(*, reviewer, transcript_id: int) -> Assignment | None:
    """Return the reviewer's assignment on the call (its lease renewed while held), or None."""
    assignment = (
        Assignment.objects.filter(
            reviewer=reviewer, item__transcript_id=transcript_id, released_at__isnull=True
        )
        .order_by("-claimed_at")
        .first()
    )
    if assignment is not None:
        assignment_lease_renew(assignment)
    return assignment


def assignment_version_check(
    *, assignment: Assignment | None, version: int | None, external_id: str
) -> None:
    """Refuse (ReviewChanged) when `version` is given and is not the assignment's current one."""
    if version is None:
        return
    if assignment is None:
        raise ReviewChanged(
            f"{external_id} is no longer held by you (skipped or given back in another tab or "
            "window): not saved.",
            field="version",
        )
    if assignment.version == version:
        return
    how = (
        f"finished at {timezone.localtime(assignment.finished_at):%H:%M}"
        if assignment.finished_at
        else "your marks on it changed"
    )
    raise ReviewChanged(
        f"{external_id} changed in another tab or window since this view of it ({how}): "
        "not saved. Look at it again, and mark again if you still mean it.",
        field="version",
    )


def assignment_version_bump(*assignments: Assignment | None) -> None:
    """Move the assignments on to their next version (in the database and on the instances)."""
    found = [a for a in assignments if a is not None]
    if not found:
        return
    Assignment.objects.filter(pk__in=[a.pk for a in found]).update(version=F("version") + 1)
    for a in found:
        a.version += 1
