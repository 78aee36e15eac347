from django.urls import path

from evals.gating import api, views

urlpatterns = [
    path("gates/", views.gate_index, name="gate-index"),
    path("gates/runs/<int:pk>/", views.gate_run_detail, name="gate-run-detail"),
    path("gates/<slug:name>/", views.gate_detail, name="gate-detail"),
    path("gates/<slug:name>/history/", views.gate_history, name="gate-history"),
    path("gates/<slug:name>/run/", views.gate_run_start, name="gate-run-start"),
    path("gates/<slug:name>/settings/", views.gate_settings, name="gate-settings"),
    path("gates/<slug:name>/metrics/add/", views.gate_metric_add, name="gate-metric-add"),
    path("gates/<slug:name>/metrics/<int:pk>/", views.gate_metric_edit, name="gate-metric-edit"),
    path(
        "gates/<slug:name>/metrics/<int:pk>/remove/",
        views.gate_metric_remove,
        name="gate-metric-remove",
    ),
    path("golden-sets/<slug:name>/", views.golden_set_detail, name="golden-set-detail"),
    path(
        "golden-sets/<slug:name>/v<int:version>/",
        views.golden_set_detail,
        name="golden-set-version",
    ),
]

api_urlpatterns = [
    path("gate-runs/", api.GateRunListCreate.as_view(), name="api-gate-runs"),
    path("gate-runs/<int:pk>/", api.GateRunDetail.as_view(), name="api-gate-run"),
]
