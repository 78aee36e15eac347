"""The decisions app's models, which the evals app's migrations made (0001_squashed): their
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
                    name="DecisionKind",
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
                                    (
                                        "turn_gap",
                                        "from turn timings (agent start after a user turn)",
                                    ),
                                ],
                                default="",
                                max_length=20,
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "db_table": "evals_decisionkind",
                        "ordering": ["kind_id"],
                    },
                ),
                migrations.CreateModel(
                    name="DecisionKindVersion",
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
                                to="decisions.decisionkind",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_decisionkindversion",
                        "ordering": ["kind__kind_id", "number"],
                    },
                ),
                migrations.CreateModel(
                    name="Decision",
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
                            "transcript",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="decisions",
                                to="catalog.transcript",
                            ),
                        ),
                        (
                            "kind",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="decisions",
                                to="decisions.decisionkind",
                            ),
                        ),
                        (
                            "kind_version",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="decisions",
                                to="decisions.decisionkindversion",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_decision",
                        "ordering": ["transcript", "turn", "at_ms", "kind"],
                    },
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
                        condition=models.Q(("number__gte", 1)),
                        name="decision_kind_version_positive",
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
            ],
            database_operations=[],
        ),
    ]
