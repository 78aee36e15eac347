"""Datasets and eval runs over HTTP: import a dataset, start a run (or estimate it), follow it.

A run is queued (202) and runs in a worker; GET /eval-runs/{id}/ follows it until `finished_at`
is set, then says whether its pass rate regressed against the last green run.
"""

from decimal import Decimal

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import parsers
from core.api.importing import LINES_REQUEST
from core.api.parsers import body_lines
from core.api.runs import RunListCreate
from core.permissions import api_permission
from evals.catalog.selectors import agent_version_resolve
from evals.evalruns.models import Dataset, EvalRun
from evals.evalruns.selectors import (
    dataset_list,
    eval_run_get,
    eval_run_list,
    eval_run_payload,
    eval_run_summary,
)
from evals.evalruns.services import (
    RUBRIC_NAMES,
    EvalRunPlan,
    dataset_import,
    dataset_resolve,
    eval_run_create,
)


class DatasetSerializer(serializers.ModelSerializer):
    class Meta:
        model = Dataset
        fields = ["id", "name", "version", "checksum", "rows_count", "description", "created_at"]


class DatasetImportResult(DatasetSerializer):
    changed = serializers.BooleanField(help_text="false: the same rows as the latest version")

    class Meta(DatasetSerializer.Meta):
        fields = [*DatasetSerializer.Meta.fields, "changed"]


class DatasetImport(APIView):
    """Import a dataset (JSON Lines, one row a line: id, messages or input, tools, reference,
    metadata). The same rows as the latest version answer 200 and change nothing; other rows
    become a new version (201). 400 `import_failed` names each bad line and field."""

    permission_classes = [api_permission("import_data")]
    parser_classes = parsers.JSON_LINES

    @extend_schema(
        operation_id="datasets_import",
        request=LINES_REQUEST,
        parameters=[OpenApiParameter("name", str, required=True, description="dataset name")],
        responses={200: DatasetImportResult, 201: DatasetImportResult},
    )
    def post(self, request):
        lines = body_lines(
            request, limit=settings.DOCKET_IMPORT_MAX_BYTES, setting="DOCKET_IMPORT_MAX_BYTES"
        )
        dataset, result = dataset_import(
            lines=lines,
            name=request.query_params.get("name", ""),
            source="body",
            description=request.query_params.get("description", ""),
            by=request.user.get_username(),
        )
        data = {**DatasetSerializer(dataset).data, "changed": result.changed}
        code = status.HTTP_201_CREATED if result.changed else status.HTTP_200_OK
        return Response(data, status=code)


class DatasetList(generics.ListAPIView):
    """Every dataset version, by name, newest version first."""

    permission_classes = [api_permission("view_console")]
    serializer_class = DatasetSerializer

    def get_queryset(self):
        return dataset_list()


class EvalRunRequest(serializers.Serializer):
    dataset = serializers.CharField(max_length=120, help_text="NAME or NAME@VERSION")
    agent_version = serializers.CharField(max_length=200, help_text="VERSION or AGENT:VERSION")
    rubric = serializers.ChoiceField(choices=RUBRIC_NAMES)
    rubric_text = serializers.CharField(
        required=False, allow_blank=True, max_length=5000, help_text="the custom rubric's text"
    )
    threshold = serializers.IntegerField(required=False, default=70, min_value=0, max_value=100)
    concurrency = serializers.IntegerField(required=False, min_value=1, max_value=32)
    recorded = serializers.BooleanField(
        required=False,
        default=False,
        help_text="score the version's recorded transcripts (scenario = row id)",
    )
    cost_cap = serializers.DecimalField(
        required=False, max_digits=12, decimal_places=4, min_value=Decimal(0)
    )
    max_drop = serializers.FloatField(
        required=False, min_value=0, max_value=100, help_text="pass-rate points (EVAL_MAX_DROP)"
    )
    dry_run = serializers.BooleanField(required=False, default=False)


class EvalRunPlanSerializer(serializers.Serializer):
    dataset = serializers.CharField()
    agent_version = serializers.CharField()
    rubric = serializers.CharField()
    source = serializers.CharField()
    rows = serializers.IntegerField()
    agent_calls = serializers.IntegerField()
    judge_calls = serializers.IntegerField()
    missing_recorded = serializers.ListField(child=serializers.CharField())
    agent_model = serializers.CharField()
    judge_model = serializers.CharField()
    est_tokens_in = serializers.IntegerField()
    est_tokens_out = serializers.IntegerField()
    est_cost = serializers.DecimalField(max_digits=12, decimal_places=6)
    cost_cap = serializers.DecimalField(max_digits=12, decimal_places=6)


class BaselineSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    agent_version = serializers.CharField()
    dataset_version = serializers.IntegerField()
    pass_rate = serializers.FloatField(allow_null=True)


