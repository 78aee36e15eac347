"""Drop the single-column index on decisions' kind version: decision_kv_truth (kind_version,
truth) starts with it and serves every query it did (docs/operations.md)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("decisions", "0001_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="decision",
            name="kind_version",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="decisions",
                to="decisions.decisionkindversion",
            ),
        ),
    ]
