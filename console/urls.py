from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.utils.module_loading import import_string

from . import views
from .api import SchemaView, api_docs, router_urls

# The apps with pages, lowest first (a lower app's routes are tried first).
PAGE_APPS = [
    "core",
    "evals.webhooks",
    "evals.catalog",
    "evals.ingest",
    "evals.judging",
    "evals.gating",
    "evals.conversation",
    "evals.evalruns",
    "evals.trajectories",
    "labeling",
]

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("healthz", views.healthz, name="healthz"),
    path("layers/", views.layers, name="layers"),
    path("judge-connection/", views.judge_connection_page, name="judge-connection"),
    path(
        "judge-connection/<slug:which>/test/",
        views.judge_connection_test_view,
        name="judge-connection-test",
    ),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="console/login.html", http_method_names=["get", "post", "options"]
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(router_urls)),
    path("api/otel/", include(import_string("evals.ingest.urls.otel_urlpatterns"))),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    # The split view serves its start-up script as a file, so the docs page works under our CSP.
    path("api/docs/", api_docs, name="api-docs"),
    *[path("", include(f"{app}.urls")) for app in PAGE_APPS],
]

handler500 = "console.views.server_error"
