"""Trajectories of an agent version scored on the three axes.

The tables keep the names they had in the evals app (`db_table`).
"""

from django.db import models

from evals.catalog.models import AgentVersion


class AxesReport(models.Model):
    """Trajectories of one agent version scored on the three axes (evals.trajectories.axes),
    compared with the last green report of the same agent; `passed` (green) unless an axis
    dropped too far."""

    agent_version = models.ForeignKey(
        AgentVersion, on_delete=models.PROTECT, related_name="axes_reports"
    )
    baseline = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    passed = models.BooleanField(default=True, db_index=True)
    max_drop = models.FloatField(default=0.05)
    results = models.JSONField(
        default=dict, blank=True, help_text="overall, tasks, trajectories, comparison"
    )
    created_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "evals_axesreport"
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"axes report {self.pk} {self.agent_version}"
