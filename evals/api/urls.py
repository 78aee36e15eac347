from django.urls import path

from .gating import GateRunDetail, GateRunListCreate

urlpatterns: list = [
    path("gate-runs/", GateRunListCreate.as_view(), name="api-gate-runs"),
    path("gate-runs/<int:pk>/", GateRunDetail.as_view(), name="api-gate-run"),
]
