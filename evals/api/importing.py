"""Imports over HTTP: the same services and rules as the import commands."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.views import APIView

from console.permissions import api_permission
from evals.services.importing import ImportFailed, rules_import, transcripts_import, verdicts_import

SOURCE = "body"
TRUE = {"1", "true", "yes", "on"}


class RawBodyParser(BaseParser):
    """Accept any body: the views read the request stream themselves, line by line."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream


class ImportResultSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["rules", "transcripts", "verdicts"])
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    replaced = serializers.IntegerField()
    updated = serializers.IntegerField()
    new_versions = serializers.IntegerField()
    details = serializers.DictField(
        child=serializers.IntegerField(), help_text="turns, deleted_verdicts, new_judges..."
    )
    summary = serializers.CharField()


class ImportErrorItemSerializer(serializers.Serializer):
    line = serializers.CharField(help_text="line number, or `item N` in a JSON array")
    field = serializers.CharField()
    reason = serializers.CharField()
    message = serializers.CharField()


class ImportErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="the first error: `body:<line>: <field>: <reason>`")
    errors = ImportErrorItemSerializer(many=True)


def _failed(exc: ImportFailed) -> Response:
    return Response(
        {
            "detail": exc.first,
            "errors": [
                {"line": e.where, "field": e.field, "reason": e.reason, "message": str(e)}
                for e in exc.errors
            ],
        },
        status=status.HTTP_400_BAD_REQUEST,
    )


def _lines(request):
    """Return the body's lines without loading a large body into memory at once."""
    stream = request.stream
    return iter(stream.readline, b"") if stream is not None else iter(())


def _done(result) -> Response:
    code = status.HTTP_201_CREATED if result.changed else status.HTTP_200_OK
    return Response(result.as_dict(), status=code)


RESPONSES = {
    200: OpenApiResponse(
        ImportResultSerializer, description="nothing new: everything was already there"
    ),
    201: OpenApiResponse(ImportResultSerializer, description="imported"),
    400: OpenApiResponse(ImportErrorSerializer, description="bad input: nothing was imported"),
}


class ImportView(APIView):
    permission_classes = [api_permission("import_data")]
    parser_classes = [RawBodyParser]


class RulesImport(ImportView):
    """Import rules (YAML or JSON, the format of `import_rules`): unchanged rules are a no-op,
    a changed text or detector becomes a new candidate version."""

    @extend_schema(
        operation_id="rules_import",
        request={"application/yaml": OpenApiTypes.STR, "application/json": OpenApiTypes.OBJECT},
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
        try:
            text = b"".join(_lines(request)).decode("utf-8")
        except UnicodeDecodeError:
            return Response(
                {"detail": f"{SOURCE}: not UTF-8", "errors": []}, status=status.HTTP_400_BAD_REQUEST
            )
        try:
            return _done(rules_import(text=text, source=SOURCE))
        except ImportFailed as exc:
            return _failed(exc)


class TranscriptsImport(ImportView):
    """Import transcripts: JSON Lines in the native, OpenAI chat or trajectory shape (or one JSON
    array). A known id with other turns is refused unless `replace=1`, which also deletes the old
    turns' verdicts."""

    @extend_schema(
        operation_id="transcripts_import",
        request={"application/x-ndjson": OpenApiTypes.STR},
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
        try:
            result = transcripts_import(
                lines=_lines(request),
                source=SOURCE,
                replace=params.get("replace", "").lower() in TRUE,
                agent=params.get("agent") or None,
                agent_version=params.get("agent_version") or None,
            )
        except ImportFailed as exc:
            return _failed(exc)
        return _done(result)


class VerdictsImport(ImportView):
    """Import verdicts (JSON Lines). A (transcript, rule
    version, judge) already stored stays as it is."""

    @extend_schema(
        operation_id="verdicts_import",
        request={"application/x-ndjson": OpenApiTypes.STR},
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
        try:
            result = verdicts_import(lines=_lines(request), source=SOURCE)
        except ImportFailed as exc:
            return _failed(exc)
        return _done(result)
