"""Judged material: agents, transcripts, rules and their versions, judges and verdicts."""

from django.db import models
from django.db.models import Q


class Severity(models.TextChoices):
    MINOR = "minor", "minor"
    MAJOR = "major", "major"
    CRITICAL = "critical", "critical"


class Agent(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    conversation_plan = models.JSONField(
        default=list,
        blank=True,
        help_text="The phases of a call, in order, for the conversation judge.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class AgentVersion(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="versions")
    version = models.CharField(max_length=100)
    notes = models.TextField(blank=True)
    # The agent's scope: its system prompt and the tools it may call ({name, description,
    # parameters}). Runtime classifiers and the tool_selection judge measure against these.
    instructions = models.TextField(blank=True)
    tools = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["agent__name", "version"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "version"], name="agent_version_unique")
        ]

    def __str__(self):
        return f"{self.agent.name} {self.version}"


class Transcript(models.Model):
    """One conversation. `external_id` is the id callers
    use; `checksum` pins its canonical turns."""

    external_id = models.CharField(max_length=200, unique=True)
    agent_version = models.ForeignKey(
        AgentVersion, on_delete=models.PROTECT, related_name="transcripts"
    )
    checksum = models.CharField(max_length=64, db_index=True)
    audio_url = models.CharField(max_length=2000, blank=True)
    language = models.CharField(max_length=20, blank=True)
    scenario = models.CharField(max_length=200, blank=True, db_index=True)
    tenant = models.CharField(max_length=200, blank=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True, db_index=True)
    imported_at = models.DateTimeField(auto_now_add=True, db_index=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-started_at", "external_id"]

    def __str__(self):
        return self.external_id


class Turn(models.Model):
    class Speaker(models.TextChoices):
        AGENT = "agent", "agent"
        USER = "user", "user"
        TOOL = "tool", "tool"
        SYSTEM = "system", "system"

    # One vocabulary for speakers on every page; "user" is the person the agent talks to.
    SPEAKER_LABELS = {"agent": "Agent", "user": "User", "tool": "Tool", "system": "System"}

    # turn_index_unique (transcript, index) serves
    # lookups by transcript: no second index to maintain.
    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="turns", db_index=False
    )
    index = models.PositiveIntegerField()
    speaker = models.CharField(max_length=10, choices=Speaker.choices)
    text = models.TextField(blank=True)
    start_ms = models.PositiveIntegerField(null=True, blank=True)
    end_ms = models.PositiveIntegerField(null=True, blank=True)
    asr_confidence = models.FloatField(null=True, blank=True)
    phase = models.CharField(max_length=50, blank=True)
    tool_calls = models.JSONField(default=list, blank=True)
    tool_call_id = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["transcript", "index"]
        constraints = [
            models.UniqueConstraint(fields=["transcript", "index"], name="turn_index_unique"),
            models.CheckConstraint(
                condition=Q(asr_confidence__isnull=True)
                | Q(asr_confidence__gte=0, asr_confidence__lte=1),
                name="turn_asr_confidence_range",
            ),
        ]

    def __str__(self):
        return f"{self.transcript_id}#{self.index}"

    @property
    def speaker_label(self) -> str:
        return self.SPEAKER_LABELS.get(self.speaker, self.speaker.capitalize())


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
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["rule__rule_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["rule", "number"], name="rule_version_number_unique"),
            models.CheckConstraint(condition=Q(number__gte=1), name="rule_version_number_positive"),
        ]

    def __str__(self):
        return f"{self.rule.rule_id} v{self.number}"


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
        ordering = ["name"]

    def __str__(self):
        return self.name


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
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"judge run {self.pk}"


class Verdict(models.Model):
    """One check of one transcript against one rule version by one judge. Negative verdicts too."""

    # No single-column indexes on these two: verdict_key_unique (transcript, ...) and
    # verdict_rv_judge (rule_version, ...) start with them, and every index fewer speeds up bulk
    # imports.
    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="verdicts", db_index=False
    )
    rule_version = models.ForeignKey(
        RuleVersion, on_delete=models.PROTECT, related_name="verdicts", db_index=False
    )
    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="verdicts")
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
        ]

    def __str__(self):
        return f"{self.transcript_id}/{self.rule_version_id}/{self.judge_id}"

    @property
    def errored(self) -> bool:
        return bool(self.error)


class VerdictCategory(models.Model):
    """The category a runtime classifier gave a verdict (injection or drift category, or the
    frustration target), so thresholds can be read per category."""

    verdict = models.OneToOneField(
        Verdict, on_delete=models.CASCADE, primary_key=True, related_name="category"
    )
    category = models.CharField(max_length=50, db_index=True)

    def __str__(self):
        return f"{self.verdict_id}: {self.category}"


