"""Judge runs over HTTP: start one (or estimate it) and follow it."""

from decimal import Decimal

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from console.permissions import api_permission
from evals.selectors.judging import (
    judge_run_errors,
    judge_run_get,
    judge_run_list,
    judge_run_summary,
)
from evals.services.judging import JudgeRunInvalid, JudgeRunPlan, judge_run_create


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


def _payload(run, request) -> dict:
    data = judge_run_summary(run)
    data["errors_detail"] = (
        [e.__dict__ for e in judge_run_errors(run, limit=100)] if run.finished_at else []
    )
    data["url"] = request.build_absolute_uri(reverse("judge-run-detail", args=[run.pk]))
    return data


class JudgeRunListCreate(APIView):
    """GET: recent judge runs. POST: start a judge run
    (needs run_judge); with dry_run, only the estimate."""

    def get_permissions(self):
        return [api_permission("run_judge" if self.request.method == "POST" else "view_console")()]

    @extend_schema(operation_id="judge_runs_list", responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        return Response([judge_run_summary(r) for r in judge_run_list()[:100]])

    @extend_schema(
        operation_id="judge_runs_create",
        request=JudgeRunRequest,
        responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
    )
    def post(self, request):
        body = JudgeRunRequest(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        try:
            result = judge_run_create(
                transcript_ids=d.get("transcripts") or None,
                rule_ids=d.get("rules") or None,
                agent_version=d.get("agent_version") or None,
                detectors_only=d["detectors_only"],
                dry_run=d["dry_run"],
                cost_cap=d.get("cost_cap"),
                started_by=request.user.get_username(),
                background=True,
            )
        except JudgeRunInvalid as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        if isinstance(result, JudgeRunPlan):
            return Response(result.as_dict(), status=status.HTTP_200_OK)
        run = judge_run_get(result.pk)
        return Response(_payload(run, request), status=status.HTTP_201_CREATED)


class JudgeRunDetail(APIView):
    """GET: one judge run's progress and figures; its errors once it has finished."""

    permission_classes = [api_permission("view_console")]

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT})
    def get(self, request, pk: int):
        run = judge_run_get(pk)
        if run is None:
            return Response({"detail": "No such judge run."}, status=status.HTTP_404_NOT_FOUND)
        return Response(_payload(run, request))
