from django.urls import path

from . import views, views_judging

urlpatterns = [
    path("calls/", views.transcript_list, name="transcript-list"),
    path("calls/<str:external_id>/", views.transcript_detail, name="transcript-detail"),
    path("rules/", views.rule_list, name="rule-list"),
    path("rules/<str:rule_id>/", views.rule_detail, name="rule-detail"),
    path("verdicts/", views.verdict_list, name="verdict-list"),
    path("judge-runs/", views_judging.judge_run_list, name="judge-run-list"),
    path("judge-runs/new/", views_judging.judge_run_start, name="judge-run-start"),
    path("judge-runs/<int:pk>/", views_judging.judge_run_detail, name="judge-run-detail"),
]
