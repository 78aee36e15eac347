from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _roles(sender, **kwargs):
    """After every migrate, give each role exactly its permissions (core.roles.ROLE_PERMISSIONS).

    Here and not in a migration: a migration runs against the schema of its own time, and the
    roles are today's configuration, read by today's code.
    """
    from core.roles import roles_sync

    roles_sync()


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self):
        from core import tasks  # noqa: F401 (registers the Celery tasks)

        post_migrate.connect(_roles, sender=self, dispatch_uid="core-roles-sync")
