"""Classifier thresholds over HTTP: the same figures as the classifier's page."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from core.permissions import api_permission
from labeling.selectors import classifier_thresholds as sel
from labeling.views.classifiers import figures_json, threshold_params


class ClassifierThresholds(APIView):
    """Per classifier rule: the confidence distribution of flagged and unflagged verdicts, the
    PR curve with Wilson intervals at every threshold, and the lowest threshold reaching the
    target precision (with its lower bound), for everything and split by tenant and agent."""

    permission_classes = [api_permission("view_calibration")]

    @extend_schema(
        parameters=[
            OpenApiParameter("judge", int, description="a judge id"),
            OpenApiParameter("tenant", str),
            OpenApiParameter("agent", str),
            OpenApiParameter("category", str),
            OpenApiParameter("target", float, description="target precision (default 0.9)"),
            OpenApiParameter("from", str, description="first day of calls (default: 90 days)"),
            OpenApiParameter("to", str, description="last day of calls (default: today)"),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, rule_id: str):
        if rule_id not in sel.CLASSIFIER_RULES:
            raise NotFound(f"No classifier rule {rule_id!r}.")
        try:
            params = threshold_params(request.query_params)
        except ValueError as exc:
            field, _, reason = str(exc).partition(": ")
            raise serializers.ValidationError({field: [reason]}) from None
        figures = sel.classifier_thresholds(rule_id=rule_id, **params)
        return Response(figures_json(rule_id, params, figures))
