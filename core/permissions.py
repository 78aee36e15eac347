"""Server-side permission checks shared by HTML views, the API and the services.

The permissions are `core.<codename>` (see core.models.Access); templates read them as
`perms.core.<codename>`.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required, permission_required
from django.db.models import Q, QuerySet
from rest_framework.permissions import BasePermission

APP_LABEL = "core"


def perm_names(*codenames: str) -> list[str]:
    """Return the full permission names (`core.review`) of console permission codenames."""
    return [f"{APP_LABEL}.{c}" for c in codenames]


def user_can(user, *codenames: str) -> bool:
    """Whether the user is logged in and holds every named console permission."""
    return bool(user and user.is_authenticated and user.has_perms(perm_names(*codenames)))


def require(*codenames: str):
    """View decorator: log in first, then 403 unless the user holds every console permission."""
    perms = perm_names(*codenames)

    def decorator(view):
        return login_required(permission_required(perms, raise_exception=True)(view))

    return decorator


def api_permission(*codenames: str) -> type[BasePermission]:
    """Return a DRF permission class that needs every named console permission."""

    class HasConsolePermission(BasePermission):
        message = f"Needs permission: {', '.join(codenames)}."

        def has_permission(self, request, view):
            return user_can(request.user, *codenames)

    HasConsolePermission.__name__ = "Has_" + "_".join(codenames)
    return HasConsolePermission


def users_with_permission(codename: str) -> QuerySet:
    """Return the active users holding a console permission, through a role or directly."""
    perm = Q(
        groups__permissions__codename=codename,
        groups__permissions__content_type__app_label=APP_LABEL,
    )
    perm |= Q(
        user_permissions__codename=codename, user_permissions__content_type__app_label=APP_LABEL
    )
    return (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(perm | Q(is_superuser=True))
        .distinct()
        .order_by("username")
    )
