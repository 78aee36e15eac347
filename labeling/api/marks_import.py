"""POST /api/v1/marks/import/ (leads): marks made elsewhere, with the rules of `import_marks`."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema

from core.api import parsers
from core.api.importing import (
    LINES_REQUEST,
    RESPONSES,
    SOURCE,
    TRUE,
    ImportView,
    import_lines,
    import_response,
)
from core.permissions import api_permission
from labeling.services.marks_import import marks_import


class MarksImport(ImportView):
    """Import marks made elsewhere: JSON Lines, a JSON array of marks or Label Studio's JSON
    export (its tasks' `data` holding the verdict's key), or CSV (`text/csv`, a header row naming
    the columns). All or nothing; the same body again changes nothing."""

    permission_classes = [api_permission("import_marks")]
    parser_classes = parsers.MARKS

    @extend_schema(
        operation_id="marks_import",
        parameters=[
            OpenApiParameter(
                "create_reviewers",
                OpenApiTypes.BOOL,
                description="make reviewers named in the body that are not Docket users yet",
            )
        ],
        request={**LINES_REQUEST, "text/csv": OpenApiTypes.STR},
        examples=[
            OpenApiExample(
                "one mark",
                media_type="application/x-ndjson",
                request_only=True,
                value='{"transcript": "call-000123", "rule": "opening.greet-by-name", '
                '"rule_version": 2, "judge": "gpt-4o-mini/conduct-v3", "reviewer": "priya", '
                '"correct": false, "note": "greeted once"}',
            )
        ],
        responses=RESPONSES,
    )
    def post(self, request):
        csv = (request.content_type or "").split(";")[0].strip() == "text/csv"
        return import_response(
            marks_import(
                lines=import_lines(request),
                source=SOURCE,
                fmt="csv" if csv else "jsonl",
                create_reviewers=(request.query_params.get("create_reviewers") or "").lower()
                in TRUE,
                origin=f"{SOURCE} from {request.user.get_username()}",
            )
        )
