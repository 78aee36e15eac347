from django.db import migrations


def create_roles(apps, schema_editor):
    from console.roles import roles_sync

    roles_sync(apps=apps)


class Migration(migrations.Migration):
    dependencies = [("console", "0001_initial")]
    operations = [migrations.RunPython(create_roles, migrations.RunPython.noop)]
