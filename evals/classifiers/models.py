"""The category a runtime classifier gave a verdict.

The tables keep the names they had in the evals app (`db_table`).
"""

from django.db import models

from evals.judging.models import Verdict


class VerdictCategory(models.Model):
    """The category a runtime classifier gave a verdict (injection or drift category, or the
    frustration target), so thresholds can be read per category."""

    verdict = models.OneToOneField(
        Verdict, on_delete=models.CASCADE, primary_key=True, related_name="category"
    )
    category = models.CharField(max_length=50, db_index=True)

    class Meta:
        db_table = "evals_verdictcategory"

    def __str__(self):
        return f"{self.verdict_id}: {self.category}"
