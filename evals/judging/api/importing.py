"""Verdicts over HTTP: the import, with the same rules as `import_verdicts`."""

from drf_spectacular.utils import OpenApiExample, extend_schema

from core.api.importing import (
    LINES_REQUEST,
    RESPONSES,
    SOURCE,
    ImportView,
    import_lines,
    import_response,
)
from evals.judging.services.importing import verdicts_import


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
        return import_response(verdicts_import(lines=import_lines(request), source=SOURCE))
