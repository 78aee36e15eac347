from django.shortcuts import render

from .permissions import require
from .selectors import dashboard_figures, next_steps


@require("view_console")
def dashboard(request):
    return render(
        request,
        "console/dashboard.html",
        {"figures": dashboard_figures(), "panels": next_steps(request.user)},
    )
