"""/api/v1/calibration/ and /api/v1/rule-versions/{id}/promote/ and /demote/ (leads)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework import status as http
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.schema import error_response
from core.permissions import api_permission
from evals.judging.models import Judge
from evals.rules.models import RuleVersion
from labeling.selectors.calibration import calibration_data
from labeling.services.promotion import rule_version_demote, rule_version_promote

FILTERS = [
    OpenApiParameter("judge", str, description="Judge name, e.g. gpt-4o-mini/conduct-v3"),
    OpenApiParameter("group", str, description="Rule group, e.g. asking"),
    OpenApiParameter("status", str, enum=[s.value for s in RuleVersion.Status]),
    OpenApiParameter("rule", str, description="Rule id(s), comma-separated"),
]


def _interval():
    return serializers.ListField(
        child=serializers.FloatField(), min_length=2, max_length=2, allow_null=True
    )


class FiguresSerializer(serializers.Serializer):
    """Precision, recall, F1 and specificity, each with
    its 95% interval (plain and weighted alike)."""

    precision = serializers.FloatField(allow_null=True)
    precision_ci = _interval()
    recall = serializers.FloatField(allow_null=True)
    recall_ci = _interval()
    f1 = serializers.FloatField(allow_null=True)
    f1_ci = _interval()
    specificity = serializers.FloatField(allow_null=True)
    specificity_ci = _interval()


class WeightedSerializer(FiguresSerializer):
    """Figures weighted by 1 / inclusion probability; intervals on Kish's effective n."""

    effective_n = serializers.FloatField()
    tp = serializers.FloatField()
    fp = serializers.FloatField()
    fn = serializers.FloatField()
    tn = serializers.FloatField()


class _CalibrationHeadSerializer(serializers.Serializer):
    """The calibration object's fields before its figures
    (a base, so the schema keeps their order)."""

    rule = serializers.CharField()
    version = serializers.IntegerField()
    judge = serializers.CharField(
        allow_null=True, help_text="null: nobody has marked this version yet"
    )
    status = serializers.ChoiceField(choices=RuleVersion.Status.choices)
    rule_version_id = serializers.IntegerField()
    group = serializers.CharField()
    safety = serializers.BooleanField()
    marked = serializers.IntegerField(
        help_text="tp + fp + fn + tn: settled by majority or by a lead"
    )
    tp = serializers.IntegerField()
    fp = serializers.IntegerField()
    fn = serializers.IntegerField()
    tn = serializers.IntegerField()


class CalibrationSerializer(_CalibrationHeadSerializer, FiguresSerializer):
    """One (rule version, judge): docs/contract.md's calibration
    object, plus F1, specificity and counts."""

    weighted = WeightedSerializer()
    kappa = serializers.FloatField(allow_null=True)
    agreement = serializers.FloatField(allow_null=True)
    pairs = serializers.IntegerField(help_text="verdicts marked by two or more reviewers")
    waiting = serializers.IntegerField(help_text="tied verdicts waiting for a lead")
    errored = serializers.IntegerField(help_text="errored verdicts with marks, excluded")
    outside_sample = serializers.IntegerField(
        help_text="verdicts marked outside the daily sample (weight 1)"
    )
    eligible = serializers.BooleanField()
    why_not = serializers.ListField(child=serializers.CharField())


class CalibrationView(APIView):
    """One object per (rule version, judge): counts,
    precision and recall with 95% Wilson intervals."""

    permission_classes = [api_permission("view_calibration")]

    @extend_schema(parameters=FILTERS, responses={200: CalibrationSerializer(many=True)})
    def get(self, request):
        return Response(calibration_data(request.query_params))


class DecisionInput(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)
    judge = serializers.CharField(
        required=False, allow_blank=True, help_text="Judge name; default the most-marked"
    )


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
                raise ValidationError({"judge": f"no judge named {data.validated_data['judge']!r}"})
        decision = type(self).service(
            rule_version=rule_version,
            actor=request.user,
            reason=data.validated_data["reason"],
            judge=judge,
        )
        return Response(
            {
                "decision": decision.pk,
                "action": decision.action,
                "rule": rule_version.rule.rule_id,
                "version": rule_version.number,
                "status": decision.rule_version.status,
                "replaced": decision.replaced.number if decision.replaced else None,
                "actor": request.user.get_username(),
                "at": decision.at,
                "reason": decision.reason,
                "figures": decision.figures,
            },
            status=http.HTTP_200_OK,
        )


_DECISION_SCHEMA = {
    "request": DecisionInput,
    "responses": {
        200: inline_serializer(
            "Decision",
            {
                "decision": serializers.IntegerField(),
                "action": serializers.CharField(),
                "rule": serializers.CharField(),
                "version": serializers.IntegerField(),
                "status": serializers.CharField(),
                "replaced": serializers.IntegerField(allow_null=True),
                "actor": serializers.CharField(),
                "at": serializers.DateTimeField(),
                "reason": serializers.CharField(),
                "figures": serializers.DictField(),
            },
        ),
        409: error_response(
            "Refused by the version's state or figures (code promotion_refused): already gated, "
            "a draft, not eligible (`detail` gives the reasons), or not in the gate."
        ),
    },
}


class PromoteView(_DecisionView):
    """Promote an eligible rule version into the gate
    (leads); 409 with the reasons when not eligible."""

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
