"""The classifiers app's models, which the evals app's migrations made (0001_squashed): their
tables are kept as they are (`db_table`), so this changes only Django's view of them.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("evals", "0001_squashed"),
        ("judging", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="VerdictCategory",
                    fields=[
                        (
                            "verdict",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                primary_key=True,
                                related_name="category",
                                serialize=False,
                                to="judging.verdict",
                            ),
                        ),
                        ("category", models.CharField(db_index=True, max_length=50)),
                    ],
                    options={
                        "db_table": "evals_verdictcategory",
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
