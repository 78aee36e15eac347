"""The partial index of errored verdicts: calibration counts them per rule version and judge, and
finds their calls, reading only them (a few in a hundred)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0001_initial"),
        ("judging", "0001_initial"),
        ("rules", "0001_initial"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="verdict",
            index=models.Index(
                condition=models.Q(("error", ""), _negated=True),
                fields=["rule_version", "judge", "transcript"],
                name="verdict_errored",
            ),
        ),
    ]
