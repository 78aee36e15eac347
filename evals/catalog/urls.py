from django.urls import path

from evals.catalog import api, views

urlpatterns = [
    path("agents/", views.agent_version_list, name="agent-version-list"),
    path(
        "agents/<slug:agent>/<str:version>/",
        views.agent_version_detail,
        name="agent-version-detail",
    ),
]

api_urlpatterns = [
    path("transcripts/import/", api.TranscriptsImport.as_view(), name="api-transcripts-import"),
    path("agents/", api.AgentVersionList.as_view(), name="api-agent-versions"),
    path(
        "agents/<slug:agent>/versions/<str:version>/",
        api.AgentVersionDetail.as_view(),
        name="api-agent-version",
    ),
]
