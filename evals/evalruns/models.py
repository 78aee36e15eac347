"""Dataset evals: versioned datasets of rows, and eval runs that score an agent version on one.

The tables keep the names they had in the evals app (`db_table`).
"""

from django.db import models
from django.db.models import Q

from evals.catalog.models import AgentVersion, Transcript


class Dataset(models.Model):
    """A frozen, checksummed set of rows. Changed content is a new version; the same is a no-op."""

    name = models.SlugField(max_length=100)
    version = models.PositiveIntegerField(default=1)
    checksum = models.CharField(max_length=64, db_index=True)
    description = models.TextField(blank=True)
    rows_count = models.PositiveIntegerField(default=0)
    created_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_dataset"
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="dataset_version_unique"),
            models.CheckConstraint(condition=Q(version__gte=1), name="dataset_version_positive"),
        ]

    def __str__(self):
        return f"{self.name} v{self.version}"


class DatasetRow(models.Model):
    """One row: the input messages, the tools the agent may call, an optional reference answer."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="rows")
    position = models.PositiveIntegerField()
    row_id = models.CharField(max_length=200)
    messages = models.JSONField(default=list)
    tools = models.JSONField(default=list, blank=True)
    reference = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "evals_datasetrow"
        ordering = ["dataset", "position"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "row_id"], name="dataset_row_id_unique"),
        ]

    def __str__(self):
        return f"{self.dataset} {self.row_id}"


class EvalRun(models.Model):
    """One scoring of an agent version on a dataset under one rubric, with its costs."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        DONE = "done", "done"
        STOPPED = "stopped", "stopped (cost cap or failing calls)"
        FAILED = "failed", "failed"

    class Source(models.TextChoices):
        AGENT = "agent", "agent called"
        RECORDED = "recorded", "recorded outputs"

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="eval_runs")
    agent_version = models.ForeignKey(
        AgentVersion, on_delete=models.PROTECT, related_name="eval_runs"
    )
    rubric = models.CharField(max_length=30)
    rubric_text = models.TextField(blank=True, help_text="The custom rubric's text.")
    threshold = models.PositiveSmallIntegerField(default=70)
    concurrency = models.PositiveSmallIntegerField(default=5)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.AGENT)
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    judge_model = models.CharField(max_length=200, blank=True)
    agent_model = models.CharField(max_length=200, blank=True)
    cost_cap = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    rows_total = models.PositiveIntegerField(default=0)
    rows_done = models.PositiveIntegerField(default=0)
    rows_scored = models.PositiveIntegerField(default=0)
    rows_passed = models.PositiveIntegerField(default=0)
    rows_errored = models.PositiveIntegerField(default=0)
    mean_score = models.FloatField(null=True, blank=True)
    pass_rate = models.FloatField(
        null=True, blank=True, help_text="Percent of scored rows at or above the threshold."
    )
    max_drop = models.FloatField(
        default=5.0, help_text="Pass-rate points the run may lose to its baseline."
    )
    baseline = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    regressed = models.BooleanField(
        default=False, help_text="Its pass rate dropped by more than max_drop."
    )
    stop_reason = models.CharField(max_length=300, blank=True)
    started_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="The lease of the worker running it, renewed while it runs.",
    )
    recoveries = models.PositiveSmallIntegerField(
        default=0, help_text="Times the sweep resumed it after its worker stopped."
    )

    class Meta:
        db_table = "evals_evalrun"
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(threshold__lte=100), name="eval_run_threshold_range"
            ),
        ]

    def __str__(self):
        return f"eval run {self.pk}"

    @property
    def green(self) -> bool:
        """Finished, every row done, something scored, and no regression: a baseline for later."""
        return self.status == self.Status.DONE and self.rows_scored > 0 and not self.regressed


class EvalRunRow(models.Model):
    """One dataset row in a run: what the agent did, the judge's reason and score, or the error."""

    class Outcome(models.TextChoices):
        PENDING = "pending", "pending"
        SCORED = "scored", "scored"
        ERROR = "error", "error"
        SKIPPED = "skipped", "skipped (cost cap or stopped)"

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="rows")
    dataset_row = models.ForeignKey(DatasetRow, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.PENDING)
    transcript = models.ForeignKey(
        Transcript, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    output = models.TextField(blank=True)
    tool_calls = models.JSONField(default=list, blank=True)
    score = models.PositiveSmallIntegerField(null=True, blank=True)
    passed = models.BooleanField(null=True, blank=True)
    reason = models.TextField(blank=True)
    error = models.TextField(blank=True)
    cached = models.BooleanField(default=False)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)

    class Meta:
        db_table = "evals_evalrunrow"
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "dataset_row"], name="eval_run_row_unique"),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__lte=100), name="eval_run_row_score_range"
            ),
        ]

    def __str__(self):
        return f"run {self.run_id} row {self.position}"
