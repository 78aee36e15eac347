"""Conduct rules and their immutable versions.

The tables keep the names they had in the evals app (`db_table`).
"""

from django.db import models
from django.db.models import Q


class Severity(models.TextChoices):
    MINOR = "minor", "minor"
    MAJOR = "major", "major"
    CRITICAL = "critical", "critical"


class Rule(models.Model):
    """A conduct rule: stable id, group, optional phase and detector. Its text lives in versions."""

    class Status(models.TextChoices):
        ACTIVE = "active", "active"
        RETIRED = "retired", "retired"

    rule_id = models.CharField(max_length=200, unique=True)
    group = models.CharField(max_length=100, db_index=True)
    phase = models.CharField(max_length=50, blank=True)
    severity = models.CharField(max_length=10, choices=Severity.choices, default=Severity.MAJOR)
    safety = models.BooleanField(default=False)
    detector = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_rule"
        ordering = ["group", "rule_id"]

    def __str__(self):
        return self.rule_id


class RuleVersion(models.Model):
    """Immutable text (and detector) of a rule. Editing a rule creates version n+1."""

    class Status(models.TextChoices):
        DRAFT = "draft", "draft"
        CANDIDATE = "candidate", "candidate"
        GATED = "gated", "gated"
        RETIRED = "retired", "retired"

    rule = models.ForeignKey(Rule, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    text = models.TextField()
    detector = models.JSONField(null=True, blank=True)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.CANDIDATE, db_index=True
    )
    source = models.CharField(max_length=200, blank=True, help_text="Where this version came from.")
    estimate = models.JSONField(
        null=True,
        blank=True,
        help_text="Figures estimated before it had marks of its own: the rule workbench's, from "
        "an earlier version's marks, or why that version's truth was not carried.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_ruleversion"
        ordering = ["rule__rule_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["rule", "number"], name="rule_version_number_unique"),
            models.CheckConstraint(condition=Q(number__gte=1), name="rule_version_number_positive"),
        ]

    def __str__(self):
        return f"{self.rule.rule_id} v{self.number}"
