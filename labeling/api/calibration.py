"""/api/v1/calibration/ and /api/v1/rule-versions/{id}/promote/ and /demote/ (leads)."""
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework import status as http
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from console.permissions import api_permission
from evals.models import Judge, RuleVersion
from labeling.selectors.calibration import calibration_rows
from labeling.services.promotion import rule_version_promote, rule_version_demote

FILTERS = [
    OpenApiParameter("judge", str, description="Judge name, e.g. gpt-4o-mini/conduct-v3"),
    OpenApiParameter("group", str, description="Rule group, e.g. asking"),
    OpenApiParameter("status", str, enum=[s.value for s in RuleVersion.Status]),
    OpenApiParameter("rule", str, description="Rule id(s), comma-separated"),
]


def calibration_filters(params) -> dict:
    """Return calibration_rows keyword arguments from query parameters (shared with the pages)."""
    status = (params.get("status") or "").strip()
    if status and status not in RuleVersion.Status.values:
        raise DjangoValidationError(f"status: expected one of {', '.join(RuleVersion.Status.values)}, got {status!r}.")
    rule_ids = [r.strip() for r in (params.get("rule") or "").split(",") if r.strip()]
    return {
        "judge": (params.get("judge") or "").strip() or None,
        "group": (params.get("group") or "").strip() or None,
        "status": status or None,
        "rule_version_ids": (
            list(RuleVersion.objects.filter(rule__rule_id__in=rule_ids).values_list("pk", flat=True))
            if rule_ids else None
        ),
    }


def calibration_data(params) -> list[dict]:
    """Return the calibration objects for these query parameters (the API's and the command's JSON)."""
    return [row.as_dict() for row in calibration_rows(**calibration_filters(params))]


class CalibrationView(APIView):
    """One object per (rule version, judge): counts, precision and recall with 95% Wilson intervals."""

    permission_classes = [api_permission("view_calibration")]

    @extend_schema(parameters=FILTERS, responses={200: inline_serializer("Calibration", {"rule": serializers.CharField()}, many=True)})
    def get(self, request):
        try:
            return Response(calibration_data(request.query_params))
        except DjangoValidationError as e:
            return Response({"detail": e.messages}, status=http.HTTP_400_BAD_REQUEST)


class DecisionInput(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)
    judge = serializers.CharField(required=False, allow_blank=True, help_text="Judge name; default the most-marked")


class _DecisionView(APIView):
    permission_classes = [api_permission("promote")]
    service = None

    def post(self, request, pk: int):
        rule_version = get_object_or_404(RuleVersion.objects.select_related("rule"), pk=pk)
        data = DecisionInput(data=request.data)
        data.is_valid(raise_exception=True)
        judge = None
        if data.validated_data.get("judge"):
            judge = Judge.objects.filter(name=data.validated_data["judge"]).first()
            if judge is None:
                return Response({"judge": [f"no judge named {data.validated_data['judge']!r}"]}, status=400)
        try:
            decision = type(self).service(
                rule_version=rule_version, actor=request.user, reason=data.validated_data["reason"], judge=judge
            )
        except DjangoPermissionDenied as e:
            raise PermissionDenied(str(e)) from None
        except DjangoValidationError as e:
            return Response({"detail": e.messages}, status=http.HTTP_409_CONFLICT)
        return Response(
            {
                "decision": decision.pk, "action": decision.action, "rule": rule_version.rule.rule_id,
                "version": rule_version.number, "status": decision.rule_version.status,
                "replaced": decision.replaced.number if decision.replaced else None,
                "actor": request.user.get_username(), "at": decision.at, "reason": decision.reason,
                "figures": decision.figures,
            },
            status=http.HTTP_200_OK,
        )


_DECISION_SCHEMA = dict(request=DecisionInput, responses={200: inline_serializer("Decision", {"decision": serializers.IntegerField()})})


class PromoteView(_DecisionView):
    """Promote an eligible rule version into the gate (leads); 409 with the reasons when not eligible."""

    service = staticmethod(rule_version_promote)

    @extend_schema(**_DECISION_SCHEMA)
    def post(self, request, pk: int):
        return super().post(request, pk)


class DemoteView(_DecisionView):
    """Take a gated rule version out of the gate (leads)."""

    service = staticmethod(rule_version_demote)

    @extend_schema(**_DECISION_SCHEMA)
    def post(self, request, pk: int):
        return super().post(request, pk)
