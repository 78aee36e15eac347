from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.permissions import require

from .selectors import dashboard_figures, next_steps


@require("view_console")
@require_GET
def dashboard(request):
    return render(
        request,
        "console/dashboard.html",
        {"figures": dashboard_figures(), "panels": next_steps(request.user)},
    )
