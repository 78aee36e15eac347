"""Decision points over HTTP: label a moment, queue hard moments, read the accuracy figures."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework import status as http
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from core.permissions import api_permission
from evals.decisions.models import Decision
from evals.decisions.selectors import decision_accuracy_table
from labeling.models import DecisionLabel
from labeling.services.decisions import (
    HARD_BOUNDARY_MS,
    HARD_LIMIT,
    HARD_MAX_CONFIDENCE,
    HARD_WITHIN_MS,
    decision_label_set,
    hard_moments_queue,
)


class DecisionLabelInSerializer(serializers.Serializer):
    decision = serializers.IntegerField(help_text="decision id")
    answer = serializers.CharField(max_length=100, help_text="one of the kind's answers")
    note = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class DecisionLabelSerializer(serializers.ModelSerializer):
    transcript = serializers.CharField(source="decision.transcript.external_id")
    kind = serializers.CharField(source="decision.kind.kind_id")
    choice = serializers.CharField(source="decision.choice", help_text="the agent's choice")
    truth = serializers.CharField(
        source="decision.truth", help_text="the reviewers' majority answer; empty when tied"
    )

    class Meta:
        model = DecisionLabel
        fields = ["id", "decision", "transcript", "kind", "choice", "answer", "note", "truth"]


class DecisionLabels(APIView):
    permission_classes = [api_permission("review")]

    @extend_schema(
        request=DecisionLabelInSerializer,
        responses={200: DecisionLabelSerializer, 201: DecisionLabelSerializer},
        summary="Label a decision point with the right answer (one label per reviewer)",
    )
    def post(self, request):
        data = DecisionLabelInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        decision = Decision.objects.filter(pk=data.validated_data["decision"]).first()
        if decision is None:
            raise ValidationError(
                {"decision": [f"No decision with id {data.validated_data['decision']}."]}
            )
        label, created = decision_label_set(
            reviewer=request.user,
            decision=decision,
            answer=data.validated_data["answer"],
            note=data.validated_data["note"],
        )
        label.decision.refresh_from_db(fields=["truth"])
        return Response(
            DecisionLabelSerializer(label).data,
            status=http.HTTP_201_CREATED if created else http.HTTP_200_OK,
        )


class HardMomentsInSerializer(serializers.Serializer):
    kind = serializers.CharField(required=False, allow_blank=True, default="")
    max_confidence = serializers.FloatField(
        required=False, default=HARD_MAX_CONFIDENCE, min_value=0, max_value=1
    )
    boundary_ms = serializers.IntegerField(required=False, default=HARD_BOUNDARY_MS)
    within_ms = serializers.IntegerField(required=False, default=HARD_WITHIN_MS, min_value=0)
    limit = serializers.IntegerField(
        required=False, default=HARD_LIMIT, min_value=1, max_value=1000
    )


class HardMomentsOutSerializer(serializers.Serializer):
    queued = serializers.IntegerField()
    calls = serializers.ListField(child=serializers.CharField())


class HardMoments(APIView):
    permission_classes = [api_permission("manage_sample")]

    @extend_schema(
        request=HardMomentsInSerializer,
        responses={201: HardMomentsOutSerializer},
        summary="Queue hard decision points (low agent confidence, gap near the boundary) and "
        "put their calls in today's review queue",
    )
    def post(self, request):
        data = HardMomentsInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        made = hard_moments_queue(by=request.user, **data.validated_data)
        calls = sorted({m.decision.transcript.external_id for m in made})
        return Response({"queued": len(made), "calls": calls}, status=http.HTTP_201_CREATED)


class AccuracySerializer(serializers.Serializer):
    kind = serializers.CharField()
    kind_version = serializers.IntegerField()
    question = serializers.CharField()
    answers = serializers.ListField(child=serializers.CharField())
    agent = serializers.CharField()
    agent_version = serializers.CharField()
    decisions = serializers.IntegerField()
    labeled = serializers.IntegerField()
    right = serializers.IntegerField()
    accuracy = serializers.FloatField(allow_null=True)
    accuracy_ci = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    confusion = serializers.ListField(
        child=serializers.DictField(), help_text="[{choice, answers: {answer: n}}]"
    )
    errors = serializers.ListField(child=serializers.DictField(), help_text="[{choice, answer, n}]")
    gaps = serializers.DictField(allow_null=True, help_text="{bins, by_answer: {answer: [n]}}")


class DecisionAccuracy(APIView):
    permission_classes = [api_permission("view_console")]

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", str, description="decision kind id, e.g. turn-taking"),
            OpenApiParameter("agent_version", str, description="agent version, e.g. 2026-11-28.1"),
        ],
        responses={200: AccuracySerializer(many=True)},
        summary="Decision accuracy per kind version and agent version, with Wilson intervals",
    )
    def get(self, request):
        rows = decision_accuracy_table(
            kind=request.query_params.get("kind", ""),
            agent_version=request.query_params.get("agent_version", ""),
        )
        return Response(rows)
