from django.urls import path

from evals.rules import api

api_urlpatterns = [
    path("rules/import/", api.RulesImport.as_view(), name="api-rules-import"),
]
