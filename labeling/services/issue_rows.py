"""Issue rows: something bad a reviewer found in a call, numbered 1, 2, 3... for good."""

import logging

from django.db import IntegrityError, connection, transaction
from django.db.models import Max

from core.errors import DomainError
from evals.catalog.models import Transcript, Turn
from evals.rules.models import Severity
from labeling.models import IssueRow, IssueRowEvent

logger = logging.getLogger(__name__)

# Any fixed 64-bit key: pg_advisory_xact_lock serializes numbering across processes until commit.
_NUMBER_LOCK_KEY = 0x646F636B65740001


def _next_number() -> int:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_NUMBER_LOCK_KEY])
    # On SQLite the transaction already holds the write lock (BEGIN IMMEDIATE).
    return (IssueRow.objects.aggregate(n=Max("number"))["n"] or 0) + 1


def issue_row_create(
    *,
    reporter,
    transcript: Transcript,
    turn: int | None,
    what: str,
    severity: str,
    audio_only: bool = False,
    start_ms: int | None = None,
    end_ms: int | None = None,
) -> IssueRow:
    """File an issue row on a call (and turn, or a time range of its recording) with the next
    sequential number. With a range and no turn, the turn is the one spoken at the range's start."""
    what = (what or "").strip()
    if not what:
        raise DomainError(errors={"what": "Say what happened."})
    if severity not in Severity.values:
        raise DomainError(
            errors={"severity": f"Must be one of {', '.join(Severity.values)}, got {severity!r}."}
        )
    if turn is not None and (
        turn < 0 or not Turn.objects.filter(transcript=transcript, index=turn).exists()
    ):
        raise DomainError(errors={"turn": f"{transcript.external_id} has no turn {turn}."})
    if (start_ms is None) != (end_ms is None):
        raise DomainError(errors={"end_ms" if end_ms is None else "start_ms": "Give both ends."})
    if start_ms is not None:
        if start_ms < 0 or end_ms <= start_ms:
            raise DomainError(
                errors={"end_ms": f"The range must end after it starts ({start_ms}–{end_ms} ms)."}
            )
        if turn is None:
            spoken = (
                Turn.objects.filter(transcript=transcript, start_ms__lte=start_ms)
                .order_by("-start_ms", "-index")
                .values_list("index", flat=True)
                .first()
            )
            turn = spoken
    for attempt in range(3):
        try:
            with transaction.atomic():
                row = IssueRow.objects.create(
                    number=_next_number(),
                    transcript=transcript,
                    turn=turn,
                    what=what,
                    severity=severity,
                    audio_only=bool(audio_only),
                    start_ms=start_ms,
                    end_ms=end_ms,
                    reporter=reporter,
                )
                IssueRowEvent.objects.create(
                    row=row, actor=reporter, kind="filed", data={"severity": severity, "turn": turn}
                )
        except IntegrityError:
            if attempt == 2:
                raise
            continue  # another process took the number between our read and write: take the next
        logger.info(
            "issue_row_filed",
            extra={
                "number": row.number,
                "transcript_id": transcript.pk,
                "turn": turn,
                "severity": severity,
            },
        )
        return row
    raise AssertionError("unreachable")