class EvalRunSerializer(serializers.Serializer):
    """An eval run's progress, figures and comparison with the last green run."""

    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=EvalRun.Status.choices)
    dataset = serializers.CharField()
    dataset_version = serializers.IntegerField()
    dataset_checksum = serializers.CharField()
    agent = serializers.CharField()
    agent_version = serializers.CharField()
    rubric = serializers.CharField()
    rubric_text = serializers.CharField()
    threshold = serializers.IntegerField()
    concurrency = serializers.IntegerField()
    source = serializers.ChoiceField(choices=EvalRun.Source.choices)
    judge_model = serializers.CharField()
    agent_model = serializers.CharField()
    rows_total = serializers.IntegerField()
    rows_done = serializers.IntegerField()
    progress = serializers.IntegerField(help_text="percent of rows done")
    rows_scored = serializers.IntegerField()
    rows_passed = serializers.IntegerField()
    rows_errored = serializers.IntegerField(help_text="left out of every average")
    rows_skipped = serializers.IntegerField(help_text="not started: cost cap or breaker")
    mean_score = serializers.FloatField(allow_null=True)
    pass_rate = serializers.FloatField(allow_null=True, help_text="percent of scored rows")
    tokens_in = serializers.IntegerField()
    tokens_out = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=12, decimal_places=6)
    cost_cap = serializers.DecimalField(max_digits=12, decimal_places=6)
    stop_reason = serializers.CharField()
    baseline = BaselineSerializer(allow_null=True, help_text="the last green run compared with")
    pass_rate_drop = serializers.FloatField(allow_null=True, help_text="points lost to baseline")
    max_drop = serializers.FloatField()
    regressed = serializers.BooleanField()
    green = serializers.BooleanField()
    started_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class EvalRunRowSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    row = serializers.CharField()
    outcome = serializers.CharField()
    score = serializers.IntegerField(allow_null=True)
    passed = serializers.BooleanField(allow_null=True)
    reason = serializers.CharField()
    error = serializers.CharField()
    output = serializers.CharField()
    tool_calls = serializers.ListField(child=serializers.CharField())
    transcript = serializers.CharField(allow_null=True)
    cached = serializers.BooleanField()


class EvalRunDetailSerializer(EvalRunSerializer):
    rows = EvalRunRowSerializer(many=True)
    url = serializers.URLField(help_text="the run's page")


def _detail(run: EvalRun, request) -> dict:
    data = eval_run_payload(run)
    data["url"] = request.build_absolute_uri(reverse("eval-run-detail", args=[run.pk]))
    return data


@extend_schema_view(
    get=extend_schema(operation_id="eval_runs_list", responses={200: EvalRunSerializer(many=True)}),
    post=extend_schema(
        operation_id="eval_runs_create",
        request=EvalRunRequest,
        responses={
            202: OpenApiResponse(EvalRunDetailSerializer, description="queued; poll `poll`"),
            200: OpenApiResponse(EvalRunPlanSerializer, description="the dry run's estimate"),
        },
    ),
)
class EvalRunListCreate(RunListCreate):
    """GET: recent eval runs, newest first. POST: queue an eval run (needs run_judge); it answers
    202 with the pending run, which GET /eval-runs/{id}/ follows. With dry_run: 200 and the
    estimate, spending nothing."""

    serializer_class = EvalRunSerializer
    request_serializer = EvalRunRequest
    plan_type = EvalRunPlan
    poll_name = "api-eval-run"

    def get_queryset(self):
        return eval_run_list()

    def summary(self, run) -> dict:
        return eval_run_summary(run)

    def detail(self, run, request) -> dict:
        return _detail(eval_run_get(run.pk), request)

    def start(self, d: dict, request):
        return eval_run_create(
            dataset=dataset_resolve(d["dataset"]),
            agent_version=agent_version_resolve(d["agent_version"], what="agent_version"),
            rubric=d["rubric"],
            rubric_text=d.get("rubric_text", ""),
            threshold=d["threshold"],
            concurrency=d.get("concurrency"),
            recorded=d["recorded"],
            cost_cap=d.get("cost_cap"),
            max_drop=d.get("max_drop"),
            dry_run=d["dry_run"],
            started_by=request.user.get_username(),
            background=True,
        )


class EvalRunDetail(APIView):
    """GET: one eval run with its rows (scores, reasons, errors) and its comparison."""

    permission_classes = [api_permission("view_console")]

    @extend_schema(operation_id="eval_runs_retrieve", responses={200: EvalRunDetailSerializer})
    def get(self, request, pk: int):
        run = eval_run_get(pk)
        if run is None:
            raise NotFound("No such eval run.")
        return Response(_detail(run, request))
