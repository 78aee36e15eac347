from django.db import migrations


class Migration(migrations.Migration):
    """The unmanaged Access model (the console permissions) now lives in core: no table changes."""

    dependencies = [
        ("console", "0002_roles"),
        ("core", "0002_permissions_from_console"),
    ]
    operations = [migrations.DeleteModel(name="Access")]
