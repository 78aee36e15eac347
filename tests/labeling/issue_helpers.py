"""Builders shared by the issue sheet tests: calls with
turns, and rows filed through issue_row_create."""

from evals.rules.models import Rule
from evals.rules.services import rule_create
from labeling.services.issue_rows import issue_row_create
from tests.factories import TranscriptFactory, TurnFactory


def call_with_turns(n: int = 6, **kwargs):
    """Return a transcript with n turns (0..n-1), timed, alternating agent and user."""
    t = TranscriptFactory(**kwargs)
    for i in range(n):
        TurnFactory(
            transcript=t,
            index=i,
            speaker="agent" if i % 2 == 0 else "user",
            start_ms=i * 5000,
            end_ms=i * 5000 + 4000,
            phase="asking" if i > 1 else "opening",
        )
    return t


def file_row(
    reporter,
    transcript=None,
    *,
    turn=2,
    what="Asked two questions at once",
    severity="major",
    audio_only=False,
):
    """File a row the way a reviewer does."""
    transcript = transcript or call_with_turns()
    return issue_row_create(
        reporter=reporter,
        transcript=transcript,
        turn=turn,
        what=what,
        severity=severity,
        audio_only=audio_only,
    )


def gated_rule(rule_id="asking.one-question", text="Ask one question per turn."):
    """Return a rule whose version 1 is in the gate."""
    version = rule_create(rule_id=rule_id, group="asking", text=text, severity="major")
    version.status = "gated"
    version.save(update_fields=["status"])
    return Rule.objects.get(pk=version.rule_id)
