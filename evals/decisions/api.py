"""Decision kinds over HTTP: import the YAML teams keep in git, list the kinds with versions."""

from django.conf import settings
from django.db.models import Prefetch
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import generics, serializers

from core.api import parsers
from core.api.importing import RESPONSES, SOURCE, ImportView, import_response
from core.api.parsers import body_bytes
from core.permissions import api_permission
from evals.decisions.models import DecisionKind, DecisionKindVersion
from evals.decisions.services.kinds import decision_kinds_import


class DecisionKindVersionSerializer(serializers.ModelSerializer):
    class Meta:
        model = DecisionKindVersion
        fields = ["number", "question", "answers", "created_at"]


class DecisionKindSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="kind_id", help_text="stable id, e.g. turn-taking")
    versions = DecisionKindVersionSerializer(many=True, read_only=True)

    class Meta:
        model = DecisionKind
        fields = ["id", "status", "derive", "versions"]


class DecisionKindList(generics.ListAPIView):
    """Decision kinds with every version, oldest first."""

    permission_classes = [api_permission("view_console")]
    serializer_class = DecisionKindSerializer

    def get_queryset(self):
        return DecisionKind.objects.order_by("kind_id").prefetch_related(
            Prefetch("versions", queryset=DecisionKindVersion.objects.order_by("number"))
        )


class DecisionKindsImport(ImportView):
    """Import decision kinds (YAML or JSON, the format of `import_decision_kinds`): a changed
    question or answer list becomes a new version, the rest is a no-op."""

    parser_classes = parsers.RULES

    @extend_schema(
        operation_id="decision_kinds_import",
        request={
            "application/yaml": OpenApiTypes.STR,
            "application/x-yaml": OpenApiTypes.STR,
            "application/json": OpenApiTypes.OBJECT,
        },
        responses=RESPONSES,
        examples=[
            OpenApiExample(
                "decision kinds",
                media_type="application/yaml",
                request_only=True,
                value="decision_kinds:\n  - id: turn-taking\n"
                "    question: Is the candidate done talking?\n"
                "    answers: [take the turn, wait]\n    derive: turn_gap\n",
            )
        ],
    )
    def post(self, request):
        text = body_bytes(
            request, limit=settings.DOCKET_CONFIG_MAX_BYTES, setting="DOCKET_CONFIG_MAX_BYTES"
        )
        return import_response(decision_kinds_import(text=text, source=SOURCE))
