from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.CreateModel(
            name="Access",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                )
            ],
            options={
                "managed": False,
                "default_permissions": (),
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
                ],
            },
        ),
    ]
