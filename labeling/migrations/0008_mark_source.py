"""Where an imported mark came from (blank for marks made in Docket)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("labeling", "0007_foreign_keys_to_the_evals_apps"),
    ]

    operations = [
        migrations.AddField(
            model_name="mark",
            name="source",
            field=models.CharField(
                blank=True,
                db_default="",
                help_text="Where an imported mark came from (the import's file or `body`, and its format); blank for a mark made in Docket.",
                max_length=200,
            ),
        ),
    ]
