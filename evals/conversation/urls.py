from django.urls import path

from evals.conversation import api, views

urlpatterns = [
    path("conversation/", views.conversation_index, name="conversation-index"),
    path("conversation/run/", views.conversation_run_start, name="conversation-run-start"),
    path(
        "conversation/versions/<int:pk>/",
        views.conversation_version,
        name="conversation-version",
    ),
]

api_urlpatterns = [
    path("conversation-runs/", api.ConversationRunList.as_view(), name="api-conversation-runs"),
    path(
        "conversation-scores/",
        api.ConversationScoreList.as_view(),
        name="api-conversation-scores",
    ),
    path(
        "conversation-versions/",
        api.ConversationVersionList.as_view(),
        name="api-conversation-versions",
    ),
]
