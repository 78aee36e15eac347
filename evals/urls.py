from django.urls import path

from . import views, views_axes, views_evalruns, views_gates, views_judging, views_webhooks

urlpatterns = [
    path("calls/", views.transcript_list, name="transcript-list"),
    path("calls/<str:external_id>/", views.transcript_detail, name="transcript-detail"),
    path("agents/", views.agent_version_list, name="agent-version-list"),
    path(
        "agents/<slug:agent>/<str:version>/",
        views.agent_version_detail,
        name="agent-version-detail",
    ),
    path("rules/", views.rule_list, name="rule-list"),
    path("rules/<str:rule_id>/", views.rule_detail, name="rule-detail"),
    path("verdicts/", views.verdict_list, name="verdict-list"),
    path("judge-runs/", views_judging.judge_run_list, name="judge-run-list"),
    path("judge-runs/new/", views_judging.judge_run_start, name="judge-run-start"),
    path("judge-runs/<int:pk>/", views_judging.judge_run_detail, name="judge-run-detail"),
    path(
        "judge-runs/<int:pk>/resume/", views_judging.judge_run_resume_view, name="judge-run-resume"
    ),
    path("eval-runs/", views_evalruns.eval_run_list, name="eval-run-list"),
    path("eval-runs/new/", views_evalruns.eval_run_start, name="eval-run-start"),
    path("eval-runs/<int:pk>/", views_evalruns.eval_run_detail, name="eval-run-detail"),
    path("gates/", views_gates.gate_index, name="gate-index"),
    path("gates/runs/<int:pk>/", views_gates.gate_run_detail, name="gate-run-detail"),
    path("gates/<slug:name>/", views_gates.gate_detail, name="gate-detail"),
    path("gates/<slug:name>/history/", views_gates.gate_history, name="gate-history"),
    path("gates/<slug:name>/run/", views_gates.gate_run_start, name="gate-run-start"),
    path("gates/<slug:name>/settings/", views_gates.gate_settings, name="gate-settings"),
    path("gates/<slug:name>/metrics/add/", views_gates.gate_metric_add, name="gate-metric-add"),
    path(
        "gates/<slug:name>/metrics/<int:pk>/", views_gates.gate_metric_edit, name="gate-metric-edit"
    ),
    path(
        "gates/<slug:name>/metrics/<int:pk>/remove/",
        views_gates.gate_metric_remove,
        name="gate-metric-remove",
    ),
    path("golden-sets/<slug:name>/", views_gates.golden_set_detail, name="golden-set-detail"),
    path(
        "golden-sets/<slug:name>/v<int:version>/",
        views_gates.golden_set_detail,
        name="golden-set-version",
    ),
    path("axes/", views_axes.axes_report_list, name="axes-report-list"),
    path("axes/<int:pk>/", views_axes.axes_report_detail, name="axes-report-detail"),
    path("webhooks/", views_webhooks.webhook_list, name="webhook-list"),
    path("webhooks/<int:pk>/", views_webhooks.webhook_detail, name="webhook-detail"),
    path("webhooks/<int:pk>/toggle/", views_webhooks.webhook_toggle, name="webhook-toggle"),
]
