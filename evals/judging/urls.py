from django.urls import path

from evals.judging.api import browse as browse_api
from evals.judging.api import importing as importing_api
from evals.judging.api import runs as runs_api
from evals.judging.views import browse, runs

urlpatterns = [
    path("calls/", browse.transcript_list, name="transcript-list"),
    path("calls/<str:external_id>/", browse.transcript_detail, name="transcript-detail"),
    path("rules/", browse.rule_list, name="rule-list"),
    path("rules/<str:rule_id>/", browse.rule_detail, name="rule-detail"),
    path("verdicts/", browse.verdict_list, name="verdict-list"),
    path("judge-runs/", runs.judge_run_list, name="judge-run-list"),
    path("judge-runs/new/", runs.judge_run_start, name="judge-run-start"),
    path("judge-runs/<int:pk>/", runs.judge_run_detail, name="judge-run-detail"),
    path("judge-runs/<int:pk>/resume/", runs.judge_run_resume_view, name="judge-run-resume"),
]

api_urlpatterns = [
    path("judge-runs/", runs_api.JudgeRunListCreate.as_view(), name="api-judge-runs"),
    path("judge-runs/<int:pk>/", runs_api.JudgeRunDetail.as_view(), name="api-judge-run"),
    path("verdicts/import/", importing_api.VerdictsImport.as_view(), name="api-verdicts-import"),
    path("transcripts/", browse_api.TranscriptList.as_view(), name="api-transcripts"),
    path("transcripts/<str:id>/", browse_api.TranscriptDetail.as_view(), name="api-transcript"),
    path("rules/", browse_api.RuleList.as_view(), name="api-rules"),
    path("rules/<str:id>/", browse_api.RuleDetail.as_view(), name="api-rule"),
    path("verdicts/", browse_api.VerdictList.as_view(), name="api-verdicts"),
]
