from django.urls import include, path

from .agents import AgentVersionDetail, AgentVersionList
from .axes import AxesReportDetail, AxesReportListCreate
from .catalog import RuleDetail, RuleList, TranscriptDetail, TranscriptList, VerdictList
from .classify import ClassifierLogsImport, Classify
from .evalruns import DatasetImport, DatasetList, EvalRunDetail, EvalRunListCreate
from .gating import GateRunDetail, GateRunListCreate
from .importing import RulesImport, TranscriptsImport, VerdictsImport
from .judging import JudgeRunDetail, JudgeRunListCreate
from .webhooks import WebhookDeliveryList, WebhookDetail, WebhookListCreate

urlpatterns: list = [
    path("judge-runs/", JudgeRunListCreate.as_view(), name="api-judge-runs"),
    path("judge-runs/<int:pk>/", JudgeRunDetail.as_view(), name="api-judge-run"),
    path("gate-runs/", GateRunListCreate.as_view(), name="api-gate-runs"),
    path("gate-runs/<int:pk>/", GateRunDetail.as_view(), name="api-gate-run"),
    path("rules/import/", RulesImport.as_view(), name="api-rules-import"),
    path("transcripts/import/", TranscriptsImport.as_view(), name="api-transcripts-import"),
    path("verdicts/import/", VerdictsImport.as_view(), name="api-verdicts-import"),
    path("transcripts/", TranscriptList.as_view(), name="api-transcripts"),
    path("transcripts/<str:id>/", TranscriptDetail.as_view(), name="api-transcript"),
    path("agents/", AgentVersionList.as_view(), name="api-agent-versions"),
    path(
        "agents/<slug:agent>/versions/<str:version>/",
        AgentVersionDetail.as_view(),
        name="api-agent-version",
    ),
    path("rules/", RuleList.as_view(), name="api-rules"),
    path("rules/<str:id>/", RuleDetail.as_view(), name="api-rule"),
    path("verdicts/", VerdictList.as_view(), name="api-verdicts"),
    path("datasets/", DatasetList.as_view(), name="api-datasets"),
    path("datasets/import/", DatasetImport.as_view(), name="api-datasets-import"),
    path("eval-runs/", EvalRunListCreate.as_view(), name="api-eval-runs"),
    path("eval-runs/<int:pk>/", EvalRunDetail.as_view(), name="api-eval-run"),
    path("", include("evals.api.urls_decisions")),
    path("axes-reports/", AxesReportListCreate.as_view(), name="api-axes-reports"),
    path("axes-reports/<int:pk>/", AxesReportDetail.as_view(), name="api-axes-report"),
    path("webhooks/", WebhookListCreate.as_view(), name="api-webhooks"),
    path("webhooks/<int:pk>/", WebhookDetail.as_view(), name="api-webhook"),
    path("webhook-deliveries/", WebhookDeliveryList.as_view(), name="api-webhook-deliveries"),
    path("classify/<str:name>/", Classify.as_view(), name="api-classify"),
    path(
        "classifier-logs/import/",
        ClassifierLogsImport.as_view(),
        name="api-classifier-logs-import",
    ),
]
