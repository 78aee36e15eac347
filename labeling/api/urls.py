from django.urls import include, path

urlpatterns: list = [
    path("", include("labeling.api.urls_issue_rows")),
    path("", include("labeling.api.urls_review")),
    path("", include("labeling.api.urls_calibration")),
    path("", include("labeling.api.urls_outcomes")),
]
