"""The webhooks app's models, which the evals app's migrations made (0001_squashed): their
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
                    name="Webhook",
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
                        (
                            "url",
                            models.URLField(
                                help_text="http(s) URL that receives the POSTs.", max_length=2000
                            ),
                        ),
                        (
                            "events",
                            models.JSONField(
                                default=list, help_text="Event names, from WEBHOOK_EVENTS."
                            ),
                        ),
                        (
                            "secret",
                            models.CharField(
                                help_text="The HMAC-SHA256 key receivers verify.", max_length=200
                            ),
                        ),
                        ("description", models.CharField(blank=True, max_length=200)),
                        ("active", models.BooleanField(default=True)),
                        ("created_by", models.CharField(blank=True, max_length=150)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        "db_table": "evals_webhook",
                        "ordering": ["pk"],
                    },
                ),
                migrations.CreateModel(
                    name="WebhookDelivery",
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
                        (
                            "uuid",
                            models.UUIDField(
                                help_text="Sent as Docket-Delivery; receivers dedupe.", unique=True
                            ),
                        ),
                        ("event", models.CharField(db_index=True, max_length=50)),
                        ("payload", models.JSONField()),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("pending", "pending"),
                                    ("retrying", "retrying"),
                                    ("delivered", "delivered"),
                                    ("failed", "failed (gave up)"),
                                ],
                                db_index=True,
                                default="pending",
                                max_length=10,
                            ),
                        ),
                        (
                            "attempts",
                            models.JSONField(
                                default=list,
                                help_text="One {at, status, error, ms} per attempt, oldest first.",
                            ),
                        ),
                        (
                            "response_status",
                            models.PositiveSmallIntegerField(blank=True, null=True),
                        ),
                        (
                            "response_body",
                            models.TextField(blank=True, help_text="The last answer, clipped."),
                        ),
                        ("error", models.CharField(blank=True, max_length=500)),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        ("delivered_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "webhook",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="deliveries",
                                to="webhooks.webhook",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name_plural": "webhook deliveries",
                        "db_table": "evals_webhookdelivery",
                        "ordering": ["-created_at", "-pk"],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
