"""Outcomes: was the call actually good? A question per agent, a 1-5 rating per reviewer and call.

Imported by labeling.models (the app's model module); kept apart so the outcome layer reads as one
piece.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from evals.catalog.models import Agent, Transcript

RATING_MIN, RATING_MAX = 1, 5
# At or below this rating a reason is required, and the call counts as a bad outcome.
BAD_AT_MOST = 2
DEFAULT_QUESTION_KEY = "overall"
DEFAULT_QUESTION_TEXT = "Was this call good for the candidate and the company?"


class OutcomeQuestion(models.Model):
    """A question reviewers answer about a whole call of one agent, on a 1-5 scale."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="outcome_questions")
    key = models.SlugField(max_length=50, help_text="Stable id, e.g. overall.")
    text = models.CharField(max_length=300)
    position = models.PositiveSmallIntegerField(default=0, help_text="Order on the review page.")
    active = models.BooleanField(default=True, help_text="Inactive: kept for its ratings only.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["agent__name", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "key"], name="outcome_question_key_unique")
        ]

    def __str__(self):
        return f"{self.agent.name}: {self.key}"


class OutcomeRating(models.Model):
    """One reviewer's answer to one outcome question on one call. Rating again replaces it."""

    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="outcome_ratings"
    )
    question = models.ForeignKey(OutcomeQuestion, on_delete=models.PROTECT, related_name="ratings")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="outcome_ratings"
    )
    rating = models.PositiveSmallIntegerField()
    reason = models.TextField(
        blank=True, help_text=f"Required for a rating of {BAD_AT_MOST} or less."
    )
    key_factor = models.CharField(
        max_length=300, blank=True, help_text="The one thing that made the call good or bad."
    )
    assignment = models.ForeignKey(
        "labeling.Assignment",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="outcome_ratings",
        help_text="The claim it was given under; its sample item weighs it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["transcript", "question", "reviewer"], name="outcome_rating_once"
            ),
            models.CheckConstraint(
                condition=Q(rating__gte=RATING_MIN, rating__lte=RATING_MAX),
                name="outcome_rating_range",
            ),
            models.CheckConstraint(
                condition=Q(rating__gt=BAD_AT_MOST) | ~Q(reason=""),
                name="outcome_rating_bad_has_reason",
            ),
        ]

    def __str__(self):
        return f"{self.rating} on {self.transcript_id}"
