"""The API root (each app contributes its routes under /api/v1/), the schema and its docs page.

The schema and the docs need a login unless DOCKET_API_DOCS_PUBLIC is set.
"""

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.urls import include, path
from django.utils.module_loading import import_string
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.renderers import JSONRenderer

# The apps with API routes, lowest first: `rules/import/` (rules) is tried before `rules/<id>/`
# (judging), `transcripts/import/` (catalog) before `transcripts/<id>/`.
API_APPS = [
    "evals.webhooks",
    "evals.catalog",
    "evals.ingest",
    "evals.rules",
    "evals.judging",
    "evals.gating",
    "evals.conversation",
    "evals.classifiers",
    "evals.decisions",
    "evals.evalruns",
    "evals.trajectories",
    "labeling",
]
router_urls = [
    *[path("", include(import_string(f"{app}.urls.api_urlpatterns"))) for app in API_APPS],
]


class SchemaView(SpectacularAPIView):
    """The OpenAPI schema: 401 without a login (session or token) unless it is public."""

    def get_permissions(self):
        return [AllowAny()] if settings.DOCKET_API_DOCS_PUBLIC else [IsAuthenticated()]

    def finalize_response(self, request, response, *args, **kwargs):
        if response.status_code >= 400:  # the one error body, in JSON like every API error
            request.accepted_renderer, request.accepted_media_type = (
                JSONRenderer(),
                "application/json",
            )
        return super().finalize_response(request, response, *args, **kwargs)


_docs = SpectacularSwaggerSplitView.as_view(url_name="api-schema", permission_classes=[AllowAny])


def api_docs(request, *args, **kwargs):
    """Swagger UI over the schema; a visitor who is not logged in goes to the login page first."""
    if not settings.DOCKET_API_DOCS_PUBLIC and not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return _docs(request, *args, **kwargs)
