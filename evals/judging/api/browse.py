"""Reads over HTTP: transcripts with turns, rules with versions, verdicts with filters."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import ValidationError

from core.api.pagination import CursorPagination
from core.permissions import api_permission
from evals.catalog.models import Transcript, Turn
from evals.catalog.selectors import transcript_with_turns
from evals.judging.forms import CallFilterForm, VerdictFilterForm
from evals.judging.models import Verdict
from evals.judging.selectors.browse import transcript_filtered, verdict_filtered
from evals.rules.models import Rule, RuleVersion
from evals.rules.selectors import rules_with_versions

VIEW = [api_permission("view_console")]


class TurnSerializer(serializers.ModelSerializer):
    class Meta:
        model = Turn
        fields = list(Turn.FIELDS)


class TranscriptSerializer(serializers.ModelSerializer):
    id = serializers.CharField(
        source="external_id", help_text="the id the transcript was imported with"
    )
    agent = serializers.CharField(source="agent_version.agent.name")
    agent_version = serializers.CharField(source="agent_version.version")

    class Meta:
        model = Transcript
        fields = [
            "id",
            "agent",
            "agent_version",
            "started_at",
            "imported_at",
            "checksum",
            "audio_url",
            "language",
            "scenario",
        ]


class TranscriptDetailSerializer(TranscriptSerializer):
    turns = TurnSerializer(many=True, read_only=True)

    class Meta(TranscriptSerializer.Meta):
        fields = [*TranscriptSerializer.Meta.fields, "metadata", "turns"]


class RuleVersionSerializer(serializers.ModelSerializer):
    class Meta:
        model = RuleVersion
        fields = ["id", "number", "text", "detector", "status", "source", "created_at"]


class RuleSerializer(serializers.ModelSerializer):
    id = serializers.CharField(
        source="rule_id", help_text="the rule's stable id, e.g. opening.greet-by-name"
    )
    versions = RuleVersionSerializer(many=True, read_only=True)

    class Meta:
        model = Rule
        fields = ["id", "group", "phase", "severity", "safety", "detector", "status", "versions"]


class VerdictSerializer(serializers.ModelSerializer):
    transcript = serializers.CharField(source="transcript.external_id")
    rule = serializers.CharField(source="rule_version.rule.rule_id")
    rule_version = serializers.IntegerField(
        source="rule_version.number", help_text="the version number"
    )
    rule_version_id = serializers.IntegerField()
    judge = serializers.CharField(source="judge.name")

    class Meta:
        model = Verdict
        fields = [
            "id",
            "transcript",
            "rule",
            "rule_version",
            "rule_version_id",
            "judge",
            "flagged",
            "turn",
            "turns",
            "severity",
            "rationale",
            "confidence",
            "error",
            "created_at",
        ]


def _filters(form_class, params):
    """Parse query parameters with the page's own filter form; a bad value is a 400 naming it."""
    form = form_class(params)
    if not form.is_valid():
        raise ValidationError(form.errors)
    return form.filters()


TRI = "yes or no (also true/false, 1/0)"


@extend_schema(
    parameters=[
        OpenApiParameter("q", str, description="part of the call id"),
        OpenApiParameter("agent", str, description="agent name"),
        OpenApiParameter("agent_version", str, description="VERSION or AGENT:VERSION"),
        OpenApiParameter("scenario", str),
        OpenApiParameter("language", str),
        OpenApiParameter("has_audio", str, description=TRI),
        OpenApiParameter("started_from", OpenApiTypes.DATE, description="YYYY-MM-DD"),
        OpenApiParameter("started_to", OpenApiTypes.DATE, description="YYYY-MM-DD"),
        OpenApiParameter("flagged_rule", str, description="a rule id that flagged the call"),
    ],
)
class TranscriptList(generics.ListAPIView):
    """Transcripts, newest call first, filtered as on the calls page (turns are on each
    transcript's own endpoint)."""

    permission_classes = VIEW
    serializer_class = TranscriptSerializer

    def get_queryset(self):
        filters = _filters(CallFilterForm, self.request.query_params)
        return transcript_filtered(filters).select_related("agent_version__agent")


class TranscriptDetail(generics.RetrieveAPIView):
    """One transcript with its turns, by the id it was imported with."""

    permission_classes = VIEW
    serializer_class = TranscriptDetailSerializer
    lookup_field = "external_id"
    lookup_url_kwarg = "id"

    def get_queryset(self):
        return transcript_with_turns()


class RuleList(generics.ListAPIView):
    """Rules with every version, oldest first."""

    permission_classes = VIEW
    serializer_class = RuleSerializer

    def get_queryset(self):
        return rules_with_versions()


class RuleDetail(generics.RetrieveAPIView):
    """One rule with every version, by its stable id."""

    permission_classes = VIEW
    serializer_class = RuleSerializer
    lookup_field = "rule_id"
    lookup_url_kwarg = "id"

    def get_queryset(self):
        return rules_with_versions()


@extend_schema(
    parameters=[
        OpenApiParameter("rule", str, description="rule id, e.g. opening.greet-by-name"),
        OpenApiParameter("version", int, description="rule version number"),
        OpenApiParameter("judge", str, description="judge name"),
        OpenApiParameter("transcript", str, description="transcript id"),
        OpenApiParameter("flagged", str, description=TRI),
        OpenApiParameter("errored", str, description=TRI),
    ],
)
class VerdictList(generics.ListAPIView):
    """Verdicts, filtered by rule, version, judge, transcript, flagged and errored (as on the
    verdicts page)."""

    permission_classes = VIEW
    serializer_class = VerdictSerializer
    pagination_class = CursorPagination  # stable and fast however many million verdicts

    def get_queryset(self):
        filters = _filters(VerdictFilterForm, self.request.query_params)
        return verdict_filtered(filters).select_related("transcript", "rule_version__rule", "judge")
