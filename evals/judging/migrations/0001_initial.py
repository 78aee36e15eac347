"""The judging app's models, which the evals app's migrations made (0001_squashed): their
tables are kept as they are (`db_table`), so this changes only Django's view of them.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("evals", "0001_squashed"),
        ("catalog", "0001_initial"),
        ("rules", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Judge",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
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
                        "db_table": "evals_judge",
                        "ordering": ["name"],
                    },
                ),
                migrations.CreateModel(
                    name="JudgeCacheEntry",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
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
                        "db_table": "evals_judgecacheentry",
                    },
                ),
                migrations.CreateModel(
                    name="JudgeRun",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
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
                                help_text="Judge calls failed in a row (the run stops at JUDGE_BREAKER_FAILURES).",
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
                                to="judging.judge",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_judgerun",
                        "ordering": ["-created_at"],
                    },
                ),
                migrations.CreateModel(
                    name="JudgeRunItem",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        (
                            "kind",
                            models.CharField(
                                help_text=(
                                    "llm, detectors, or a kind another app registered (registry)"
                                ),
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
                                to="judging.judgerun",
                            ),
                        ),
                        (
                            "transcript",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="judge_run_items",
                                to="catalog.transcript",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_judgerunitem",
                        "ordering": ["run", "pk"],
                        "indexes": [
                            models.Index(fields=["run", "outcome"], name="judge_run_item_outcome")
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="Verdict",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("flagged", models.BooleanField()),
                        ("turn", models.PositiveIntegerField(blank=True, null=True)),
                        ("turns", models.JSONField(blank=True, default=list)),
                        (
                            "severity",
                            models.CharField(
                                blank=True,
                                choices=[
                                    ("minor", "minor"),
                                    ("major", "major"),
                                    ("critical", "critical"),
                                ],
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
                                to="judging.judge",
                            ),
                        ),
                        (
                            "judge_run",
                            models.ForeignKey(
                                blank=True,
                                db_index=False,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="verdicts",
                                to="judging.judgerun",
                            ),
                        ),
                        (
                            "rule_version",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="verdicts",
                                to="rules.ruleversion",
                            ),
                        ),
                        (
                            "transcript",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="verdicts",
                                to="catalog.transcript",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_verdict",
                        "ordering": ["transcript", "rule_version"],
                        "indexes": [
                            models.Index(fields=["rule_version", "judge"], name="verdict_rv_judge"),
                            models.Index(
                                condition=models.Q(("judge_run__isnull", False)),
                                fields=["judge_run"],
                                name="verdict_judge_run",
                            ),
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("transcript", "rule_version", "judge"),
                                name="verdict_key_unique",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("confidence__isnull", True),
                                    ("confidence__lte", 100),
                                    _connector="OR",
                                ),
                                name="verdict_confidence_range",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("flagged", True), ("turn__isnull", True), _connector="OR"
                                ),
                                name="verdict_unflagged_cites_no_turn",
                            ),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
