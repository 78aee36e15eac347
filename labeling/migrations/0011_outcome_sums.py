"""The outcome sums' tables (labeling/services/outcome_sums.py).

Their triggers, and the sums of ratings made before the tables existed, are today's code's: they
are put in place after every migrate (labeling.apps), never from here. Going back drops them.
"""

from django.db import migrations, models


def outcome_triggers_drop(apps, schema_editor):
    """Drop the triggers (the tables go with the models)."""
    with schema_editor.connection.cursor() as cursor:
        tables = (
            "labeling_outcomerating",
            "evals_verdict",
            "evals_conversationscore",
            "labeling_assignment",
            "labeling_sampleitem",
            "evals_transcript",
        )
        if schema_editor.connection.vendor == "postgresql":
            for table in tables:
                for name in (
                    "docket_outcome",
                    *(f"docket_outcome_{e}" for e in ("insert", "update", "delete")),
                ):
                    cursor.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
        else:
            for table in tables:
                for suffix in ("ins", "del", "upd"):
                    cursor.execute(f"DROP TRIGGER IF EXISTS docket_outcome_{table}_{suffix}")


class Migration(migrations.Migration):
    dependencies = [
        ("labeling", "0010_redundant_prefix_indexes"),
    ]

    operations = [
        migrations.CreateModel(
            name="OutcomeCall",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("question_id", models.BigIntegerField()),
                ("transcript_id", models.BigIntegerField()),
                ("agent_version_id", models.BigIntegerField()),
                ("day", models.DateField()),
                ("x", models.FloatField()),
                ("ratings", models.IntegerField()),
                ("outside", models.SmallIntegerField()),
                ("w", models.FloatField()),
            ],
            options={
                "db_table": "labeling_outcome_call",
                "indexes": [
                    models.Index(fields=["transcript_id"], name="outcome_call_call"),
                    models.Index(fields=["question_id", "x"], name="outcome_call_bad"),
                ],
            },
        ),
        migrations.CreateModel(
            name="OutcomeCheck",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("question_id", models.BigIntegerField()),
                (
                    "transcript_id",
                    models.BigIntegerField(
                        help_text="No foreign key: a deleted call's rows go through its ratings' triggers."
                    ),
                ),
                ("src", models.CharField(max_length=40)),
                ("chk", models.CharField(max_length=300)),
                ("fired", models.SmallIntegerField()),
                ("x", models.FloatField()),
                ("w", models.FloatField()),
            ],
            options={
                "db_table": "labeling_outcome_check",
                "indexes": [
                    models.Index(fields=["transcript_id"], name="outcome_check_call"),
                    models.Index(
                        condition=models.Q(("src", "*")),
                        fields=["question_id", "fired", "x"],
                        name="outcome_check_any",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="OutcomeCheckSums",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("question_id", models.BigIntegerField()),
                ("src", models.CharField(max_length=40)),
                ("chk", models.CharField(max_length=300)),
                ("fired", models.SmallIntegerField()),
                ("n", models.IntegerField()),
                ("bad", models.IntegerField()),
                ("w", models.FloatField()),
                ("wx", models.FloatField()),
                ("w2", models.FloatField()),
                ("w2x", models.FloatField()),
                ("w2x2", models.FloatField()),
            ],
            options={
                "db_table": "labeling_outcome_check_sums",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("question_id", "src", "chk", "fired"), name="outcome_check_sums_key"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="OutcomeDaySums",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("question_id", models.BigIntegerField()),
                ("agent_version_id", models.BigIntegerField()),
                ("day", models.DateField()),
                ("n", models.IntegerField()),
                ("ratings", models.IntegerField()),
                ("outside", models.IntegerField()),
                ("bad", models.IntegerField()),
                ("sx", models.FloatField()),
                ("w", models.FloatField()),
                ("wx", models.FloatField()),
                ("w2", models.FloatField()),
                ("w2x", models.FloatField()),
                ("w2x2", models.FloatField()),
                ("wbad", models.FloatField()),
                ("w2bad", models.FloatField()),
            ],
            options={
                "db_table": "labeling_outcome_day_sums",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("question_id", "agent_version_id", "day"),
                        name="outcome_day_sums_key",
                    )
                ],
            },
        ),
        migrations.RunPython(migrations.RunPython.noop, outcome_triggers_drop),
    ]
