"""Sample item counts: each day's sample's calls counted ahead for the samples list
(labeling/services/sample_counts.py); counted once here from the items."""

from django.db import migrations, models


def counts_install(apps, schema_editor):
    from labeling.services.sample_counts import SAMPLE_ITEM_COUNTS

    connection = schema_editor.connection
    if connection.vendor in ("postgresql", "sqlite") and SAMPLE_ITEM_COUNTS.triggers_install(
        connection=connection
    ):
        SAMPLE_ITEM_COUNTS.rebuild(connection=connection)


class Migration(migrations.Migration):
    dependencies = [
        ("labeling", "0014_tally_cells"),
    ]

    operations = [
        migrations.CreateModel(
            name="SampleItemCount",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("sample_id", models.BigIntegerField()),
                (
                    "n",
                    models.BigIntegerField(
                        help_text="Items added to the sample (negative: removed)."
                    ),
                ),
            ],
            options={
                "db_table": "labeling_sample_item_count",
                "indexes": [models.Index(fields=["sample_id"], name="sample_item_count_sample")],
            },
        ),
        migrations.RunPython(counts_install, migrations.RunPython.noop),
    ]
