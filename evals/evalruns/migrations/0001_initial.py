"""The evalruns app's models, which the evals app's migrations made (0001_squashed): their
tables are kept as they are (`db_table`), so this changes only Django's view of them.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("evals", "0001_squashed"),
        ("catalog", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Dataset",
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
                        ("name", models.SlugField(max_length=100)),
                        ("version", models.PositiveIntegerField(default=1)),
                        ("checksum", models.CharField(db_index=True, max_length=64)),
                        ("description", models.TextField(blank=True)),
                        ("rows_count", models.PositiveIntegerField(default=0)),
                        ("created_by", models.CharField(blank=True, max_length=150)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "db_table": "evals_dataset",
                        "ordering": ["name", "-version"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("name", "version"), name="dataset_version_unique"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("version__gte", 1)),
                                name="dataset_version_positive",
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
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
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
                                to="evalruns.dataset",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_datasetrow",
                        "ordering": ["dataset", "position"],
                    },
                ),
                migrations.CreateModel(
                    name="EvalRun",
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
                                choices=[
                                    ("agent", "agent called"),
                                    ("recorded", "recorded outputs"),
                                ],
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
                        (
                            "cost_cap",
                            models.DecimalField(decimal_places=6, default=0, max_digits=12),
                        ),
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
                                default=5.0,
                                help_text="Pass-rate points the run may lose to its baseline.",
                            ),
                        ),
                        (
                            "regressed",
                            models.BooleanField(
                                default=False,
                                help_text="Its pass rate dropped by more than max_drop.",
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
                                to="catalog.agentversion",
                            ),
                        ),
                        (
                            "baseline",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="evalruns.evalrun",
                            ),
                        ),
                        (
                            "dataset",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="eval_runs",
                                to="evalruns.dataset",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_evalrun",
                        "ordering": ["-created_at", "-pk"],
                    },
                ),
                migrations.CreateModel(
                    name="EvalRunRow",
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
                                to="evalruns.datasetrow",
                            ),
                        ),
                        (
                            "run",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="rows",
                                to="evalruns.evalrun",
                            ),
                        ),
                        (
                            "transcript",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="catalog.transcript",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_evalrunrow",
                        "ordering": ["run", "position"],
                    },
                ),
                migrations.AddConstraint(
                    model_name="datasetrow",
                    constraint=models.UniqueConstraint(
                        fields=("dataset", "row_id"), name="dataset_row_id_unique"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="evalrun",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("threshold__lte", 100)), name="eval_run_threshold_range"
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
                        condition=models.Q(
                            ("score__isnull", True), ("score__lte", 100), _connector="OR"
                        ),
                        name="eval_run_row_score_range",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
