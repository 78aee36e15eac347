"""Gate runs over HTTP, so CI systems can run a gate and read its result."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import get_object_or_404
from rest_framework.response import Response
from rest_framework.views import APIView

from console.permissions import api_permission
from evals.models import GateRun
from evals.selectors.gating import gate_run_payload
from evals.services.gating import (
    GateCannotRun,
    agent_version_resolve,
    gate_resolve,
    gate_run_evaluate,
    gate_run_record_error,
)


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


class GateRunResult(serializers.Serializer):
    """The shape of a gate run (documentation only; see evals.selectors.gating.gate_run_payload)."""

    id = serializers.IntegerField()
    gate = serializers.CharField()
    status = serializers.CharField(help_text="pass, fail or error")
    passed = serializers.BooleanField()
    agent = serializers.CharField()
    candidate = serializers.CharField()
    baseline = serializers.CharField(allow_null=True)
    golden_set = serializers.DictField()
    judge = serializers.CharField(allow_null=True)
    rule_versions = serializers.ListField(child=serializers.DictField())
    metrics = serializers.ListField(child=serializers.DictField())
    problems = serializers.ListField(child=serializers.CharField())
    notes = serializers.ListField(child=serializers.CharField())
    url = serializers.CharField()


class GateRunListCreate(APIView):
    """GET: recent gate runs (?gate=&candidate=&status=). POST: run a gate now (needs run_gate)."""

    def get_permissions(self):
        codename = "run_gate" if self.request.method == "POST" else "view_console"
        return [api_permission(codename)()]

    @extend_schema(
        parameters=[
            OpenApiParameter("gate", str),
            OpenApiParameter("candidate", str),
            OpenApiParameter("status", str, enum=["pass", "fail", "error"]),
        ],
        responses={200: GateRunResult(many=True)},
    )
    def get(self, request):
        qs = GateRun.objects.select_related("gate", "candidate__agent", "baseline", "golden_set")
        for param, field in (
            ("gate", "gate__name"),
            ("candidate", "candidate__version"),
            ("status", "status"),
        ):
            if request.query_params.get(param):
                qs = qs.filter(**{field: request.query_params[param]})
        return Response([gate_run_payload(r) for r in qs[:100]])

    @extend_schema(request=GateRunRequest, responses={201: GateRunResult, 400: None})
    def post(self, request):
        body = GateRunRequest(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            gate = gate_resolve(data["gate"])
            candidate = agent_version_resolve(data["candidate"])
            baseline = (
                agent_version_resolve(data["baseline"], what="baseline")
                if data.get("baseline")
                else None
            )
            by = request.user.get_username()
            try:
                run = gate_run_evaluate(
                    gate=gate,
                    candidate=candidate,
                    baseline=baseline,
                    by=by,
                    judge_missing_verdicts=data["judge_missing"],
                )
            except GateCannotRun:
                raise
            # Any failure is recorded so the history shows it; CI reads status "error".
            except Exception as e:  # noqa: BLE001
                run = gate_run_record_error(
                    gate=gate, candidate=candidate, error=f"{type(e).__name__}: {e}", by=by
                )
        except GateCannotRun as e:
            return Response({"detail": str(e)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(gate_run_payload(run), status=status.HTTP_201_CREATED)


class GateRunDetail(APIView):
    permission_classes = [api_permission("view_console")]

    @extend_schema(responses={200: GateRunResult})
    def get(self, request, pk: int):
        run = get_object_or_404(
            GateRun.objects.select_related("gate", "candidate__agent", "baseline"), pk=pk
        )
        return Response(gate_run_payload(run))
