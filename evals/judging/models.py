"""What produced a verdict (judges), judge runs and their items, the judge's cache, verdicts.

The tables keep the names they had in the evals app (`db_table`).
"""

from django.db import models
from django.db.models import Q

from evals.catalog.models import Transcript
from evals.rules.models import RuleVersion, Severity


class Judge(models.Model):
    """What produced a verdict: an LLM model with a prompt version, a detector, or an import."""

    class Kind(models.TextChoices):
        LLM = "llm", "LLM judge"
        DETECTOR = "detector", "detector"
        CLASSIFIER = "classifier", "classifier"
        EXTERNAL = "external", "external"

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.EXTERNAL)
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_judge"
        ordering = ["name"]

    def __str__(self):
        return self.name

    @property
    def prompt_order(self) -> tuple[str, str]:
        """Return (the name without its prompt order, "ab" or "ba"). A pairwise judge run with its
        two outputs in both orders is two judges: NAME (or NAME@ab) and NAME@ba (or
        NAME@swapped); their agreement is the judge's positional agreement."""
        base, sep, order = self.name.rpartition("@")
        if sep and base and order in ORDERS:
            return base, ORDERS[order]
        return self.name, "ab"


# A judge name's prompt-order suffix (Judge.prompt_order).
ORDERS = {"ab": "ab", "ba": "ba", "swapped": "ba"}


