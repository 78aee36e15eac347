"""The conversation judge's scores of whole calls.

The tables keep the names they had in the evals app (`db_table`).
"""

from django.db import models
from django.db.models import Q

from evals.catalog.models import Transcript
from evals.judging.models import Judge, JudgeRun


class ConversationScore(models.Model):
    """The conversation judge's reading of one whole call: a 1-10 score, its reasons and named
    findings with turns. Its two checks are also verdicts (rules `conversation.*`), so they are
    marked and calibrated like every other check; the score is what gates compare."""

    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="conversation_scores", db_index=False
    )
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="conversation_scores")
    judge_run = models.ForeignKey(
        JudgeRun,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="conversation_scores",
    )
    score = models.PositiveSmallIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    findings = models.JSONField(default=list, blank=True)
    plan = models.JSONField(default=list, blank=True, help_text="The phases the judge was given.")
    error = models.TextField(
        blank=True, help_text="Set when the judgement failed; left out of every figure."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_conversationscore"
        ordering = ["transcript", "judge"]
        constraints = [
            models.UniqueConstraint(
                fields=["transcript", "judge"], name="conversation_score_key_unique"
            ),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__gte=1, score__lte=10),
                name="conversation_score_range",
            ),
        ]
        indexes = [
            # The API's list, lowest score first (errored after): a page of it reads the first
            # rows of this index instead of sorting every score.
            models.Index(
                fields=["error", "score", "transcript", "judge"], name="conversation_score_order"
            )
        ]

    def __str__(self):
        return f"{self.transcript_id}/{self.judge_id}: {self.score}"


class _FigureKey(models.Model):
    """The key of the conversation figures' delta rows: agent version and conversation judge."""

    # No constraint in the database (the ORM still cascades): the triggers append rows here while
    # a flush or a cascade is deleting the scores, after their agent version may be gone.
    agent_version = models.ForeignKey(
        "catalog.AgentVersion",
        on_delete=models.CASCADE,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )
    judge = models.ForeignKey(
        Judge, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False
    )

    class Meta:
        abstract = True


class ConversationSums(_FigureKey):
    """Per agent version and conversation judge: scores counted (errored apart), the sum and sum
    of squares of the scores, and calls with findings: the figures of the conversation pages.
    The rows are deltas appended by database triggers on scores and calls
    (evals.conversation.figures); a figure is the sum of its rows, folded into one by
    `conversation_figures_compact` and checked by `conversation_figures_rebuild --check`."""

    calls = models.BigIntegerField(help_text="Scores without an error.")
    errored = models.BigIntegerField(help_text="Scores with an error.")
    n = models.BigIntegerField(help_text="Scores without an error that have a score.")
    sx = models.BigIntegerField(help_text="Sum of those scores.")
    sxx = models.BigIntegerField(help_text="Sum of their squares.")
    flagged = models.BigIntegerField(help_text="Scores without an error that name findings.")

    class Meta:
        db_table = "evals_conversationsums"
        verbose_name_plural = "conversation sums"

    def __str__(self):
        return f"{self.agent_version_id}/{self.judge_id}: {self.calls} calls"


class ConversationFindingCount(_FigureKey):
    """Per agent version, conversation judge and finding type ('?': none given): how many
    findings the scores without an error name. Delta rows, kept as ConversationSums are."""

    kind = models.TextField(help_text="The finding's type.")
    n = models.BigIntegerField(help_text="Findings added (negative: removed).")

    class Meta:
        db_table = "evals_conversationfindingcount"

    def __str__(self):
        return f"{self.agent_version_id}/{self.judge_id} {self.kind}: {self.n}"
