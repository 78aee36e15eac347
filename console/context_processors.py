from core.roles import user_roles


def roles(request):
    """Expose the user's roles to every template (navigation shows what each role may use)."""
    return {
        "user_roles": user_roles(getattr(request, "user", None)) if hasattr(request, "user") else []
    }
