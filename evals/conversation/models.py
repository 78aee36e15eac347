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