class JudgeRun(models.Model):
    """One run of the judge runner over a set of transcripts and rules, with its costs."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        DONE = "done", "done"
        STOPPED = "stopped", "stopped (cost cap or judge failing)"
        FAILED = "failed", "failed"

    judge = models.ForeignKey(
        Judge, on_delete=models.PROTECT, null=True, blank=True, related_name="runs"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    params = models.JSONField(default=dict, blank=True)
    started_by = models.CharField(max_length=150, blank=True)
    tasks_total = models.PositiveIntegerField(default=0)
    tasks_done = models.PositiveIntegerField(default=0)
    calls_made = models.PositiveIntegerField(default=0)
    cache_hits = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    errors = models.PositiveIntegerField(default=0)
    stop_reason = models.CharField(max_length=300, blank=True)
    consecutive_failures = models.PositiveIntegerField(
        default=0,
        help_text="Judge calls failed in a row (the run stops at JUDGE_BREAKER_FAILURES).",
    )
    replaced = models.PositiveIntegerField(
        default=0,
        help_text="Checks cancelled because their call was replaced during the run: no verdict.",
    )
    recovered_at = models.DateTimeField(
        null=True, blank=True, help_text="When the sweep last queued its checks again."
    )
    recoveries = models.PositiveSmallIntegerField(
        default=0,
        help_text="Times in a row the sweep queued its checks again without the run moving on "
        "(it fails past DOCKET_RUN_MAX_RECOVERIES).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "evals_judgerun"
        ordering = ["-created_at"]

    def __str__(self):
        return f"judge run {self.pk}"


class Verdict(models.Model):
    """One check of one transcript against one rule version by one judge. Negative verdicts too."""

    # No single-column indexes on these two: verdict_key_unique (transcript, ...) and
    # verdict_rv_judge (rule_version, ...) start with them, and every index fewer speeds up bulk
    # imports. The three keys are checked once per statement, not per row (core.bulk_keys,
    # registered in apps.py): a declared key's per-row lookups cost three times a bare COPY.
    transcript = models.ForeignKey(
        Transcript,
        on_delete=models.CASCADE,
        related_name="verdicts",
        db_index=False,
        db_constraint=False,
    )
    rule_version = models.ForeignKey(
        RuleVersion,
        on_delete=models.PROTECT,
        related_name="verdicts",
        db_index=False,
        db_constraint=False,
    )
    judge = models.ForeignKey(
        Judge, on_delete=models.PROTECT, related_name="verdicts", db_constraint=False
    )
    judge_run = models.ForeignKey(
        JudgeRun,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="verdicts",
        db_index=False,
    )  # indexed by verdict_judge_run only where set: imported verdicts have none
    flagged = models.BooleanField()
    turn = models.PositiveIntegerField(null=True, blank=True)
    turns = models.JSONField(default=list, blank=True)
    severity = models.CharField(max_length=10, choices=Severity.choices, blank=True)
    rationale = models.TextField(blank=True)
    confidence = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(
        blank=True, help_text="Non-empty when the check failed; excluded from every figure."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_verdict"
        ordering = ["transcript", "rule_version"]
        constraints = [
            models.UniqueConstraint(
                fields=["transcript", "rule_version", "judge"], name="verdict_key_unique"
            ),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | Q(confidence__lte=100),
                name="verdict_confidence_range",
            ),
            models.CheckConstraint(
                condition=Q(flagged=True) | Q(turn__isnull=True),
                name="verdict_unflagged_cites_no_turn",
            ),
        ]
        indexes = [
            models.Index(fields=["rule_version", "judge"], name="verdict_rv_judge"),
            models.Index(
                fields=["judge_run"], name="verdict_judge_run", condition=Q(judge_run__isnull=False)
            ),
            # Just the flagged verdicts (a few in a hundred), newest first per rule version: the
            # verdicts page and API filtered to a rule's flagged verdicts read these instead of
            # every verdict of the rule (491 -> 22 ms at 4.2M verdicts).
            models.Index(
                fields=["rule_version", "id"], name="verdict_flagged", condition=Q(flagged=True)
            ),
            # Just the errored verdicts (a few in a hundred): calibration counts them per rule
            # version and judge, and finds their calls, without reading the others.
            models.Index(
                fields=["rule_version", "judge", "transcript"],
                name="verdict_errored",
                condition=~Q(error=""),
            ),
        ]

    def __str__(self):
        return f"{self.transcript_id}/{self.rule_version_id}/{self.judge_id}"

    @property
    def errored(self) -> bool:
        return bool(self.error)


class VerdictCount(models.Model):
    """How many verdicts one judge gave on one rule version for calls of one agent version, how
    many of them flagged (and not errored) and how many errored: the dashboard's, rules list's
    and rule page's figures. The rows are deltas appended by database triggers on verdicts and
    calls (evals.judging.services.counts); a count is the sum of its rows, folded into one by
    `verdict_counts_compact` and checked by `verdict_counts_rebuild --check`."""

    rule_version = models.ForeignKey(
        RuleVersion, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="+", db_index=False)
    agent_version = models.ForeignKey(
        "catalog.AgentVersion", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    n = models.BigIntegerField(help_text="Verdicts added (negative: removed).")
    flagged = models.BigIntegerField(help_text="Of those, flagged and not errored.")
    errored = models.BigIntegerField(help_text="Of those, errored.")

    class Meta:
        db_table = "evals_verdictcount"

    def __str__(self):
        return f"{self.rule_version_id}/{self.judge_id}/{self.agent_version_id}"


class JudgeRunItem(models.Model):
    """One unit of a judge run: one transcript against one
    rule group (one LLM call), or its detector rules."""

    class Kind(models.TextChoices):
        # Other apps add kinds of their own (evals.judging.registry.ITEM_KINDS), so `kind`
        # takes any of those as well.
        LLM = "llm", "LLM call"
        DETECTORS = "detectors", "detectors"

    class Outcome(models.TextChoices):
        PENDING = "pending", "pending"
        CALLED = "called", "called"
        CACHED = "cached", "cache hit"
        DETECTED = "detected", "detectors ran"
        ERROR = "error", "error"
        SKIPPED = "skipped", "skipped (cost cap)"
        EMPTY = "empty", "no agent turns in scope"
        REPLACED = "replaced", "cancelled: the call was replaced"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="items")
    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="judge_run_items"
    )
    kind = models.CharField(
        max_length=12, help_text="llm, detectors, or a kind another app registered (registry)"
    )
    group = models.CharField(max_length=100, blank=True)
    phase = models.CharField(max_length=50, blank=True)
    rule_version_ids = models.JSONField(default=list)
    checksum = models.CharField(
        max_length=64,
        blank=True,
        help_text="The call's checksum when the check was planned: its verdicts are stored only "
        "if the call still has that content when the check ends.",
    )
    outcome = models.CharField(
        max_length=10, choices=Outcome.choices, default=Outcome.PENDING, db_index=True
    )
    error = models.TextField(blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="The lease of the worker running it, renewed while it runs (claimed when set).",
    )

    class Meta:
        db_table = "evals_judgerunitem"
        ordering = ["run", "pk"]
        indexes = [models.Index(fields=["run", "outcome"], name="judge_run_item_outcome")]

    def __str__(self):
        return f"run {self.run_id} item {self.pk}"


class JudgeCacheEntry(models.Model):
    """A parsed judge answer, keyed on (transcript checksum,
    group's rule versions, model, prompt version)."""

    key = models.CharField(max_length=64, unique=True)
    model = models.CharField(max_length=200)
    prompt_version = models.CharField(max_length=100)
    answer = models.JSONField()
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_judgecacheentry"
        verbose_name_plural = "judge cache entries"

    def __str__(self):
        return self.key[:12]
