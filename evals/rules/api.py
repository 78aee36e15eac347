"""Rules over HTTP: the import, with the same rules as `import_rules`."""

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema

from core.api import parsers
from core.api.importing import RESPONSES, SOURCE, ImportView, import_response
from core.api.parsers import body_bytes
from evals.rules.importing import rules_import


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
        return import_response(rules_import(text=text, source=SOURCE))
