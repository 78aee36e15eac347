"""The console permissions move from the console app to core, keeping every grant.

A database made before the move holds them under the content type console.access, granted to the
role groups (and perhaps to users directly). Each one is moved to core.access as it is, so its
groups and users keep it; where core already holds the same codename, the grants are carried over
and the old row is dropped. The role groups get exactly their permissions after every migrate
(core.apps), from the roles of the code that runs then.
"""

from django.db import migrations


def _move(apps, *, source: str, target: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    old_ct = ContentType.objects.filter(app_label=source, model="access").first()
    if old_ct is None:
        return
    new_ct, _ = ContentType.objects.get_or_create(app_label=target, model="access")
    for old in Permission.objects.filter(content_type=old_ct):
        new = Permission.objects.filter(content_type=new_ct, codename=old.codename).first()
        if new is None:
            old.content_type = new_ct
            old.save(update_fields=["content_type"])
            continue
        for group in old.group_set.all():
            group.permissions.add(new)
        for user in old.user_set.all():
            user.user_permissions.add(new)
        old.delete()
    old_ct.delete()


def forwards(apps, schema_editor):
    _move(apps, source="console", target="core")


def backwards(apps, schema_editor):
    _move(apps, source="core", target="console")


class Migration(migrations.Migration):
    dependencies = [("core", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
