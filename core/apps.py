from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _roles(sender, **kwargs):
    """After every migrate, give each role exactly its permissions (core.roles.ROLE_PERMISSIONS).

    Here and not in a migration: a migration runs against the schema of its own time, and the
    roles are today's configuration, read by today's code.
    """
    from core.roles import roles_sync

    roles_sync()


def _data_version_triggers(sender, using, **kwargs):
    """After every migrate, put the data versions' triggers back on the tables the apps
    registered (SQLite drops a table's triggers when a migration rebuilds it)."""
    from core.data_versions import data_version_triggers_install

    data_version_triggers_install(using=using)


def _bulk_key_triggers(sender, using, **kwargs):
    """After every migrate, put back the triggers that keep the keys checked per statement
    (core.bulk_keys)."""
    from core.bulk_keys import bulk_key_triggers_install

    bulk_key_triggers_install(using=using)


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self):
        from core import tasks  # noqa: F401 (registers the Celery tasks)

        post_migrate.connect(_roles, sender=self, dispatch_uid="core-roles-sync")
        post_migrate.connect(
            _data_version_triggers, sender=self, dispatch_uid="core-data-version-triggers"
        )
        post_migrate.connect(_bulk_key_triggers, sender=self, dispatch_uid="core-bulk-keys")
