"""Classifier spans key the confidence of a verdict that is not both flagged and marked by its
histogram bin (labeling/services/classifier_spans.py): the triggers change and every row is
counted again."""

from django.db import migrations, models


def spans_recount(apps, schema_editor):
    from labeling.services.classifier_spans import (
        classifier_spans_rebuild,
        classifier_spans_triggers_install,
    )

    connection = schema_editor.connection
    if classifier_spans_triggers_install(connection=connection):
        classifier_spans_rebuild(connection=connection)


class Migration(migrations.Migration):
    dependencies = [
        ("labeling", "0015_sample_item_counts"),
    ]

    operations = [
        migrations.AlterField(
            model_name="classifierspan",
            name="confidence",
            field=models.SmallIntegerField(
                help_text="A flagged and marked verdict's own, any other's histogram bin "
                "(0, 10, ... 90); -1: none given."
            ),
        ),
        migrations.RunPython(spans_recount, migrations.RunPython.noop, elidable=True),
    ]
