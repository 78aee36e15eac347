"""The gating app's models, which the evals app's migrations made (0001_squashed): their
tables are kept as they are (`db_table`), so this changes only Django's view of them.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("evals", "0001_squashed"),
        ("catalog", "0001_initial"),
        ("judging", "0001_initial"),
        ("rules", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Gate",
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
                        ("name", models.SlugField(max_length=100, unique=True)),
                        ("description", models.TextField(blank=True)),
                        ("created_by", models.CharField(blank=True, max_length=150)),
                        ("updated_by", models.CharField(blank=True, max_length=150)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        (
                            "judge",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="gates",
                                to="judging.judge",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_gate",
                        "ordering": ["name"],
                    },
                ),
                migrations.CreateModel(
                    name="GateMetric",
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
                        ("position", models.PositiveIntegerField(default=0)),
                        (
                            "kind",
                            models.CharField(
                                help_text="One of evals.gating.decision.METRIC_KINDS.",
                                max_length=30,
                            ),
                        ),
                        ("group", models.CharField(blank=True, max_length=100)),
                        (
                            "measure",
                            models.CharField(
                                blank=True,
                                help_text="Detector measure or judge score name.",
                                max_length=50,
                            ),
                        ),
                        ("threshold", models.FloatField(blank=True, null=True)),
                        ("tolerance", models.FloatField(blank=True, null=True)),
                        (
                            "gate",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="metrics",
                                to="gating.gate",
                            ),
                        ),
                        (
                            "rule",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="gate_metrics",
                                to="rules.rule",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_gatemetric",
                        "ordering": ["gate", "position", "pk"],
                    },
                ),
                migrations.CreateModel(
                    name="GoldenSet",
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
                        ("description", models.TextField(blank=True)),
                        ("checksum", models.CharField(db_index=True, max_length=64)),
                        ("created_by", models.CharField(blank=True, max_length=150)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "db_table": "evals_goldenset",
                        "ordering": ["name", "-version"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("name", "version"), name="golden_set_version_unique"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("version__gte", 1)),
                                name="golden_set_version_positive",
                            ),
                        ],
                    },
                ),
                migrations.AddField(
                    model_name="gate",
                    name="golden_set",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="gates",
                        to="gating.goldenset",
                    ),
                ),
                migrations.CreateModel(
                    name="GateRun",
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
                                to="catalog.agentversion",
                            ),
                        ),
                        (
                            "candidate",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="gate_runs",
                                to="catalog.agentversion",
                            ),
                        ),
                        (
                            "gate",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="runs",
                                to="gating.gate",
                            ),
                        ),
                        (
                            "judge",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="gate_runs",
                                to="judging.judge",
                            ),
                        ),
                        (
                            "rule_versions",
                            models.ManyToManyField(
                                blank=True, related_name="gate_runs", to="rules.ruleversion"
                            ),
                        ),
                        (
                            "golden_set",
                            models.ForeignKey(
                                null=True,
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="gate_runs",
                                to="gating.goldenset",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_gaterun",
                        "ordering": ["-created_at", "-pk"],
                        "indexes": [
                            models.Index(
                                fields=["gate", "status", "created_at"], name="gate_run_gate_status"
                            )
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="GoldenSetMember",
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
                        ("scenario", models.CharField(max_length=200)),
                        ("transcript_external_id", models.CharField(blank=True, max_length=200)),
                        ("transcript_checksum", models.CharField(blank=True, max_length=64)),
                        (
                            "golden_set",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="members",
                                to="gating.goldenset",
                            ),
                        ),
                        (
                            "transcript",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="golden_memberships",
                                to="catalog.transcript",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_goldensetmember",
                        "ordering": ["golden_set", "position"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("golden_set", "scenario"),
                                name="golden_member_scenario_unique",
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
