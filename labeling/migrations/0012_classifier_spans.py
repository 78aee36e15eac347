"""Classifier spans: the runtime classifiers' verdicts counted ahead per span of days for the
thresholds pages (labeling/services/classifier_spans.py); counted once here from the verdicts."""

from django.db import migrations, models


def spans_install(apps, schema_editor):
    from labeling.services.classifier_spans import (
        classifier_spans_rebuild,
        classifier_spans_triggers_install,
    )

    connection = schema_editor.connection
    if connection.vendor == "postgresql":  # room on each page to count in place (HOT updates)
        schema_editor.execute("ALTER TABLE labeling_classifier_span SET (fillfactor = 70)")
    if classifier_spans_triggers_install(connection=connection):
        classifier_spans_rebuild(connection=connection)


class Migration(migrations.Migration):
    dependencies = [
        ("labeling", "0011_outcome_sums"),
        ("classifiers", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="ClassifierSpan",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("level", models.SmallIntegerField(help_text="0..3: 4^level days; 4: every day.")),
                (
                    "start",
                    models.IntegerField(
                        help_text="First day of the span, in days since 1970-01-01."
                    ),
                ),
                ("rule_version_id", models.BigIntegerField()),
                ("judge_id", models.BigIntegerField()),
                ("tenant", models.CharField(max_length=200)),
                (
                    "agent_version_id",
                    models.BigIntegerField(help_text="0: the call names no agent version."),
                ),
                ("category", models.CharField(max_length=50)),
                ("flagged", models.BooleanField()),
                ("confidence", models.SmallIntegerField(help_text="-1: none given.")),
                (
                    "truth",
                    models.SmallIntegerField(help_text="1 right, 0 wrong, -1 unmarked or tied."),
                ),
                ("n", models.IntegerField()),
            ],
            options={
                "db_table": "labeling_classifier_span",
                "constraints": [
                    models.UniqueConstraint(
                        fields=(
                            "level",
                            "start",
                            "rule_version_id",
                            "judge_id",
                            "tenant",
                            "agent_version_id",
                            "category",
                            "flagged",
                            "confidence",
                            "truth",
                        ),
                        name="classifier_span_key",
                    )
                ],
            },
        ),
        migrations.RunPython(spans_install, migrations.RunPython.noop),
    ]
