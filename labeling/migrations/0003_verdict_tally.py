"""The verdict tally's table.

Its triggers, and the count of verdicts marked before the table existed, are today's code's:
they are put in place after every migrate (labeling.apps), never from here, so a later change to
them cannot break a fresh migrate.
"""

import django.db.models.deletion
from django.db import migrations, models


def tally_drop(apps, schema_editor):
    """Drop the triggers (the table goes with the model)."""
    with schema_editor.connection.cursor() as cursor:
        if schema_editor.connection.vendor == "postgresql":
            for table in (
                "labeling_mark",
                "labeling_settlement",
                "evals_verdict",
                "labeling_assignment",
                "labeling_sampleitem",
            ):
                cursor.execute(f"DROP TRIGGER IF EXISTS docket_tally ON {table}")
        else:
            for name in (
                "mark_ins",
                "mark_del",
                "mark_upd",
                "settlement_ins",
                "settlement_del",
                "settlement_upd",
                "verdict_upd",
                "assignment_upd",
                "sampleitem_upd",
            ):
                cursor.execute(f"DROP TRIGGER IF EXISTS docket_tally_{name}")


class Migration(migrations.Migration):
    dependencies = [
        ("evals", "0001_squashed"),
        ("labeling", "0002_issue_row_sheet_indexes"),
    ]

    operations = [
        migrations.CreateModel(
            name="VerdictTally",
            fields=[
                (
                    "verdict",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="tally",
                        serialize=False,
                        to="evals.verdict",
                    ),
                ),
                (
                    "rule_version_id",
                    models.BigIntegerField(
                        help_text="Copied from the verdict, for index-only grouping."
                    ),
                ),
                (
                    "judge_id",
                    models.BigIntegerField(
                        help_text="Copied from the verdict, for index-only grouping."
                    ),
                ),
                ("n_marks", models.IntegerField()),
                ("n_right", models.IntegerField()),
                (
                    "truth",
                    models.SmallIntegerField(
                        help_text="1 right, 0 wrong (settlement, else majority); null: tied.",
                        null=True,
                    ),
                ),
                (
                    "cell",
                    models.SmallIntegerField(
                        help_text="0 fn, 1 tn, 2 fp, 3 tp, 4 waiting (tied), 5 errored."
                    ),
                ),
                (
                    "pair",
                    models.SmallIntegerField(
                        help_text=(
                            "First and last mark: 0 none, 1 wrong-wrong, 2 wrong-right, "
                            "3 right-wrong, 4 right-right."
                        )
                    ),
                ),
                (
                    "outside",
                    models.SmallIntegerField(
                        help_text="1 when no mark came through a sample item."
                    ),
                ),
                (
                    "weight",
                    models.FloatField(
                        help_text=(
                            "1 / the largest inclusion probability of its marks' sample items."
                        )
                    ),
                ),
            ],
            options={
                "db_table": "labeling_verdict_tally",
                "indexes": [
                    models.Index(
                        fields=["rule_version_id", "judge_id", "cell", "pair", "outside", "weight"],
                        name="verdict_tally_group",
                    )
                ],
            },
        ),
        migrations.RunPython(migrations.RunPython.noop, tally_drop),
    ]
