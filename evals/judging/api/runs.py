"""Judge runs over HTTP: start one (or estimate it) and follow it."""

from decimal import Decimal

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.runs import RunListCreate
from core.permissions import api_permission
from evals.judging.models import JudgeRun
from evals.judging.selectors.runs import (
    judge_run_errors,
    judge_run_get,
    judge_run_list,
    judge_run_needs_model,
    judge_run_summary,
)
from evals.judging.services.runs import JudgeRunPlan, judge_run_create


class JudgeRunRequest(serializers.Serializer):
    agent_version = serializers.CharField(required=False, allow_blank=True, max_length=100)
    transcripts = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        help_text="transcript ids; empty: every transcript",
    )
    rules = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        help_text="rule ids, patterns (asking.*) or groups; empty: every active rule",
    )
    detectors_only = serializers.BooleanField(required=False, default=False)
    dry_run = serializers.BooleanField(
        required=False,
        default=False,
        help_text="return the number of calls and the estimated cost; spend nothing",
    )
    cost_cap = serializers.DecimalField(
        required=False,
        max_digits=12,
        decimal_places=4,
        min_value=Decimal(0),
        help_text="USD; default JUDGE_COST_CAP_USD",
    )


class JudgeRunPlanSerializer(serializers.Serializer):
    """What a run would do (a dry run): calls, cache hits and the estimated cost."""

    model = serializers.CharField()
    prompt_version = serializers.CharField()
    transcripts = serializers.IntegerField()
    rule_versions = serializers.IntegerField()
    llm_items = serializers.IntegerField(help_text="transcript x rule group checks for the LLM")
    detector_items = serializers.IntegerField()
    cache_hits = serializers.IntegerField()
    calls = serializers.IntegerField(
        help_text="model calls it would make (cache hits excluded): the judge's, and the "
        "detector rules' that call a model (detector_calls)"
    )
    detector_calls = serializers.IntegerField(
        help_text="model calls of the detector rules that make them (the classifiers); an upper "
        "bound for the injection guard's second pass"
    )
    est_tokens_in = serializers.IntegerField()
    est_tokens_out = serializers.IntegerField()
    est_cost = serializers.DecimalField(max_digits=12, decimal_places=6, help_text="USD")
    cost_cap = serializers.DecimalField(max_digits=12, decimal_places=4, help_text="USD")
    needs_model = serializers.IntegerField(
        help_text="checks it would skip because they need a model nothing can answer"
    )
    needs_model_groups = serializers.ListField(
        child=serializers.DictField(),
        help_text="those checks by group, rule versions and reason: "
        "{group, phase, rules, reason, calls}",
    )


class VerdictCountsSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    flagged = serializers.IntegerField()
    errored = serializers.IntegerField()


class JudgeRunItemErrorSerializer(serializers.Serializer):
    item_id = serializers.IntegerField()
    transcript = serializers.CharField()
    group = serializers.CharField(help_text="rule group, or `detectors`")
    phase = serializers.CharField()
    rules = serializers.ListField(child=serializers.CharField())
    error = serializers.CharField()


class JudgeRunSerializer(serializers.Serializer):
    """A judge run's progress and figures (evals.judging.selectors.runs.judge_run_summary)."""

    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=JudgeRun.Status.choices)
    judge = serializers.CharField(allow_null=True)
    started_by = serializers.CharField()
    params = serializers.DictField(help_text="the filters the run was started with")
    tasks_total = serializers.IntegerField()
    tasks_done = serializers.IntegerField()
    progress = serializers.IntegerField(help_text="percent of tasks done")
    calls_made = serializers.IntegerField(
        help_text="model calls made: the judge's, and the detector rules' that call a model"
    )
    cache_hits = serializers.IntegerField()
    detector_checks = serializers.IntegerField(
        help_text="detector checks that ran (up to two a call: the free detector rules, and "
        "those that call a model)"
    )
    skipped = serializers.IntegerField(help_text="checks skipped at the cost cap")
    needs_model = serializers.IntegerField(
        help_text="checks skipped because they need a model nothing can answer (no verdict)"
    )
    tokens_in = serializers.IntegerField()
    tokens_out = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=12, decimal_places=6, help_text="USD spent")
    errors = serializers.IntegerField(help_text="checks that failed")
    replaced = serializers.IntegerField(
        help_text="checks cancelled because their call was replaced during the run (no verdict)"
    )
    recoveries = serializers.IntegerField(
        help_text="times in a row the sweep queued its checks again after a worker died"
    )
    stop_reason = serializers.CharField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    duration_s = serializers.FloatField(allow_null=True)
    verdicts = VerdictCountsSerializer()


class JudgeRunDetailSerializer(JudgeRunSerializer):
    errors_detail = JudgeRunItemErrorSerializer(
        many=True, help_text="the failed checks (up to 100), once the run has finished"
    )
    needs_model_detail = serializers.ListField(
        child=serializers.DictField(),
        help_text="the checks skipped because they need a model, by group, rule versions and "
        "reason: {group, phase, rules, reason, calls, transcripts}",
    )
    url = serializers.URLField(help_text="the run's page")


def _payload(run, request) -> dict:
    data = judge_run_summary(run)
    data["errors_detail"] = (
        [e.__dict__ for e in judge_run_errors(run, limit=100)] if run.finished_at else []
    )
    data["needs_model_detail"] = judge_run_needs_model(run)
    data["url"] = request.build_absolute_uri(reverse("judge-run-detail", args=[run.pk]))
    return data


@extend_schema_view(
    get=extend_schema(
        operation_id="judge_runs_list", responses={200: JudgeRunSerializer(many=True)}
    ),
    post=extend_schema(
        operation_id="judge_runs_create",
        request=JudgeRunRequest,
        responses={
            202: OpenApiResponse(JudgeRunDetailSerializer, description="Started; poll `poll`."),
            200: OpenApiResponse(JudgeRunPlanSerializer, description="the dry run's estimate"),
        },
    ),
)
class JudgeRunListCreate(RunListCreate):
    """GET: recent judge runs, newest first. POST: start a judge run (needs run_judge): 202 with
    the run, which GET /api/v1/judge-runs/{id}/ follows; with dry_run, 200 with the estimate."""

    serializer_class = JudgeRunSerializer
    request_serializer = JudgeRunRequest
    plan_type = JudgeRunPlan
    poll_name = "api-judge-run"

    def get_queryset(self):
        return judge_run_list()

    def summary(self, run) -> dict:
        return judge_run_summary(run)

    def detail(self, run, request) -> dict:
        return _payload(judge_run_get(run.pk), request)

    def start(self, d: dict, request):
        return judge_run_create(
            transcript_ids=d.get("transcripts") or None,
            rule_ids=d.get("rules") or None,
            agent_version=d.get("agent_version") or None,
            detectors_only=d["detectors_only"],
            dry_run=d["dry_run"],
            cost_cap=d.get("cost_cap"),
            started_by=request.user.get_username(),
            background=True,
        )


class JudgeRunDetail(APIView):
    """GET: one judge run's progress and figures; its errors once it has finished."""

    permission_classes = [api_permission("view_console")]

    @extend_schema(responses={200: JudgeRunDetailSerializer})
    def get(self, request, pk: int):
        run = judge_run_get(pk)
        if run is None:
            raise NotFound("No such judge run.")
        return Response(_payload(run, request))
