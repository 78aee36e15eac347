"""The trajectories app's models, which the evals app's migrations made (0001_squashed): their
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
                    name="AxesReport",
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
                        ("passed", models.BooleanField(db_index=True, default=True)),
                        ("max_drop", models.FloatField(default=0.05)),
                        (
                            "results",
                            models.JSONField(
                                blank=True,
                                default=dict,
                                help_text="overall, tasks, trajectories, comparison",
                            ),
                        ),
                        ("created_by", models.CharField(blank=True, max_length=150)),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        (
                            "agent_version",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="axes_reports",
                                to="catalog.agentversion",
                            ),
                        ),
                        (
                            "baseline",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="trajectories.axesreport",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_axesreport",
                        "ordering": ["-created_at", "-pk"],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
