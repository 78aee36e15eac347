"""The rules app's models, which the evals app's migrations made (0001_squashed): their
tables are kept as they are (`db_table`), so this changes only Django's view of them.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("evals", "0001_squashed"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Rule",
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
                        ("rule_id", models.CharField(max_length=200, unique=True)),
                        ("group", models.CharField(db_index=True, max_length=100)),
                        ("phase", models.CharField(blank=True, max_length=50)),
                        (
                            "severity",
                            models.CharField(
                                choices=[
                                    ("minor", "minor"),
                                    ("major", "major"),
                                    ("critical", "critical"),
                                ],
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
                        "db_table": "evals_rule",
                        "ordering": ["group", "rule_id"],
                    },
                ),
                migrations.CreateModel(
                    name="RuleVersion",
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
                                blank=True,
                                help_text="Where this version came from.",
                                max_length=200,
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "rule",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="versions",
                                to="rules.rule",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_ruleversion",
                        "ordering": ["rule__rule_id", "number"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("rule", "number"), name="rule_version_number_unique"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(("number__gte", 1)),
                                name="rule_version_number_positive",
                            ),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
