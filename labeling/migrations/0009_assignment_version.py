"""An assignment's version: it moves on with every change to the reviewer's marks on the call
and with finish and skip, so a change made from a stale view is refused (labeling.services.held).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("labeling", "0008_mark_source"),
    ]

    operations = [
        migrations.AddField(
            model_name="assignment",
            name="version",
            field=models.PositiveIntegerField(
                db_default=1,
                default=1,
                help_text="Moves on with every change to the reviewer's marks on the call and when it is finished or skipped; a page or client sends the version it saw, and a change made from a stale view is refused.",
            ),
        ),
    ]
