"""Imports over HTTP: the same services and rules as the import commands."""

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import parsers
from core.api.parsers import body_bytes, body_lines
from core.api.schema import error_response
from core.permissions import api_permission
from evals.services.importing import rules_import, transcripts_import, verdicts_import

SOURCE = "body"
TRUE = {"1", "true", "yes", "on"}
# JSON Lines (one object a line) under either name, or one JSON array of the same objects.
LINES_REQUEST = {
    "application/x-ndjson": OpenApiTypes.STR,
    "application/jsonl": OpenApiTypes.STR,
    "application/json": {"type": "array", "items": {"type": "object"}},
}


class ImportResultSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["rules", "transcripts", "verdicts", "decision kinds"])
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    replaced = serializers.IntegerField()
    updated = serializers.IntegerField()
    new_versions = serializers.IntegerField()
    details = serializers.DictField(
        child=serializers.IntegerField(), help_text="turns, deleted_verdicts, new_judges..."
    )
    summary = serializers.CharField()


def _lines(request):
    """Return the body's lines as they arrive: at most DOCKET_IMPORT_MAX_BYTES (else 413)."""
    return body_lines(
        request, limit=settings.DOCKET_IMPORT_MAX_BYTES, setting="DOCKET_IMPORT_MAX_BYTES"
    )


def _done(result) -> Response:
    code = status.HTTP_201_CREATED if result.changed else status.HTTP_200_OK
    return Response(result.as_dict(), status=code)


RESPONSES = {
    200: OpenApiResponse(
        ImportResultSerializer, description="nothing new: everything was already there"
    ),
    201: OpenApiResponse(ImportResultSerializer, description="imported"),
    413: error_response("The body is larger than the limit the message names."),
}


class ImportView(APIView):
    """400 `import_failed` names each bad line (`errors[].line`, `field`, `reason`); nothing is
    written then."""

    permission_classes = [api_permission("import_data")]
    parser_classes = parsers.JSON_LINES


class RulesImport(ImportView):
    """Import rules (YAML or JSON, the format of `import_rules`): unchanged rules are a no-op,
    a changed text or detector becomes a new candidate version."""

    parser_classes = parsers.RULES

    @extend_schema(
        operation_id="rules_import",
        request={
            "application/yaml": OpenApiTypes.STR,
            "application/x-yaml": OpenApiTypes.STR,
            "application/json": OpenApiTypes.OBJECT,
        },
        responses=RESPONSES,
        examples=[
            OpenApiExample(
                "rules",
                media_type="application/yaml",
                request_only=True,
                value="rules:\n  - id: opening.greet-by-name\n    group: opening\n"
                "    text: Greet the candidate once, by name.\n    severity: minor\n",
            )
        ],
    )
    def post(self, request):
        text = body_bytes(
            request, limit=settings.DOCKET_CONFIG_MAX_BYTES, setting="DOCKET_CONFIG_MAX_BYTES"
        )
        return _done(rules_import(text=text, source=SOURCE))


class TranscriptsImport(ImportView):
    """Import transcripts: JSON Lines in the native, OpenAI chat or trajectory shape (or one JSON
    array). A known id with other turns is refused unless `replace=1`, which also deletes the old
    turns' verdicts."""

    @extend_schema(
        operation_id="transcripts_import",
        request=LINES_REQUEST,
        examples=[
            OpenApiExample(
                "one call",
                media_type="application/x-ndjson",
                request_only=True,
                value='{"id": "call-000123", "agent": "phone-screen", "agent_version": '
                '"2026-11-28.1", "audio_url": "https://rec.example.com/call-000123.ogg", '
                '"language": "en", "turns": [{"speaker": "agent", "text": "Hi Dana.", '
                '"start_ms": 0, "end_ms": 1200, "phase": "opening"}], "metadata": {}}',
            )
        ],
        parameters=[
            OpenApiParameter(
                "replace", bool, description="overwrite transcripts whose turns changed"
            ),
            OpenApiParameter("agent", str, description="agent for lines that name none"),
            OpenApiParameter(
                "agent_version", str, description="agent version for lines that name none"
            ),
        ],
        responses=RESPONSES,
    )
    def post(self, request):
        params = request.query_params
        result = transcripts_import(
            lines=_lines(request),
            source=SOURCE,
            replace=params.get("replace", "").lower() in TRUE,
            agent=params.get("agent") or None,
            agent_version=params.get("agent_version") or None,
        )
        return _done(result)


class VerdictsImport(ImportView):
    """Import verdicts (JSON Lines). A (transcript, rule
    version, judge) already stored stays as it is."""

    @extend_schema(
        operation_id="verdicts_import",
        request=LINES_REQUEST,
        examples=[
            OpenApiExample(
                "one verdict",
                media_type="application/x-ndjson",
                request_only=True,
                value='{"transcript": "call-000123", "rule": '
                '"opening.greet-by-name", "rule_version": 1, "flagged": true, '
                '"turn": 0, "severity": "minor", "rationale": "Greeted '
                'twice.", "confidence": 80, "judge": "gpt-4o-mini/conduct-v3"}',
            )
        ],
        responses=RESPONSES,
    )
    def post(self, request):
        return _done(verdicts_import(lines=_lines(request), source=SOURCE))
