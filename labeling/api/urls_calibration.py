from django.urls import path

from . import calibration

urlpatterns = [
    path("calibration/", calibration.CalibrationView.as_view(), name="api-calibration"),
    path(
        "rule-versions/<int:pk>/promote/",
        calibration.PromoteView.as_view(),
        name="api-rule-version-promote",
    ),
    path(
        "rule-versions/<int:pk>/demote/",
        calibration.DemoteView.as_view(),
        name="api-rule-version-demote",
    ),
]
