"""The API root: each app contributes its routes under /api/v1/."""

from django.urls import include, path

router_urls = [
    path("", include("evals.api.urls")),
    path("", include("labeling.api.urls")),
]
