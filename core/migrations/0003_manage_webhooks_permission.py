"""The manage_webhooks permission (leads): register webhook URLs and read their deliveries."""

from django.db import migrations


def grant(apps, schema_editor):
    from core.roles import roles_sync

    roles_sync(apps=apps)


class Migration(migrations.Migration):
    dependencies = [("core", "0002_permissions_from_console")]

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
                ],
            },
        ),
        migrations.RunPython(grant, migrations.RunPython.noop),
    ]
