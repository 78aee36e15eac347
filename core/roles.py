"""The three roles and the console permissions each one holds."""

REVIEWER = "reviewer"
ENGINEER = "engineer"
LEAD = "lead"
ROLES = (REVIEWER, ENGINEER, LEAD)

ROLE_PERMISSIONS: dict[str, list[str]] = {
    REVIEWER: ["view_console", "review"],
    ENGINEER: ["view_console", "triage", "edit_rules", "import_data", "run_judge", "run_gate"],
    LEAD: [
        "view_console",
        "review",
        "triage",
        "edit_rules",
        "import_data",
        "run_judge",
        "view_calibration",
        "promote",
        "manage_sample",
        "manage_gates",
        "run_gate",
        "manage_webhooks",
        "manage_service_accounts",
    ],
}


def roles_sync() -> None:
    """Create the role groups and grant each exactly its permissions (idempotent)."""
    from django.apps import apps
    from django.contrib.auth.management import create_permissions
    from django.contrib.auth.models import Group, Permission

    create_permissions(apps.get_app_config("core"), verbosity=0)
    for role, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        perms = Permission.objects.filter(content_type__app_label="core", codename__in=codenames)
        group.permissions.set(perms)


def user_roles(user) -> list[str]:
    """Return the role names the user belongs to, in a stable order."""
    if not user.is_authenticated:
        return []
    names = set(user.groups.values_list("name", flat=True))
    return [r for r in ROLES if r in names]


def role_group(role: str):
    """Return a role's group, syncing the roles first if it is missing (a flushed database)."""
    from django.contrib.auth.models import Group

    group = Group.objects.filter(name=role).first()
    if group is None:
        roles_sync()
        group = Group.objects.get(name=role)
    return group
