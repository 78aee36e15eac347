from django.urls import path

from evals.decisions import api

api_urlpatterns = [
    path("decision-kinds/", api.DecisionKindList.as_view(), name="api-decision-kinds"),
    path(
        "decision-kinds/import/",
        api.DecisionKindsImport.as_view(),
        name="api-decision-kinds-import",
    ),
]
