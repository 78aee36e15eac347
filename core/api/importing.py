"""What every import over HTTP shares: the body read as it arrives, the result's shape and
status, the permission and the documented answers. Each app's import view calls its own importer,
the same one its import command calls."""

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import parsers
from core.api.parsers import body_lines
from core.api.schema import error_response
from core.permissions import api_permission

SOURCE = "body"
TRUE = {"1", "true", "yes", "on"}
# JSON Lines (one object a line) under either name, or one JSON array of the same objects.
LINES_REQUEST = {
    "application/x-ndjson": OpenApiTypes.STR,
    "application/jsonl": OpenApiTypes.STR,
    "application/json": {"type": "array", "items": {"type": "object"}},
}


class ImportResultSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=["rules", "transcripts", "verdicts", "decision kinds", "marks"]
    )
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    replaced = serializers.IntegerField()
    updated = serializers.IntegerField()
    new_versions = serializers.IntegerField()
    details = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="turns, deleted_verdicts, new_judges, new_reviewers...",
    )
    formats = serializers.DictField(
        child=serializers.DictField(),
        required=False,
        help_text="per input format: calls, the fields mapped and those kept in metadata",
    )
    summary = serializers.CharField()


def import_lines(request):
    """Return the body's lines as they arrive: at most DOCKET_IMPORT_MAX_BYTES (else 413)."""
    return body_lines(
        request, limit=settings.DOCKET_IMPORT_MAX_BYTES, setting="DOCKET_IMPORT_MAX_BYTES"
    )


def import_response(result) -> Response:
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
