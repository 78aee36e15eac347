from django.urls import path

from . import views

urlpatterns = [
    path("calls/", views.transcript_list, name="transcript-list"),
    path("calls/<str:external_id>/", views.transcript_detail, name="transcript-detail"),
    path("rules/", views.rule_list, name="rule-list"),
    path("rules/<str:rule_id>/", views.rule_detail, name="rule-detail"),
    path("verdicts/", views.verdict_list, name="verdict-list"),
]
