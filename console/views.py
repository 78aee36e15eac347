from django.conf import settings
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.permissions import require, user_can

from .selectors import dashboard_figures, dashboard_outcomes, next_steps


@require("view_console")
@require_GET
def dashboard(request):
    return render(
        request,
        "console/dashboard.html",
        {
            "figures": dashboard_figures(),
            "panels": next_steps(request.user),
            "outcomes": dashboard_outcomes() if user_can(request.user, "view_calibration") else [],
        },
    )


def login_locked(request, original_response=None, credentials=None):
    """The login form's answer once django-axes has locked a username from an address (429)."""
    return render(
        request,
        "console/login_locked.html",
        {
            "failure_limit": settings.DOCKET_LOGIN_FAILURE_LIMIT,
            "cooloff_minutes": settings.DOCKET_LOGIN_COOLOFF_MINUTES,
        },
        status=429,
    )


@require("view_console")
@require_GET
def layers(request):
    """The map of what Docket measures: the five layers, runtime classifiers and dataset evals,
    each linking to its pages (only those the user's role opens)."""
    return render(request, "console/layers.html")
