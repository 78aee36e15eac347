"""Axes reports over HTTP: score an agent version's trajectories and read the reports."""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response

from core.errors import NotFound
from core.permissions import api_permission
from evals.trajectories.models import AxesReport
from evals.trajectories.services.reports import (
    axes_agent_version,
    axes_report_create,
    axes_report_payload,
)

RUN_GATE = [api_permission("run_gate")]


class AxesReportRequest(serializers.Serializer):
    agent = serializers.CharField(max_length=100)
    agent_version = serializers.CharField(max_length=100)
    max_drop = serializers.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        help_text="largest allowed drop of an axis's pass rate, absolute; default 0.05",
    )


class AxesReportResult(serializers.Serializer):
    """An axes report (evals.trajectories.services.reports.axes_report_payload)."""

    id = serializers.IntegerField()
    agent = serializers.CharField()
    agent_version = serializers.CharField()
    passed = serializers.BooleanField(
        help_text="green: no axis's pass rate dropped more than max_drop below the baseline"
    )
    max_drop = serializers.FloatField()
    baseline = serializers.DictField(allow_null=True, help_text="the last green report compared")
    trajectories = serializers.IntegerField()
    overall = serializers.DictField(
        help_text="per axis (task_success, tool_correctness, faithfulness): n, passed, pass_rate "
        "and its raw figures"
    )
    comparison = serializers.ListField(child=serializers.DictField())
    tasks = serializers.ListField(child=serializers.DictField(), help_text="the same per task")
    rows = serializers.ListField(
        child=serializers.DictField(), required=False, help_text="per trajectory, with ?rows=1"
    )
    created_at = serializers.DateTimeField(allow_null=True)
    created_by = serializers.CharField()
    url = serializers.CharField(help_text="the report's page")


def _reports():
    return AxesReport.objects.select_related(
        "agent_version__agent", "baseline__agent_version"
    ).order_by("-created_at", "-pk")


class AxesReportListCreate(generics.GenericAPIView):
    """GET: axes reports, newest first (?agent=&agent_version=). POST: score an agent version's
    trajectories on task success and tool correctness and store the report (201); its `passed`
    is false when an axis dropped more than max_drop below the agent's last green report.
    Faithfulness needs the judge once per trajectory: score it with the axes command."""

    permission_classes = RUN_GATE
    serializer_class = AxesReportResult

    def get_queryset(self):
        qs = _reports()
        params = self.request.query_params
        if params.get("agent"):
            qs = qs.filter(agent_version__agent__name=params["agent"])
        if params.get("agent_version"):
            qs = qs.filter(agent_version__version=params["agent_version"])
        return qs

    @extend_schema(
        parameters=[OpenApiParameter("agent", str), OpenApiParameter("agent_version", str)],
        responses={200: AxesReportResult(many=True)},
    )
    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response([axes_report_payload(r) for r in page])

    @extend_schema(
        request=AxesReportRequest,
        responses={201: OpenApiResponse(AxesReportResult, description="The stored report.")},
    )
    def post(self, request):
        body = AxesReportRequest(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        report = axes_report_create(
            agent_version=axes_agent_version(data["agent"], data["agent_version"]),
            max_drop=data.get("max_drop"),
            by=request.user.get_username(),
        )
        return Response(
            axes_report_payload(_reports().get(pk=report.pk)), status=status.HTTP_201_CREATED
        )


class AxesReportDetail(generics.GenericAPIView):
    permission_classes = RUN_GATE
    serializer_class = AxesReportResult

    @extend_schema(
        parameters=[OpenApiParameter("rows", bool, description="every trajectory's result")],
        responses={200: AxesReportResult},
    )
    def get(self, request, pk: int):
        report = _reports().filter(pk=pk).first()
        if report is None:
            raise NotFound(f"no axes report {pk}")
        rows = request.query_params.get("rows") in ("1", "true", "yes")
        return Response(axes_report_payload(report, rows=rows))
