"""Reviewers' labels on decision points, and the hard moments a lead queues for labeling.

Imported by labeling.models, so Django sees these as labeling models.
"""

from django.conf import settings
from django.db import models

from evals.decisions.models import Decision


class DecisionLabel(models.Model):
    """A reviewer's answer at one decision point: what the agent should have chosen."""

    decision = models.ForeignKey(Decision, on_delete=models.CASCADE, related_name="labels")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="decision_labels"
    )
    answer = models.CharField(max_length=100)
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["decision", "reviewer"], name="decision_label_once_per_reviewer"
            )
        ]

    def __str__(self):
        return f"{self.answer} at {self.decision_id}"


class HardMoment(models.Model):
    """A decision point a lead queued for labeling because it is hard: the agent was unsure, or
    the gap sat near the timing boundary where it decides."""

    decision = models.OneToOneField(Decision, on_delete=models.CASCADE, related_name="hard_moment")
    reason = models.CharField(max_length=200)
    queued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    queued_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-queued_at"]

    def __str__(self):
        return f"hard {self.decision_id}"
