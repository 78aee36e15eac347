"""Golden sets, release gates, their metrics and runs.

The tables keep the names they had in the evals app (`db_table`).
"""

from django.db import models
from django.db.models import Q

from evals.catalog.models import AgentVersion, Transcript
from evals.judging.models import Judge
from evals.rules.models import Rule, RuleVersion


class GoldenSet(models.Model):
    """A frozen, checksummed list of scenarios. Any change is a new version with a new checksum."""

    name = models.SlugField(max_length=100)
    version = models.PositiveIntegerField(default=1)
    description = models.TextField(blank=True)
    checksum = models.CharField(max_length=64, db_index=True)
    created_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_goldenset"
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="golden_set_version_unique"),
            models.CheckConstraint(condition=Q(version__gte=1), name="golden_set_version_positive"),
        ]

    def __str__(self):
        return f"{self.name} v{self.version}"


class GoldenSetMember(models.Model):
    """A scenario of a golden set, optionally pinned to a recorded call and that call's checksum."""

    golden_set = models.ForeignKey(GoldenSet, on_delete=models.CASCADE, related_name="members")
    position = models.PositiveIntegerField()
    scenario = models.CharField(max_length=200)
    transcript = models.ForeignKey(
        Transcript,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="golden_memberships",
    )
    transcript_external_id = models.CharField(max_length=200, blank=True)
    transcript_checksum = models.CharField(max_length=64, blank=True)

    class Meta:
        db_table = "evals_goldensetmember"
        ordering = ["golden_set", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["golden_set", "scenario"], name="golden_member_scenario_unique"
            ),
        ]

    def __str__(self):
        return f"{self.golden_set} {self.scenario}"


class Gate(models.Model):
    """A release gate: a golden set and metrics, each with one threshold; all must pass."""

    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    golden_set = models.ForeignKey(GoldenSet, on_delete=models.PROTECT, related_name="gates")
    judge = models.ForeignKey(
        Judge, on_delete=models.PROTECT, null=True, blank=True, related_name="gates"
    )
    created_by = models.CharField(max_length=150, blank=True)
    updated_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "evals_gate"
        ordering = ["name"]

    def __str__(self):
        return self.name


class GateMetric(models.Model):
    """One metric of a gate with its single threshold (or tolerance against the baseline)."""

    gate = models.ForeignKey(Gate, on_delete=models.CASCADE, related_name="metrics")
    position = models.PositiveIntegerField(default=0)
    # The kinds live in one registry, evals.gating.decision.METRIC_KINDS (checked by
    # metric_clean), so a new kind needs no migration.
    kind = models.CharField(max_length=30, help_text="One of evals.gating.decision.METRIC_KINDS.")
    rule = models.ForeignKey(
        Rule, on_delete=models.PROTECT, null=True, blank=True, related_name="gate_metrics"
    )
    group = models.CharField(max_length=100, blank=True)
    measure = models.CharField(
        max_length=50, blank=True, help_text="Detector measure or judge score name."
    )
    threshold = models.FloatField(null=True, blank=True)
    tolerance = models.FloatField(null=True, blank=True)

    class Meta:
        db_table = "evals_gatemetric"
        ordering = ["gate", "position", "pk"]

    def __str__(self):
        return f"{self.gate} {self.kind}"


class GateRun(models.Model):
    """One evaluation of a gate on a candidate agent version, with exactly what it used."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        PASS = "pass", "pass"
        FAIL = "fail", "fail"
        ERROR = "error", "error"

    gate = models.ForeignKey(Gate, on_delete=models.CASCADE, related_name="runs")
    candidate = models.ForeignKey(AgentVersion, on_delete=models.PROTECT, related_name="gate_runs")
    baseline = models.ForeignKey(
        AgentVersion,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="baseline_gate_runs",
    )
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    judge_missing_verdicts = models.BooleanField(
        default=True, help_text="Ask the judge runner for verdicts the golden-set calls lack."
    )
    golden_set = models.ForeignKey(
        GoldenSet, on_delete=models.PROTECT, null=True, related_name="gate_runs"
    )
    golden_set_checksum = models.CharField(max_length=64, blank=True)
    judge = models.ForeignKey(
        Judge, on_delete=models.PROTECT, null=True, blank=True, related_name="gate_runs"
    )
    rule_versions = models.ManyToManyField(RuleVersion, blank=True, related_name="gate_runs")
    results = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    judged = models.PositiveIntegerField(
        default=0, help_text="Verdicts the judge runner added for this run."
    )
    started_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="The lease of the worker taking its steps, renewed each step.",
    )
    recoveries = models.PositiveSmallIntegerField(
        default=0, help_text="Times the sweep queued it again after its worker stopped."
    )

    class Meta:
        db_table = "evals_gaterun"
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["gate", "status", "created_at"], name="gate_run_gate_status")
        ]

    def __str__(self):
        return f"gate run {self.pk} {self.gate} {self.candidate}"

    @property
    def passed(self) -> bool:
        return self.status == self.Status.PASS
