from django.urls import path

from . import views_calibration as v

urlpatterns = [
    path("", v.calibration, name="calibration"),
    path("export.<str:fmt>", v.calibration_export, name="calibration-export"),
    path("rule-versions/<int:pk>/", v.calibration_detail, name="calibration-detail"),
    path(
        "rule-versions/<int:pk>/verdicts/<str:cell>/", v.calibration_cell, name="calibration-cell"
    ),
    path("rule-versions/<int:pk>/promote/", v.calibration_promote, name="calibration-promote"),
    path("rule-versions/<int:pk>/demote/", v.calibration_demote, name="calibration-demote"),
    path("decisions/", v.calibration_decisions, name="calibration-decisions"),
    path("disagreements/", v.calibration_disagreements, name="calibration-disagreements"),
    path("verdicts/<int:pk>/settle/", v.calibration_settle, name="calibration-settle"),
]
