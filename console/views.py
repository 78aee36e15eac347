from django.conf import settings
from django.http import Http404, JsonResponse
from django.shortcuts import render
from django.views import defaults
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from core.api.errors import error_body
from core.permissions import require, user_can
from evals.classifiers.services import classifier_connection, classifier_connection_test
from evals.judging.services.connection import (
    ConnectionCheck,
    judge_connection,
    judge_connection_test,
)

from .health import health
from .selectors import dashboard_figures, dashboard_outcomes, next_steps


@never_cache
@require_GET
def healthz(request):
    """The server's health, without a login: 200 when the database and the broker answer, 503
    naming what failed (the kind of error only, never a host or a URL)."""
    ok, state = health()
    return JsonResponse(state, status=200 if ok else 503)


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


def server_error(request):
    """500 (DEBUG off): the API's one error body under /api/, the console's page elsewhere."""
    if request.path.startswith("/api/"):
        body = error_body("Server error: the request was not completed.", "server_error")
        return JsonResponse(body, status=500)
    return defaults.server_error(request)


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


# The model connections the console shows, in order: (key, settings, test).
CONNECTIONS = {
    "judge": (judge_connection, judge_connection_test),
    "classifier": (classifier_connection, classifier_connection_test),
}


def _connections(checks: dict | None = None) -> list[dict]:
    return [
        {"key": key, "conn": read(), "check": (checks or {}).get(key)}
        for key, (read, _) in CONNECTIONS.items()
    ]


@require("run_judge")
@require_GET
def judge_connection_page(request):
    """The judge's and the classifiers' model connections (never a key), each with a test."""
    return render(request, "console/connection.html", {"connections": _connections()})


@require("run_judge")
@require_POST
def judge_connection_test_view(request, which: str):
    """Send one real prompt through a connection; show the answer, the latency and the cost."""
    if which not in CONNECTIONS:
        raise Http404("No such connection.")
    read, test = CONNECTIONS[which]
    conn = read()
    check = (
        test()
        if conn.configured
        else ConnectionCheck(
            ok=False,
            model=conn.model,
            latency_ms=0,
            error=f"nothing to call: set {conn.variables['base_url']} or {conn.variables['key']}",
        )
    )
    context = {"connections": _connections({which: check})}
    if request.htmx:
        item = next(c for c in context["connections"] if c["key"] == which)
        return render(request, "console/connection.html#connection-test", {"c": item})
    return render(request, "console/connection.html", context)
