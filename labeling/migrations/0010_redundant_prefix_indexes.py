"""Drop the single-column indexes on marks' verdict and decision labels' decision: the unique
(verdict, reviewer) and (decision, reviewer) keys start with them and serve every query they did
(docs/operations.md, the indexes of the big tables)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("decisions", "0002_redundant_prefix_indexes"),
        ("judging", "0002_verdict_errored_index"),
        ("labeling", "0009_assignment_version"),
    ]

    operations = [
        migrations.AlterField(
            model_name="decisionlabel",
            name="decision",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="labels",
                to="decisions.decision",
            ),
        ),
        migrations.AlterField(
            model_name="mark",
            name="verdict",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="marks",
                to="judging.verdict",
            ),
        ),
    ]
