"""The catalog app's models, which the evals app's migrations made (0001_squashed): their
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
                    name="Agent",
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
                        ("name", models.SlugField(max_length=100, unique=True)),
                        ("description", models.TextField(blank=True)),
                        (
                            "conversation_plan",
                            models.JSONField(
                                blank=True,
                                default=list,
                                help_text="The phases of a call, in order, for the conversation judge.",
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "db_table": "evals_agent",
                        "ordering": ["name"],
                    },
                ),
                migrations.CreateModel(
                    name="AgentVersion",
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
                        ("version", models.CharField(max_length=100)),
                        ("notes", models.TextField(blank=True)),
                        ("instructions", models.TextField(blank=True)),
                        ("tools", models.JSONField(blank=True, default=list)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "agent",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="versions",
                                to="catalog.agent",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_agentversion",
                        "ordering": ["agent__name", "version"],
                    },
                ),
                migrations.CreateModel(
                    name="Transcript",
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
                        ("external_id", models.CharField(max_length=200, unique=True)),
                        ("checksum", models.CharField(db_index=True, max_length=64)),
                        ("audio_url", models.CharField(blank=True, max_length=2000)),
                        ("language", models.CharField(blank=True, max_length=20)),
                        ("scenario", models.CharField(blank=True, db_index=True, max_length=200)),
                        ("tenant", models.CharField(blank=True, db_index=True, max_length=200)),
                        ("started_at", models.DateTimeField(blank=True, db_index=True, null=True)),
                        ("imported_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        ("metadata", models.JSONField(blank=True, default=dict)),
                        (
                            "agent_version",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="transcripts",
                                to="catalog.agentversion",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_transcript",
                        "ordering": ["-started_at", "external_id"],
                    },
                ),
                migrations.CreateModel(
                    name="Turn",
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
                        ("index", models.PositiveIntegerField()),
                        (
                            "speaker",
                            models.CharField(
                                choices=[
                                    ("agent", "agent"),
                                    ("user", "user"),
                                    ("tool", "tool"),
                                    ("system", "system"),
                                ],
                                max_length=10,
                            ),
                        ),
                        ("text", models.TextField(blank=True)),
                        ("start_ms", models.PositiveIntegerField(blank=True, null=True)),
                        ("end_ms", models.PositiveIntegerField(blank=True, null=True)),
                        ("asr_confidence", models.FloatField(blank=True, null=True)),
                        ("phase", models.CharField(blank=True, max_length=50)),
                        ("tool_calls", models.JSONField(blank=True, default=list)),
                        ("tool_call_id", models.CharField(blank=True, max_length=200)),
                        (
                            "transcript",
                            models.ForeignKey(
                                db_index=False,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="turns",
                                to="catalog.transcript",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "evals_turn",
                        "ordering": ["transcript", "index"],
                    },
                ),
                migrations.AddConstraint(
                    model_name="agentversion",
                    constraint=models.UniqueConstraint(
                        fields=("agent", "version"), name="agent_version_unique"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="turn",
                    constraint=models.UniqueConstraint(
                        fields=("transcript", "index"), name="turn_index_unique"
                    ),
                ),
                migrations.AddConstraint(
                    model_name="turn",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            ("asr_confidence__isnull", True),
                            models.Q(("asr_confidence__gte", 0), ("asr_confidence__lte", 1)),
                            _connector="OR",
                        ),
                        name="turn_asr_confidence_range",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
