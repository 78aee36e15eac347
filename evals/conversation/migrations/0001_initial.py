"""The conversation app's models, which the evals app's migrations made (0001_squashed): their
tables are kept as they are (`db_table`), so this changes only Django's view of them.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("evals", "0001_squashed"),
        ("catalog", "0001_initial"),
        ("judging", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ConversationScore",
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
                        ("score", models.PositiveSmallIntegerField(blank=True, null=True)),
                        ("reason", models.TextField(blank=True)),
                        ("findings", models.JSONField(blank=True, default=list)),
                        (
                            "plan",
                            models.JSONField(
                                blank=True,
                                default=list,
                                help_text="The phases the judge was given.",
                            ),
                        ),
                        (
                            "error",
                            models.TextField(
                                blank=True,
                                help_text="Set when the judgement failed; left out of every figure.",
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "judge",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="conversation_scores",
                                to="judging.judge",
                            ),
                        ),
                        (
                            "judge_run",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="conversation_scores",
                                to="judging.judgerun",
                            ),
                        ),
                        (
                            "transcript",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="conversation_scores",
                                to="catalog.transcript",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_conversationscore",
                        "ordering": ["transcript", "judge"],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("transcript", "judge"), name="conversation_score_key_unique"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("score__isnull", True),
                                    models.Q(("score__gte", 1), ("score__lte", 10)),
                                    _connector="OR",
                                ),
                                name="conversation_score_range",
                            ),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
