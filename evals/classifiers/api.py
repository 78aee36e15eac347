"""The runtime classifiers over HTTP: POST /api/v1/classify/{injection|scope-drift|frustration}/.

An agent runtime sends one turn and gets the verdict within the classifier's budget. A classifier
error never shows as an HTTP error: the answer is the fail-open verdict with `degraded: true`.
Only a malformed request is refused (400). Who may call it: `import_data` (engineers, leads, and
the agent platform's service account, which pushes calls in with the same role).
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.importing import LINES_REQUEST, RESPONSES, ImportView, import_lines, import_response
from core.permissions import api_permission
from evals.classifiers.runtime import NAMES, SCOPE_DRIFT, classify
from evals.classifiers.selectors import agent_scope
from evals.classifiers.services import classifier_logs_import

TEXT_MAX = 100_000
INPUT_SOURCES = ("user", "tool", "document")


JUDGE_NAME_MAX = 200


class TextField(serializers.CharField):
    """Text that must come as a JSON string: 5 or true is refused, not turned into "5"."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class ClassifyTurnSerializer(serializers.Serializer):
    speaker = serializers.ChoiceField(["agent", "user", "tool", "system"])
    text = TextField(allow_blank=True, max_length=TEXT_MAX, trim_whitespace=False)


class ClassifyRequest(serializers.Serializer):
    text = TextField(
        allow_blank=True,
        max_length=TEXT_MAX,
        trim_whitespace=False,
        help_text="the turn to classify: the user's input, or the agent's reply (scope-drift)",
    )
    agent = serializers.CharField(required=False, allow_blank=True, max_length=100)
    agent_version = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100,
        help_text="scope-drift reads this version's instructions and tools",
    )
    turns = ClassifyTurnSerializer(
        many=True, required=False, help_text="the recent turns, oldest first"
    )
    # A plain string checked below, not a choice field: an enum named "source" would collide in
    # the schema with the verdict's own `source` (patterns, llm, ...).
    source = serializers.CharField(
        required=False,
        default="user",
        max_length=20,
        help_text="injection: where the text came from: user (a user turn), tool (a tool result) "
        "or document (retrieved content); tool results and documents are also checked for "
        "instructions aimed at the agent",
    )
    tenant = serializers.CharField(required=False, allow_blank=True, max_length=200)
    call = serializers.CharField(
        required=False, allow_blank=True, max_length=200, help_text="the call's id, for the log"
    )
    turn = serializers.IntegerField(required=False, min_value=0, help_text="the turn's index")

    def validate_source(self, value: str) -> str:
        if value not in INPUT_SOURCES:
            raise serializers.ValidationError(f"must be one of {', '.join(INPUT_SOURCES)}")
        return value


class ClassifyVerdictSerializer(serializers.Serializer):
    classifier = serializers.CharField()
    flagged = serializers.BooleanField(
        help_text="injection found, drift found, or frustration aimed at the AI"
    )
    confidence = serializers.IntegerField(allow_null=True, help_text="0-100, of the verdict")
    category = serializers.CharField(help_text="injection or drift category; frustration: target")
    rationale = serializers.CharField()
    source = serializers.CharField(help_text="patterns, llm, patterns+llm or skipped")
    skipped = serializers.CharField(help_text="why no model was asked, when none was")
    error = serializers.CharField(help_text="what failed (the verdict is then the fail-open one)")
    degraded = serializers.BooleanField()
    latency_ms = serializers.FloatField()
    signals = serializers.DictField(help_text="frustration: sentiment and loop signals")
    model = serializers.CharField()
    drift = serializers.BooleanField(required=False, help_text="scope-drift only")
    target = serializers.CharField(
        required=False, help_text="frustration only: ai, situation, none"
    )


class Classify(APIView):
    """Classify one turn. Scope drift measures the reply against the named agent version's
    instructions; a version without instructions (or unknown) is skipped as no finding."""

    permission_classes = [api_permission("import_data")]

    @extend_schema(
        request=ClassifyRequest,
        responses={200: ClassifyVerdictSerializer},
        parameters=[OpenApiParameter("name", str, "path", enum=list(NAMES))],
    )
    def post(self, request, name: str):
        if name not in NAMES:
            raise NotFound(f"No classifier {name!r} (known: {', '.join(NAMES)}).")
        form = ClassifyRequest(data=request.data)
        form.is_valid(raise_exception=True)
        payload = form.validated_data
        instructions, tools = "", []
        if name == SCOPE_DRIFT:
            instructions, tools = agent_scope(
                payload.get("agent", ""), payload.get("agent_version", "")
            )
        verdict = classify(name, payload, instructions=instructions, tools=tools)
        return Response(verdict.as_dict())


class ClassifierLogsImport(ImportView):
    """Import a platform's classifier log lines (the metric lines of the three classifiers, as
    JSON Lines) as verdicts, one per call and classifier; other lines are left alone. `judge`
    names the judge (default platform/<classifier>)."""

    @extend_schema(
        operation_id="classifier_logs_import",
        request=LINES_REQUEST,
        parameters=[OpenApiParameter("judge", str, description="default platform/<classifier>")],
        responses=RESPONSES,
    )
    def post(self, request):
        judge = request.query_params.get("judge", "")
        if len(judge) > JUDGE_NAME_MAX:
            raise serializers.ValidationError(
                {"judge": [f"at most {JUDGE_NAME_MAX} characters, got {len(judge)}"]}
            )
        return import_response(
            classifier_logs_import(lines=import_lines(request), source="body", judge=judge)
        )