class GoldenSet(models.Model):
    """A frozen, checksummed list of scenarios. Any change is a new version with a new checksum."""

    name = models.SlugField(max_length=100)
    version = models.PositiveIntegerField(default=1)
    description = models.TextField(blank=True)
    checksum = models.CharField(max_length=64, db_index=True)
    created_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
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
        ordering = ["name"]

    def __str__(self):
        return self.name


class GateMetric(models.Model):
    """One metric of a gate with its single threshold (or tolerance against the baseline)."""

    gate = models.ForeignKey(Gate, on_delete=models.CASCADE, related_name="metrics")
    position = models.PositiveIntegerField(default=0)
    # The kinds live in one registry, evals.gates.METRIC_KINDS (checked by metric_clean), so a new
    # kind needs no migration.
    kind = models.CharField(max_length=30, help_text="One of evals.gates.METRIC_KINDS.")
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

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["gate", "status", "created_at"], name="gate_run_gate_status")
        ]

    def __str__(self):
        return f"gate run {self.pk} {self.gate} {self.candidate}"

    @property
    def passed(self) -> bool:
        return self.status == self.Status.PASS


class JudgeRunItem(models.Model):
    """One unit of a judge run: one transcript against one
    rule group (one LLM call), or its detector rules."""

    class Kind(models.TextChoices):
        LLM = "llm", "LLM call"
        DETECTORS = "detectors", "detectors"
        CONVERSATION = "conversation", "conversation judge call"

    class Outcome(models.TextChoices):
        PENDING = "pending", "pending"
        CALLED = "called", "called"
        CACHED = "cached", "cache hit"
        DETECTED = "detected", "detectors ran"
        ERROR = "error", "error"
        SKIPPED = "skipped", "skipped (cost cap)"
        EMPTY = "empty", "no agent turns in scope"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="items")
    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="judge_run_items"
    )
    kind = models.CharField(max_length=12, choices=Kind.choices)
    group = models.CharField(max_length=100, blank=True)
    phase = models.CharField(max_length=50, blank=True)
    rule_version_ids = models.JSONField(default=list)
    outcome = models.CharField(
        max_length=10, choices=Outcome.choices, default=Outcome.PENDING, db_index=True
    )
    error = models.TextField(blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
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
        verbose_name_plural = "judge cache entries"

    def __str__(self):
        return self.key[:12]


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

    def __str__(self):
        return f"{self.transcript_id}/{self.judge_id}: {self.score}"


# Decision points live in their own module; importing them here registers them with evals.
from evals.models_decisions import Decision, DecisionKind, DecisionKindVersion  # noqa: F401

WEBHOOK_EVENTS = (
    "gate_run.finished",
    "eval_run.finished",
    "rule_version.promoted",
    "rule_version.demoted",
)


class Webhook(models.Model):
    """A URL an operator registered for some events; Docket POSTs each event there, signed with
    `secret` (HMAC-SHA256, see evals.services.webhooks)."""

    url = models.URLField(max_length=2000, help_text="http(s) URL that receives the POSTs.")
    events = models.JSONField(default=list, help_text="Event names, from WEBHOOK_EVENTS.")
    secret = models.CharField(max_length=200, help_text="The HMAC-SHA256 key receivers verify.")
    description = models.CharField(max_length=200, blank=True)
    active = models.BooleanField(default=True)
    created_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self):
        return self.url


class WebhookDelivery(models.Model):
    """One event sent to one webhook: the body as sent, every attempt and the last answer."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        RETRYING = "retrying", "retrying"
        DELIVERED = "delivered", "delivered"
        FAILED = "failed", "failed (gave up)"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    uuid = models.UUIDField(unique=True, help_text="Sent as Docket-Delivery; receivers dedupe.")
    event = models.CharField(max_length=50, db_index=True)
    payload = models.JSONField()
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    attempts = models.JSONField(
        default=list, help_text="One {at, status, error, ms} per attempt, oldest first."
    )
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.TextField(blank=True, help_text="The last answer, clipped.")
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "webhook deliveries"

    def __str__(self):
        return f"{self.event} → {self.webhook_id} ({self.status})"


class AxesReport(models.Model):
    """Trajectories of one agent version scored on the three axes (evals.axes), compared with
    the last green report of the same agent; `passed` (green) unless an axis dropped too far."""

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
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"axes report {self.pk} {self.agent_version}"


# Dataset evals live in their own module; importing them here registers them with the app.
from evals.models_evalruns import Dataset, DatasetRow, EvalRun, EvalRunRow  # noqa: F401
