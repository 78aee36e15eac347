"""API tokens of Docket's own, stored hashed, in place of DRF's authtoken (which kept each key in
the clear); service accounts; the manage_service_accounts permission (leads).

Each key DRF's table held is moved as its SHA-256, so a key that worked keeps working, and the old
table is dropped with the keys in it. The app `rest_framework.authtoken` is no longer installed,
so its table is read with SQL when it is there.
"""

import hashlib

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

OLD_TABLE = "authtoken_token"


def keys_hashed(apps, schema_editor):
    """Move DRF's keys in as their digests and drop DRF's table."""
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("core", "ApiToken")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, created, user_id FROM {OLD_TABLE}")
        rows = cursor.fetchall()
    ApiToken.objects.bulk_create(
        ApiToken(
            user_id=user_id,
            name="API token (made before tokens were hashed)",
            prefix=key[:8],
            digest=hashlib.sha256(key.encode()).hexdigest(),
            created_at=created,
            created_by="migration",
        )
        for key, created, user_id in rows
    )
    schema_editor.execute(f"DROP TABLE {OLD_TABLE}")


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0003_manage_webhooks_permission"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="access",
            options={
                "default_permissions": (),
                "managed": False,
                "permissions": [
                    ("view_console", "Use the console: dashboard, calls, rules, verdicts"),
                    ("review", "Claim sampled calls, mark verdicts, file issue rows"),
                    ("triage", "Triage issue rows: assign, write rules, add signals, fix rules"),
                    ("edit_rules", "Create rules and new rule versions"),
                    ("import_data", "Import transcripts, rules and verdicts"),
                    ("run_judge", "Start judge runs"),
                    ("view_calibration", "See judge calibration per rule version"),
                    ("promote", "Promote and demote rule versions, settle disagreements"),
                    ("manage_sample", "Make daily samples and queue calls by hand"),
                    ("manage_gates", "Edit golden sets and gates"),
                    ("run_gate", "Run gates and read gate results"),
                    ("manage_webhooks", "Register webhook URLs and read their deliveries"),
                    ("manage_service_accounts", "Make service accounts and their API tokens"),
                ],
            },
        ),
        migrations.CreateModel(
            name="ApiToken",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100)),
                ("prefix", models.CharField(max_length=12)),
                ("digest", models.CharField(max_length=64, unique=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("created_by", models.CharField(blank=True, max_length=150)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="api_tokens",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "API token",
                "ordering": ["-created_at", "-pk"],
            },
        ),
        migrations.CreateModel(
            name="ServiceAccount",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("created_by", models.CharField(blank=True, max_length=150)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "user",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="service_account",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.RunPython(keys_hashed, migrations.RunPython.noop, elidable=False),
    ]
