"""Settlements: a lead decides a verdict whose reviewers disagree."""

import logging

from django.core.exceptions import PermissionDenied
from django.db import transaction

from core.errors import DomainError
from core.permissions import user_can
from evals.judging.models import Verdict
from labeling.models import Settlement
from labeling.services.tally_cells import tally_cells_compact_on_commit

logger = logging.getLogger(__name__)


@transaction.atomic
def verdict_settle(*, verdict: Verdict, actor, correct: bool, reason: str = "") -> Settlement:
    """Record (or change) a lead's decision that the
    verdict is right or wrong; it overrides the marks."""
    if not user_can(actor, "promote"):
        raise PermissionDenied("Only leads (permission: promote) can settle disagreements.")
    if verdict.error:
        raise DomainError(
            f"verdict: {verdict.pk} errored in the judge; errored verdicts are not counted."
        )
    if not verdict.marks.exists():
        raise DomainError(f"verdict: {verdict.pk} has no marks; there is nothing to settle.")
    reason = " ".join((reason or "").split())
    max_len = Settlement._meta.get_field("reason").max_length
    if len(reason) > max_len:
        raise DomainError(f"reason: at most {max_len} characters, got {len(reason)}.")
    settlement, created = Settlement.objects.update_or_create(
        verdict=verdict, defaults={"correct": bool(correct), "settled_by": actor, "reason": reason}
    )
    tally_cells_compact_on_commit()
    logger.info(
        "verdict_settled",
        extra={
            "verdict_id": verdict.pk,
            "actor_id": actor.pk,
            "correct": bool(correct),
            "new": created,
        },
    )
    return settlement
