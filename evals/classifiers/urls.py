from django.urls import path

from evals.classifiers import api

api_urlpatterns = [
    path("classify/<str:name>/", api.Classify.as_view(), name="api-classify"),
    path(
        "classifier-logs/import/",
        api.ClassifierLogsImport.as_view(),
        name="api-classifier-logs-import",
    ),
]
