from django.urls import include, path

urlpatterns: list = [
    path("", include("labeling.urls_issues")),
    path("", include("labeling.urls_review")),
    path("calibration/", include("labeling.urls_calibration")),
    path("classifiers/", include("labeling.urls_classifiers")),
    path("", include("labeling.urls_outcomes")),
    path("", include("labeling.urls_decisions")),
]
