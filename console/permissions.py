"""Server-side permission checks shared by HTML views and the API."""

from django.contrib.auth.decorators import login_required, permission_required
from rest_framework.permissions import BasePermission


def require(*codenames: str):
    """View decorator: log in first, then 403 unless the user holds every console permission."""
    perms = [f"console.{c}" for c in codenames]

    def decorator(view):
        return login_required(permission_required(perms, raise_exception=True)(view))

    return decorator


def api_permission(*codenames: str) -> type[BasePermission]:
    """Return a DRF permission class that needs every named console permission."""
    perms = [f"console.{c}" for c in codenames]

    class HasConsolePermission(BasePermission):
        message = f"Needs permission: {', '.join(codenames)}."

        def has_permission(self, request, view):
            user = request.user
            return bool(user and user.is_authenticated and user.has_perms(perms))

    HasConsolePermission.__name__ = "Has_" + "_".join(codenames)
    return HasConsolePermission
