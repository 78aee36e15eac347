"""The evals tables as 21 migrations (0001_initial to 0014, with five merges) left them, in one.

A database that applied those migrations counts this one as applied (`replaces`); a new database
gets the same tables from here. The calls list's index (newest first, calls without a start time
last) exists on PostgreSQL only: SQLite cannot index `DESC NULLS LAST`.
"""

import django.db.models.deletion
from django.db import migrations, models

TRANSCRIPT_STARTED_DESC = "transcript_started_desc"


def transcript_started_desc_create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS "{TRANSCRIPT_STARTED_DESC}" ON "evals_transcript" '
            '("started_at" DESC NULLS LAST, "id" DESC)'
        )


def transcript_started_desc_drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f'DROP INDEX IF EXISTS "{TRANSCRIPT_STARTED_DESC}"')


class Migration(migrations.Migration):
    initial = True

    replaces = [
        ("evals", "0001_initial"),
        ("evals", "0002_golden_sets_and_gates"),
        ("evals", "0003_judge_run_items_and_cache"),
        ("evals", "0004_drop_fk_indexes_covered_by_unique_keys"),
        ("evals", "0005_transcript_started_desc_index"),
        ("evals", "0006_verdict_judge_run_partial_index"),
        ("evals", "0007_gate_metric_kind_from_registry"),
        ("evals", "0008_gate_run_pending_and_running"),
        ("evals", "0009_judge_run_circuit_breaker"),
        ("evals", "0010_agent_scope"),
        ("evals", "0010_conversation_judge"),
        ("evals", "0010_decision_points"),
        ("evals", "0010_webhooks"),
        ("evals", "0011_axes_reports"),
        ("evals", "0011_merge_20261201_0817"),
        ("evals", "0011_verdict_category"),
        ("evals", "0012_eval_runs"),
        ("evals", "0012_merge_0010_conversation_judge_0011_verdict_category"),
        ("evals", "0012_merge_0011_axes_reports_0011_merge_20261201_0817"),
        ("evals", "0013_merge_20261201_0843"),
        ("evals", "0014_merge_0012_eval_runs_0013_merge_20261201_0843"),
    ]

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="Agent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.SlugField(max_length=100, unique=True)),
                ("description", models.TextField(blank=True)),
                (
                    "conversation_plan",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="The phases of a call, in order, for the conversation judge.",
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["name"],
            },
        ),
        migrations.CreateModel(
            name="DecisionKind",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("kind_id", models.CharField(max_length=50, unique=True)),
                (
                    "status",
                    models.CharField(
                        choices=[("active", "active"), ("retired", "retired")],
                        default="active",
                        max_length=10,
                    ),
                ),
                (
                    "derive",
                    models.CharField(
                        blank=True,
                        choices=[
                            ("", "reported only"),
                            ("turn_gap", "from turn timings (agent start after a user turn)"),
                        ],
                        default="",
                        max_length=20,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["kind_id"],
            },
        ),
        migrations.CreateModel(
            name="Judge",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=200, unique=True)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("llm", "LLM judge"),
                            ("detector", "detector"),
                            ("classifier", "classifier"),
                            ("external", "external"),
                        ],
                        default="external",
                        max_length=12,
                    ),
                ),
                ("model", models.CharField(blank=True, max_length=200)),
                ("prompt_version", models.CharField(blank=True, max_length=100)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["name"],
            },
        ),
        migrations.CreateModel(
            name="JudgeCacheEntry",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("key", models.CharField(max_length=64, unique=True)),
                ("model", models.CharField(max_length=200)),
                ("prompt_version", models.CharField(max_length=100)),
                ("answer", models.JSONField()),
                ("tokens_in", models.PositiveIntegerField(default=0)),
                ("tokens_out", models.PositiveIntegerField(default=0)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "verbose_name_plural": "judge cache entries",
            },
        ),
        migrations.CreateModel(
            name="Rule",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("rule_id", models.CharField(max_length=200, unique=True)),
                ("group", models.CharField(db_index=True, max_length=100)),
                ("phase", models.CharField(blank=True, max_length=50)),
                (
                    "severity",
                    models.CharField(
                        choices=[("minor", "minor"), ("major", "major"), ("critical", "critical")],
                        default="major",
                        max_length=10,
                    ),
                ),
                ("safety", models.BooleanField(default=False)),
                ("detector", models.JSONField(blank=True, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[("active", "active"), ("retired", "retired")],
                        default="active",
                        max_length=10,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["group", "rule_id"],
            },
        ),
        migrations.CreateModel(
            name="Verdict",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("flagged", models.BooleanField()),
                ("turn", models.PositiveIntegerField(blank=True, null=True)),
                ("turns", models.JSONField(blank=True, default=list)),
                (
                    "severity",
                    models.CharField(
                        blank=True,
                        choices=[("minor", "minor"), ("major", "major"), ("critical", "critical")],
                        max_length=10,
                    ),
                ),
                ("rationale", models.TextField(blank=True)),
                ("confidence", models.PositiveSmallIntegerField(blank=True, null=True)),
                (
                    "error",
                    models.TextField(
                        blank=True,
                        help_text="Non-empty when the check failed; excluded from every figure.",
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "judge",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="verdicts",
                        to="evals.judge",
                    ),
                ),
            ],
            options={
                "ordering": ["transcript", "rule_version"],
            },
        ),
        migrations.CreateModel(
            name="Webhook",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "url",
                    models.URLField(
                        help_text="http(s) URL that receives the POSTs.", max_length=2000
                    ),
                ),
                (
                    "events",
                    models.JSONField(default=list, help_text="Event names, from WEBHOOK_EVENTS."),
                ),
                (
                    "secret",
                    models.CharField(
                        help_text="The HMAC-SHA256 key receivers verify.", max_length=200
                    ),
                ),
                ("description", models.CharField(blank=True, max_length=200)),
                ("active", models.BooleanField(default=True)),
                ("created_by", models.CharField(blank=True, max_length=150)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["pk"],
            },
        ),
        migrations.CreateModel(
            name="AgentVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("version", models.CharField(max_length=100)),
                ("notes", models.TextField(blank=True)),
                ("instructions", models.TextField(blank=True)),
                ("tools", models.JSONField(blank=True, default=list)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "agent",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="versions",
                        to="evals.agent",
                    ),
                ),
            ],
            options={
                "ordering": ["agent__name", "version"],
            },
        ),
        migrations.CreateModel(
            name="AxesReport",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("passed", models.BooleanField(db_index=True, default=True)),
                ("max_drop", models.FloatField(default=0.05)),
                (
                    "results",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text="overall, tasks, trajectories, comparison",
                    ),
                ),
                ("created_by", models.CharField(blank=True, max_length=150)),
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                (
                    "agent_version",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="axes_reports",
                        to="evals.agentversion",
                    ),
                ),
                (
                    "baseline",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="evals.axesreport",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-pk"],
            },
        ),
        migrations.CreateModel(
            name="Dataset",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.SlugField(max_length=100)),
                ("version", models.PositiveIntegerField(default=1)),
                ("checksum", models.CharField(db_index=True, max_length=64)),
                ("description", models.TextField(blank=True)),
                ("rows_count", models.PositiveIntegerField(default=0)),
                ("created_by", models.CharField(blank=True, max_length=150)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["name", "-version"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("name", "version"), name="dataset_version_unique"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("version__gte", 1)), name="dataset_version_positive"
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="DatasetRow",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("position", models.PositiveIntegerField()),
                ("row_id", models.CharField(max_length=200)),
                ("messages", models.JSONField(default=list)),
                ("tools", models.JSONField(blank=True, default=list)),
                ("reference", models.TextField(blank=True)),
                ("metadata", models.JSONField(blank=True, default=dict)),
                (
                    "dataset",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rows",
                        to="evals.dataset",
                    ),
                ),
            ],
            options={
                "ordering": ["dataset", "position"],
            },
        ),
        migrations.CreateModel(
            name="DecisionKindVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("number", models.PositiveIntegerField()),
                ("question", models.TextField()),
                ("answers", models.JSONField(help_text="The allowed answers, in order.")),
                ("source", models.CharField(blank=True, max_length=200)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "kind",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="versions",
                        to="evals.decisionkind",
                    ),
                ),
            ],
            options={
                "ordering": ["kind__kind_id", "number"],
            },
        ),
        migrations.CreateModel(
            name="EvalRun",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("rubric", models.CharField(max_length=30)),
                (
                    "rubric_text",
                    models.TextField(blank=True, help_text="The custom rubric's text."),
                ),
                ("threshold", models.PositiveSmallIntegerField(default=70)),
                ("concurrency", models.PositiveSmallIntegerField(default=5)),
                (
                    "source",
                    models.CharField(
                        choices=[("agent", "agent called"), ("recorded", "recorded outputs")],
                        default="agent",
                        max_length=10,
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "pending"),
                            ("running", "running"),
                            ("done", "done"),
                            ("stopped", "stopped (cost cap or failing calls)"),
                            ("failed", "failed"),
                        ],
                        db_index=True,
                        default="pending",
                        max_length=10,
                    ),
                ),
                ("judge_model", models.CharField(blank=True, max_length=200)),
                ("agent_model", models.CharField(blank=True, max_length=200)),
                ("cost_cap", models.DecimalField(decimal_places=6, default=0, max_digits=12)),
                ("cost", models.DecimalField(decimal_places=6, default=0, max_digits=12)),
                ("tokens_in", models.PositiveBigIntegerField(default=0)),
                ("tokens_out", models.PositiveBigIntegerField(default=0)),
                ("rows_total", models.PositiveIntegerField(default=0)),
                ("rows_done", models.PositiveIntegerField(default=0)),
                ("rows_scored", models.PositiveIntegerField(default=0)),
                ("rows_passed", models.PositiveIntegerField(default=0)),
                ("rows_errored", models.PositiveIntegerField(default=0)),
                ("mean_score", models.FloatField(blank=True, null=True)),
                (
                    "pass_rate",
                    models.FloatField(
                        blank=True,
                        help_text="Percent of scored rows at or above the threshold.",
                        null=True,
                    ),
                ),
                (
                    "max_drop",
                    models.FloatField(
                        default=5.0, help_text="Pass-rate points the run may lose to its baseline."
                    ),
                ),
                (
                    "regressed",
                    models.BooleanField(
                        default=False, help_text="Its pass rate dropped by more than max_drop."
                    ),
                ),
                ("stop_reason", models.CharField(blank=True, max_length=300)),
                ("started_by", models.CharField(blank=True, max_length=150)),
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "agent_version",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="eval_runs",
                        to="evals.agentversion",
                    ),
                ),
                (
                    "baseline",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="evals.evalrun",
                    ),
                ),
                (
                    "dataset",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="eval_runs",
                        to="evals.dataset",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-pk"],
            },
        ),
        migrations.CreateModel(
            name="GoldenSet",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.SlugField(max_length=100)),
                ("version", models.PositiveIntegerField(default=1)),
                ("description", models.TextField(blank=True)),
                ("checksum", models.CharField(db_index=True, max_length=64)),
                ("created_by", models.CharField(blank=True, max_length=150)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["name", "-version"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("name", "version"), name="golden_set_version_unique"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("version__gte", 1)), name="golden_set_version_positive"
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="Gate",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.SlugField(max_length=100, unique=True)),
                ("description", models.TextField(blank=True)),
                ("created_by", models.CharField(blank=True, max_length=150)),
                ("updated_by", models.CharField(blank=True, max_length=150)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "golden_set",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="gates",
                        to="evals.goldenset",
                    ),
                ),
                (
                    "judge",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="gates",
                        to="evals.judge",
                    ),
                ),
            ],
            options={
                "ordering": ["name"],
            },
        ),
        migrations.CreateModel(
            name="JudgeRun",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "pending"),
                            ("running", "running"),
                            ("done", "done"),
                            ("stopped", "stopped (cost cap or judge failing)"),
                            ("failed", "failed"),
                        ],
                        default="pending",
                        max_length=10,
                    ),
                ),
                ("params", models.JSONField(blank=True, default=dict)),
                ("started_by", models.CharField(blank=True, max_length=150)),
                ("tasks_total", models.PositiveIntegerField(default=0)),
                ("tasks_done", models.PositiveIntegerField(default=0)),
                ("calls_made", models.PositiveIntegerField(default=0)),
                ("cache_hits", models.PositiveIntegerField(default=0)),
                ("tokens_in", models.PositiveBigIntegerField(default=0)),
                ("tokens_out", models.PositiveBigIntegerField(default=0)),
                ("cost", models.DecimalField(decimal_places=6, default=0, max_digits=12)),
                ("errors", models.PositiveIntegerField(default=0)),
                ("stop_reason", models.CharField(blank=True, max_length=300)),
                (
                    "consecutive_failures",
                    models.PositiveIntegerField(
                        default=0,
                        help_text=(
                            "Judge calls failed in a row (the run stops at JUDGE_BREAKER_FAILURES)."
                        ),
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("started_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "judge",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="runs",
                        to="evals.judge",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
            },
        ),
        migrations.CreateModel(
            name="GateMetric",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("position", models.PositiveIntegerField(default=0)),
                (
                    "kind",
                    models.CharField(help_text="One of evals.gates.METRIC_KINDS.", max_length=30),
                ),
                ("group", models.CharField(blank=True, max_length=100)),
                (
                    "measure",
                    models.CharField(
                        blank=True, help_text="Detector measure or judge score name.", max_length=50
                    ),
                ),
                ("threshold", models.FloatField(blank=True, null=True)),
                ("tolerance", models.FloatField(blank=True, null=True)),
                (
                    "gate",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="metrics",
                        to="evals.gate",
                    ),
                ),
                (
                    "rule",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="gate_metrics",
                        to="evals.rule",
                    ),
                ),
            ],
            options={
                "ordering": ["gate", "position", "pk"],
            },
        ),
        migrations.CreateModel(
            name="RuleVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("number", models.PositiveIntegerField()),
                ("text", models.TextField()),
                ("detector", models.JSONField(blank=True, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("draft", "draft"),
                            ("candidate", "candidate"),
                            ("gated", "gated"),
                            ("retired", "retired"),
                        ],
                        db_index=True,
                        default="candidate",
                        max_length=10,
                    ),
                ),
                (
                    "source",
                    models.CharField(
                        blank=True, help_text="Where this version came from.", max_length=200
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "rule",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="versions",
                        to="evals.rule",
                    ),
                ),
            ],
            options={
                "ordering": ["rule__rule_id", "number"],
            },
        ),
        migrations.CreateModel(
            name="GateRun",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "pending"),
                            ("running", "running"),
                            ("pass", "pass"),
                            ("fail", "fail"),
                            ("error", "error"),
                        ],
                        db_index=True,
                        default="pending",
                        max_length=10,
                    ),
                ),
                (
                    "judge_missing_verdicts",
                    models.BooleanField(
                        default=True,
                        help_text="Ask the judge runner for verdicts the golden-set calls lack.",
                    ),
                ),
                ("golden_set_checksum", models.CharField(blank=True, max_length=64)),
                ("results", models.JSONField(blank=True, default=dict)),
                ("error", models.TextField(blank=True)),
                (
                    "judged",
                    models.PositiveIntegerField(
                        default=0, help_text="Verdicts the judge runner added for this run."
                    ),
                ),
                ("started_by", models.CharField(blank=True, max_length=150)),
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                (
                    "baseline",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="baseline_gate_runs",
                        to="evals.agentversion",
                    ),
                ),
                (
                    "candidate",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="gate_runs",
                        to="evals.agentversion",
                    ),
                ),
                (
                    "gate",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="runs",
                        to="evals.gate",
                    ),
                ),
                (
                    "golden_set",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="gate_runs",
                        to="evals.goldenset",
                    ),
                ),
                (
                    "judge",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="gate_runs",
                        to="evals.judge",
                    ),
                ),
                (
                    "rule_versions",
                    models.ManyToManyField(
                        blank=True, related_name="gate_runs", to="evals.ruleversion"
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-pk"],
            },
        ),
        migrations.CreateModel(
            name="Transcript",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("external_id", models.CharField(max_length=200, unique=True)),
                ("checksum", models.CharField(db_index=True, max_length=64)),
                ("audio_url", models.CharField(blank=True, max_length=2000)),
                ("language", models.CharField(blank=True, max_length=20)),
                ("scenario", models.CharField(blank=True, db_index=True, max_length=200)),
                ("tenant", models.CharField(blank=True, db_index=True, max_length=200)),
                ("started_at", models.DateTimeField(blank=True, db_index=True, null=True)),
                ("imported_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("metadata", models.JSONField(blank=True, default=dict)),
                (
                    "agent_version",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="transcripts",
                        to="evals.agentversion",
                    ),
                ),
            ],
            options={
                "ordering": ["-started_at", "external_id"],
            },
        ),
        migrations.CreateModel(
            name="JudgeRunItem",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("llm", "LLM call"),
                            ("detectors", "detectors"),
                            ("conversation", "conversation judge call"),
                        ],
                        max_length=12,
                    ),
                ),
                ("group", models.CharField(blank=True, max_length=100)),
                ("phase", models.CharField(blank=True, max_length=50)),
                ("rule_version_ids", models.JSONField(default=list)),
                (
                    "outcome",
                    models.CharField(
                        choices=[
                            ("pending", "pending"),
                            ("called", "called"),
                            ("cached", "cache hit"),
                            ("detected", "detectors ran"),
                            ("error", "error"),
                            ("skipped", "skipped (cost cap)"),
                            ("empty", "no agent turns in scope"),
                        ],
                        db_index=True,
                        default="pending",
                        max_length=10,
                    ),
                ),
                ("error", models.TextField(blank=True)),
                ("tokens_in", models.PositiveIntegerField(default=0)),
                ("tokens_out", models.PositiveIntegerField(default=0)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="items",
                        to="evals.judgerun",
                    ),
                ),
                (
                    "transcript",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="judge_run_items",
                        to="evals.transcript",
                    ),
                ),
            ],
            options={
                "ordering": ["run", "pk"],
            },
        ),
        migrations.CreateModel(
            name="GoldenSetMember",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("position", models.PositiveIntegerField()),
                ("scenario", models.CharField(max_length=200)),
                ("transcript_external_id", models.CharField(blank=True, max_length=200)),
                ("transcript_checksum", models.CharField(blank=True, max_length=64)),
                (
                    "golden_set",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="members",
                        to="evals.goldenset",
                    ),
                ),
                (
                    "transcript",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="golden_memberships",
                        to="evals.transcript",
                    ),
                ),
            ],
            options={
                "ordering": ["golden_set", "position"],
            },
        ),
        migrations.CreateModel(
            name="EvalRunRow",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("position", models.PositiveIntegerField()),
                (
                    "outcome",
                    models.CharField(
                        choices=[
                            ("pending", "pending"),
                            ("scored", "scored"),
                            ("error", "error"),
                            ("skipped", "skipped (cost cap or stopped)"),
                        ],
                        default="pending",
                        max_length=10,
                    ),
                ),
                ("output", models.TextField(blank=True)),
                ("tool_calls", models.JSONField(blank=True, default=list)),
                ("score", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("passed", models.BooleanField(blank=True, null=True)),
                ("reason", models.TextField(blank=True)),
                ("error", models.TextField(blank=True)),
                ("cached", models.BooleanField(default=False)),
                ("tokens_in", models.PositiveIntegerField(default=0)),
                ("tokens_out", models.PositiveIntegerField(default=0)),
                ("cost", models.DecimalField(decimal_places=6, default=0, max_digits=12)),
                (
                    "dataset_row",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="evals.datasetrow",
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rows",
                        to="evals.evalrun",
                    ),
                ),
                (
                    "transcript",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="evals.transcript",
                    ),
                ),
            ],
            options={
                "ordering": ["run", "position"],
            },
        ),
        migrations.CreateModel(
            name="Decision",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "key",
                    models.CharField(
                        help_text="turn:N or ms:N, unique per call and kind.", max_length=30
                    ),
                ),
                ("turn", models.PositiveIntegerField(blank=True, null=True)),
                ("at_ms", models.PositiveIntegerField(blank=True, null=True)),
                ("choice", models.CharField(max_length=100)),
                ("confidence", models.FloatField(blank=True, null=True)),
                (
                    "gap_ms",
                    models.IntegerField(
                        blank=True,
                        help_text="Agent start minus the user's end (negative: overlap).",
                        null=True,
                    ),
                ),
                (
                    "source",
                    models.CharField(
                        choices=[
                            ("reported", "reported with the call"),
                            ("derived", "derived from timings"),
                        ],
                        default="reported",
                        max_length=10,
                    ),
                ),
                ("truth", models.CharField(blank=True, default="", max_length=100)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "kind",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="decisions",
                        to="evals.decisionkind",
                    ),
                ),
                (
                    "kind_version",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="decisions",
                        to="evals.decisionkindversion",
                    ),
                ),
                (
                    "transcript",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="decisions",
                        to="evals.transcript",
                    ),
                ),
            ],
            options={
                "ordering": ["transcript", "turn", "at_ms", "kind"],
            },
        ),
        migrations.CreateModel(
            name="ConversationScore",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("score", models.PositiveSmallIntegerField(blank=True, null=True)),
                ("reason", models.TextField(blank=True)),
                ("findings", models.JSONField(blank=True, default=list)),
                (
                    "plan",
                    models.JSONField(
                        blank=True, default=list, help_text="The phases the judge was given."
                    ),
                ),
                (
                    "error",
                    models.TextField(
                        blank=True,
                        help_text="Set when the judgement failed; left out of every figure.",
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "judge",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="conversation_scores",
                        to="evals.judge",
                    ),
                ),
                (
                    "judge_run",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="conversation_scores",
                        to="evals.judgerun",
                    ),
                ),
                (
                    "transcript",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="conversation_scores",
                        to="evals.transcript",
                    ),
                ),
            ],
            options={
                "ordering": ["transcript", "judge"],
            },
        ),
        migrations.CreateModel(
            name="Turn",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("index", models.PositiveIntegerField()),
                (
                    "speaker",
                    models.CharField(
                        choices=[
                            ("agent", "agent"),
                            ("user", "user"),
                            ("tool", "tool"),
                            ("system", "system"),
                        ],
                        max_length=10,
                    ),
                ),
                ("text", models.TextField(blank=True)),
                ("start_ms", models.PositiveIntegerField(blank=True, null=True)),
                ("end_ms", models.PositiveIntegerField(blank=True, null=True)),
                ("asr_confidence", models.FloatField(blank=True, null=True)),
                ("phase", models.CharField(blank=True, max_length=50)),
                ("tool_calls", models.JSONField(blank=True, default=list)),
                ("tool_call_id", models.CharField(blank=True, max_length=200)),
                (
                    "transcript",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="turns",
                        to="evals.transcript",
                    ),
                ),
            ],
            options={
                "ordering": ["transcript", "index"],
            },
        ),
        migrations.CreateModel(
            name="VerdictCategory",
            fields=[
                (
                    "verdict",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="category",
                        serialize=False,
                        to="evals.verdict",
                    ),
                ),
                ("category", models.CharField(db_index=True, max_length=50)),
            ],
        ),
        migrations.AddField(
            model_name="verdict",
            name="judge_run",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="verdicts",
                to="evals.judgerun",
            ),
        ),
        migrations.AddField(
            model_name="verdict",
            name="rule_version",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="verdicts",
                to="evals.ruleversion",
            ),
        ),
        migrations.AddField(
            model_name="verdict",
            name="transcript",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="verdicts",
                to="evals.transcript",
            ),
        ),
        migrations.CreateModel(
            name="WebhookDelivery",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "uuid",
                    models.UUIDField(
                        help_text="Sent as Docket-Delivery; receivers dedupe.", unique=True
                    ),
                ),
                ("event", models.CharField(db_index=True, max_length=50)),
                ("payload", models.JSONField()),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "pending"),
                            ("retrying", "retrying"),
                            ("delivered", "delivered"),
                            ("failed", "failed (gave up)"),
                        ],
                        db_index=True,
                        default="pending",
                        max_length=10,
                    ),
                ),
                (
                    "attempts",
                    models.JSONField(
                        default=list,
                        help_text="One {at, status, error, ms} per attempt, oldest first.",
                    ),
                ),
                ("response_status", models.PositiveSmallIntegerField(blank=True, null=True)),
                (
                    "response_body",
                    models.TextField(blank=True, help_text="The last answer, clipped."),
                ),
                ("error", models.CharField(blank=True, max_length=500)),
                ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                ("delivered_at", models.DateTimeField(blank=True, null=True)),
                (
                    "webhook",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="deliveries",
                        to="evals.webhook",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "webhook deliveries",
                "ordering": ["-created_at", "-pk"],
            },
        ),
        migrations.AddConstraint(
            model_name="agentversion",
            constraint=models.UniqueConstraint(
                fields=("agent", "version"), name="agent_version_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="datasetrow",
            constraint=models.UniqueConstraint(
                fields=("dataset", "row_id"), name="dataset_row_id_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="decisionkindversion",
            constraint=models.UniqueConstraint(
                fields=("kind", "number"), name="decision_kind_version_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="decisionkindversion",
            constraint=models.CheckConstraint(
                condition=models.Q(("number__gte", 1)), name="decision_kind_version_positive"
            ),
        ),
        migrations.AddConstraint(
            model_name="evalrun",
            constraint=models.CheckConstraint(
                condition=models.Q(("threshold__lte", 100)), name="eval_run_threshold_range"
            ),
        ),
        migrations.AddConstraint(
            model_name="ruleversion",
            constraint=models.UniqueConstraint(
                fields=("rule", "number"), name="rule_version_number_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="ruleversion",
            constraint=models.CheckConstraint(
                condition=models.Q(("number__gte", 1)), name="rule_version_number_positive"
            ),
        ),
        migrations.AddIndex(
            model_name="gaterun",
            index=models.Index(
                fields=["gate", "status", "created_at"], name="gate_run_gate_status"
            ),
        ),
        migrations.AddIndex(
            model_name="judgerunitem",
            index=models.Index(fields=["run", "outcome"], name="judge_run_item_outcome"),
        ),
        migrations.AddConstraint(
            model_name="goldensetmember",
            constraint=models.UniqueConstraint(
                fields=("golden_set", "scenario"), name="golden_member_scenario_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="evalrunrow",
            constraint=models.UniqueConstraint(
                fields=("run", "dataset_row"), name="eval_run_row_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="evalrunrow",
            constraint=models.CheckConstraint(
                condition=models.Q(("score__isnull", True), ("score__lte", 100), _connector="OR"),
                name="eval_run_row_score_range",
            ),
        ),
        migrations.AddIndex(
            model_name="decision",
            index=models.Index(fields=["kind_version", "truth"], name="decision_kv_truth"),
        ),
        migrations.AddConstraint(
            model_name="decision",
            constraint=models.UniqueConstraint(
                fields=("transcript", "kind", "key"), name="decision_key_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="decision",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("confidence__isnull", True),
                    models.Q(("confidence__gte", 0), ("confidence__lte", 1)),
                    _connector="OR",
                ),
                name="decision_confidence_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="decision",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("turn__isnull", False), ("at_ms__isnull", False), _connector="OR"
                ),
                name="decision_has_a_moment",
            ),
        ),
        migrations.AddConstraint(
            model_name="conversationscore",
            constraint=models.UniqueConstraint(
                fields=("transcript", "judge"), name="conversation_score_key_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="conversationscore",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("score__isnull", True),
                    models.Q(("score__gte", 1), ("score__lte", 10)),
                    _connector="OR",
                ),
                name="conversation_score_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="turn",
            constraint=models.UniqueConstraint(
                fields=("transcript", "index"), name="turn_index_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="turn",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("asr_confidence__isnull", True),
                    models.Q(("asr_confidence__gte", 0), ("asr_confidence__lte", 1)),
                    _connector="OR",
                ),
                name="turn_asr_confidence_range",
            ),
        ),
        migrations.AddIndex(
            model_name="verdict",
            index=models.Index(fields=["rule_version", "judge"], name="verdict_rv_judge"),
        ),
        migrations.AddIndex(
            model_name="verdict",
            index=models.Index(
                condition=models.Q(("judge_run__isnull", False)),
                fields=["judge_run"],
                name="verdict_judge_run",
            ),
        ),
        migrations.AddConstraint(
            model_name="verdict",
            constraint=models.UniqueConstraint(
                fields=("transcript", "rule_version", "judge"), name="verdict_key_unique"
            ),
        ),
        migrations.AddConstraint(
            model_name="verdict",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("confidence__isnull", True), ("confidence__lte", 100), _connector="OR"
                ),
                name="verdict_confidence_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="verdict",
            constraint=models.CheckConstraint(
                condition=models.Q(("flagged", True), ("turn__isnull", True), _connector="OR"),
                name="verdict_unflagged_cites_no_turn",
            ),
        ),
        migrations.RunPython(transcript_started_desc_create, transcript_started_desc_drop),
    ]
