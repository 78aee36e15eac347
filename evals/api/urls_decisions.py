from django.urls import path

from .decisions import DecisionKindList, DecisionKindsImport

urlpatterns: list = [
    path("decision-kinds/", DecisionKindList.as_view(), name="api-decision-kinds"),
    path("decision-kinds/import/", DecisionKindsImport.as_view(), name="api-decision-kinds-import"),
]
