from django.shortcuts import render

from .permissions import require
from .selectors import dashboard_figures


@require("view_console")
def dashboard(request):
    return render(request, "console/dashboard.html", {"figures": dashboard_figures()})
