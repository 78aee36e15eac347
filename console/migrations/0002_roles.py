from django.db import migrations


class Migration(migrations.Migration):
    """Made the role groups when the permissions lived here; core's migrations make them now
    (core.0002 moves the permissions of a database made before, with their grants)."""

    dependencies = [("console", "0001_initial")]
    operations = [migrations.RunPython(migrations.RunPython.noop, migrations.RunPython.noop)]
