"""The console permissions move to core with every grant kept (core.0002)."""

import pytest
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from core.models import Access
from core.roles import ROLE_PERMISSIONS
from tests.factories import UserFactory

BEFORE = [("console", "0002_roles"), ("core", None)]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def _migrate_command():
    """`manage.py migrate`, as a user runs it: its post_migrate handlers sync the roles."""
    call_command("migrate", verbosity=0)


def _latest():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


@pytest.fixture
def before_the_move(transactional_db):
    """Migrate to the state before core existed; always back to the latest afterwards."""
    _migrate(_latest())
    _migrate(BEFORE)
    ContentType.objects.clear_cache()
    yield
    _migrate(_latest())
    ContentType.objects.clear_cache()


def _perms(holder) -> set[str]:
    return {f"{p.content_type.app_label}.{p.codename}" for p in holder.permissions.all()}


def test_a_database_from_before_the_move_keeps_every_grant(before_the_move):
    # The database as console.0002 left it: the permissions under console.access, granted.
    ContentType.objects.filter(model="access").delete()
    old_ct = ContentType.objects.create(app_label="console", model="access")
    old = {
        codename: Permission.objects.create(content_type=old_ct, codename=codename, name=name)
        for codename, name in Access._meta.permissions
    }
    Group.objects.all().delete()
    for role, codenames in ROLE_PERMISSIONS.items():
        Group.objects.create(name=role).permissions.set([old[c] for c in codenames])
    # A reviewer group someone widened by hand is set back to exactly the reviewer's grants.
    Group.objects.get(name="reviewer").permissions.add(old["promote"])
    auditors = Group.objects.create(name="auditors")
    auditors.permissions.set([old["view_calibration"]])
    direct = UserFactory(username="direct")
    direct.user_permissions.add(old["run_gate"])
    # core.access may already hold a codename (a post_migrate run): its grants are merged.
    core_ct = ContentType.objects.create(app_label="core", model="access")
    Permission.objects.create(content_type=core_ct, codename="triage", name="Triage")

    _migrate_command()
    ContentType.objects.clear_cache()

    assert not ContentType.objects.filter(app_label="console").exists()
    assert set(
        Permission.objects.filter(codename__in=old).values_list(
            "content_type__app_label", flat=True
        )
    ) == {"core"}
    assert Permission.objects.filter(codename="triage").count() == 1
    for role, codenames in ROLE_PERMISSIONS.items():
        assert _perms(Group.objects.get(name=role)) == {f"core.{c}" for c in codenames}, role
    assert _perms(auditors) == {"core.view_calibration"}
    direct = type(direct).objects.get(pk=direct.pk)
    assert direct.has_perm("core.run_gate") and not direct.has_perm("console.run_gate")
    assert UserFactory(username="rita", roles=["reviewer"]).has_perm("core.review")


def test_the_move_can_be_undone_and_redone(before_the_move):
    assert set(
        Permission.objects.filter(codename="review").values_list(
            "content_type__app_label", flat=True
        )
    ) == {"console"}
    _migrate_command()
    ContentType.objects.clear_cache()
    assert _perms(Group.objects.get(name="lead")) == {f"core.{c}" for c in ROLE_PERMISSIONS["lead"]}
