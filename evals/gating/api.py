"""Gate runs over HTTP, so CI systems can run a gate and read its result."""

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from core.api.runs import RunListCreate
from core.permissions import api_permission
from evals.catalog.selectors import agent_version_resolve
from evals.gating.models import GateRun
from evals.gating.selectors import gate_run_payload
from evals.gating.services import gate_resolve, gate_run_start

RUN_GATE = [api_permission("run_gate")]


class GateRunRequest(serializers.Serializer):
    gate = serializers.CharField(max_length=100)
    candidate = serializers.CharField(max_length=200, help_text="VERSION or AGENT:VERSION")
    baseline = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        allow_null=True,
        help_text="default: the last version whose run of this gate passed",
    )
    judge_missing = serializers.BooleanField(required=False, default=True)


class GoldenSetRefSerializer(serializers.Serializer):
    name = serializers.CharField()
    version = serializers.IntegerField()
    checksum = serializers.CharField(help_text="sha256 of the members")


class RuleVersionRefSerializer(serializers.Serializer):
    rule = serializers.CharField()
    version = serializers.IntegerField()
    id = serializers.IntegerField(help_text="the rule version's id")


class EvidenceSerializer(serializers.Serializer):
    call = serializers.CharField()
    turn = serializers.IntegerField(allow_null=True)
    rule = serializers.CharField()
    verdict = serializers.IntegerField(allow_null=True)
    note = serializers.CharField()


def _interval():
    return serializers.ListField(
        child=serializers.FloatField(), min_length=2, max_length=2, allow_null=True
    )


class MetricResultSerializer(serializers.Serializer):
    """One metric of a gate run: its value against the threshold, and the calls behind it."""

    label = serializers.CharField()
    kind = serializers.CharField(help_text="safety_ceiling, violation_rate, detector_metric, ...")
    passed = serializers.BooleanField()
    value = serializers.FloatField(allow_null=True)
    threshold = serializers.FloatField(allow_null=True)
    tolerance = serializers.FloatField(allow_null=True)
    baseline = serializers.FloatField(allow_null=True)
    n = serializers.IntegerField(help_text="checks (or calls) counted")
    interval = _interval()
    baseline_interval = _interval()
    rules = serializers.ListField(child=serializers.CharField())
    problems = serializers.ListField(child=serializers.CharField())
    evidence = EvidenceSerializer(many=True)
    note = serializers.CharField()
    spec = serializers.DictField(help_text="the metric as configured in the gate")
    noise = serializers.DictField(
        required=False,
        help_text="conversation_score: the per-call differences against the baseline (pairs, "
        "mean_diff, sd, interval, min, max)",
    )


class GateRunResult(serializers.Serializer):
    """A gate run (evals.gating.selectors.gate_run_payload)."""

    id = serializers.IntegerField()
    gate = serializers.CharField()
    status = serializers.ChoiceField(
        choices=GateRun.Status.choices,
        help_text="pending or running until decided; then pass, fail or error",
    )
    passed = serializers.BooleanField()
    agent = serializers.CharField()
    candidate = serializers.CharField()
    baseline = serializers.CharField(allow_null=True)
    baseline_run = serializers.IntegerField(allow_null=True)
    golden_set = GoldenSetRefSerializer(allow_null=True)
    judge = serializers.CharField(allow_null=True)
    rule_versions = RuleVersionRefSerializer(many=True)
    judged = serializers.IntegerField(help_text="verdicts the judge added for this run")
    problems = serializers.ListField(child=serializers.CharField())
    notes = serializers.ListField(child=serializers.CharField())
    metrics = MetricResultSerializer(many=True)
    calls = serializers.DictField(
        child=serializers.CharField(), help_text="scenario -> the candidate's call id"
    )
    error = serializers.CharField(help_text="why the run could not finish (status error)")
    created_at = serializers.DateTimeField(allow_null=True)
    url = serializers.CharField(help_text="the run's page")


@extend_schema_view(
    get=extend_schema(
        parameters=[
            OpenApiParameter("gate", str),
            OpenApiParameter("candidate", str),
            OpenApiParameter("status", str, enum=GateRun.Status.values),
        ],
        responses={200: GateRunResult(many=True)},
    ),
    post=extend_schema(
        request=GateRunRequest,
        responses={
            202: OpenApiResponse(
                GateRunResult,
                description="Queued: the run, pending (or already decided without a broker).",
            )
        },
    ),
)
class GateRunListCreate(RunListCreate):
    """GET: recent gate runs, newest first (?gate=&candidate=&status=). POST: queue a gate run;
    it answers 202 at once with the run (pending), which GET /gate-runs/{id}/ follows until its
    status is pass, fail or error. Both need run_gate, as the gate pages do."""

    list_permission = start_permission = "run_gate"
    serializer_class = GateRunResult
    request_serializer = GateRunRequest
    poll_name = "api-gate-run"

    def get_queryset(self):
        qs = GateRun.objects.select_related(
            "gate", "candidate__agent", "baseline", "golden_set"
        ).order_by("-created_at", "-pk")
        params = self.request.query_params
        if params.get("status") and params["status"] not in GateRun.Status.values:
            raise ValidationError({"status": f"must be one of {', '.join(GateRun.Status.values)}"})
        for param, field in (
            ("gate", "gate__name"),
            ("candidate", "candidate__version"),
            ("status", "status"),
        ):
            if params.get(param):
                qs = qs.filter(**{field: params[param]})
        return qs

    def summary(self, run) -> dict:
        return gate_run_payload(run)

    def detail(self, run, request) -> dict:
        run = GateRun.objects.select_related("gate", "candidate__agent", "baseline").get(pk=run.pk)
        return gate_run_payload(run)

    def start(self, data: dict, request):
        gate = gate_resolve(data["gate"])
        candidate = agent_version_resolve(data["candidate"], what="candidate")
        baseline = data.get("baseline")
        return gate_run_start(
            gate=gate,
            candidate=candidate,
            baseline=agent_version_resolve(baseline, what="baseline") if baseline else None,
            by=request.user.get_username(),
            judge_missing_verdicts=data["judge_missing"],
        )


class GateRunDetail(generics.GenericAPIView):
    permission_classes = RUN_GATE
    serializer_class = GateRunResult
    queryset = GateRun.objects.select_related("gate", "candidate__agent", "baseline")

    @extend_schema(responses={200: GateRunResult})
    def get(self, request, pk: int):
        return Response(gate_run_payload(self.get_object()))
