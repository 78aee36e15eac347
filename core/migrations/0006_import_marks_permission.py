"""The import_marks permission (leads): import reviewers' marks made elsewhere.

The lead role is granted it after the migrate that made it (core.apps syncs the roles).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0005_import_jobs"),
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
                    (
                        "import_marks",
                        "Import marks made elsewhere (a spreadsheet, Label Studio)",
                    ),
                ],
            },
        ),
    ]
