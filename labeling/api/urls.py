from django.urls import include, path

from .classifier_thresholds import ClassifierThresholds

urlpatterns: list = [
    path("", include("labeling.api.urls_issue_rows")),
    path("", include("labeling.api.urls_review")),
    path("", include("labeling.api.urls_calibration")),
    path(
        "classifier-thresholds/<str:rule_id>/",
        ClassifierThresholds.as_view(),
        name="api-classifier-thresholds",
    ),
    path("", include("labeling.api.urls_outcomes")),
    path("", include("labeling.api.urls_decisions")),
]
