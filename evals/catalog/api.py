"""Agents and their versions over HTTP: list them, read a version's scope (instructions and
tools), and set it."""

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from core.api.importing import (
    LINES_REQUEST,
    RESPONSES,
    SOURCE,
    TRUE,
    ImportView,
    import_lines,
    import_response,
)
from core.api.schema import error_response
from core.importing import API
from core.permissions import api_permission, user_can
from evals.catalog.selectors import agent_version_found, agent_versions_listed
from evals.catalog.services.agents import agent_scope_clean, agent_version_scope_set
from evals.catalog.services.importing import transcripts_import

VIEW = [api_permission("view_console")]


class ToolSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    parameters = serializers.DictField(help_text="JSON schema of the tool's arguments")


class AgentVersionSerializer(serializers.Serializer):
    agent = serializers.CharField(source="agent.name")
    version = serializers.CharField()
    calls = serializers.IntegerField(help_text="transcripts imported for this version")
    created_at = serializers.DateTimeField()


class AgentVersionDetailSerializer(AgentVersionSerializer):
    notes = serializers.CharField()
    instructions = serializers.CharField(help_text="the system prompt: the agent's scope")
    tools = ToolSerializer(many=True, help_text="the tools it may call")


class AgentScopeSerializer(serializers.Serializer):
    """A version's scope, as set by PUT (also accepted: OpenAI's `{"type": "function", ...}`)."""

    instructions = serializers.CharField(allow_blank=True, required=False)
    tools = ToolSerializer(many=True, required=False)
    replace = serializers.BooleanField(
        required=False, help_text="overwrite a scope the version already has (default false)"
    )


class AgentVersionList(generics.ListAPIView):
    """Every agent version, with how many calls it has."""

    permission_classes = VIEW
    serializer_class = AgentVersionSerializer

    def get_queryset(self):
        return agent_versions_listed()


class AgentVersionDetail(generics.GenericAPIView):
    """One agent version with its scope. PUT sets the scope (needs import_data); a version that
    already has another scope is refused with 409 unless `replace` is true."""

    permission_classes = VIEW
    serializer_class = AgentVersionDetailSerializer

    def _found(self, agent: str, version: str):
        av = agent_version_found(agent, version)
        if av is None:
            raise NotFound(f"No version {version!r} of agent {agent!r}.")
        return av

    def get_object(self):
        # OPTIONS describes the PUT on the version itself (DRF's metadata asks for the object).
        return self._found(self.kwargs["agent"], self.kwargs["version"])

    def get(self, request, agent: str, version: str):
        return Response(self.get_serializer(self._found(agent, version)).data)

    @extend_schema(
        request=AgentScopeSerializer,
        responses={200: AgentVersionDetailSerializer, 409: error_response("Another scope is set.")},
    )
    def put(self, request, agent: str, version: str):
        if not user_can(request.user, "import_data"):
            self.permission_denied(request, message="Needs permission: import_data.")
        self._found(agent, version)
        body = request.data
        if not isinstance(body, dict):
            raise serializers.ValidationError({"body": ["must be a JSON object"]})
        scope = agent_scope_clean(
            instructions=body.get("instructions"), tools=body.get("tools"), prefix=""
        )
        replace = body.get("replace", False)
        if not isinstance(replace, bool):
            raise serializers.ValidationError({"replace": ["must be true or false"]})
        agent_version_scope_set(
            agent=agent, version=version, scope=scope, replace=replace, create=False
        )
        return Response(self.get_serializer(self._found(agent, version)).data)


class TranscriptsImport(ImportView):
    """Import transcripts: JSON Lines (`application/x-ndjson`) or one JSON document
    (`application/json`: one call, an array of calls, or a results document), in the native,
    OpenAI chat or trajectory shape or a trace format (tau-bench, tau2-bench, Vapi, Retell,
    ElevenLabs, OTLP/JSON); `formats` in the answer says what each format's fields became. A
    known id with other turns is refused unless `replace=1`, which also deletes the old turns'
    verdicts."""

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
            lines=import_lines(request),
            document=request.content_type.split(";")[0].strip() == "application/json",
            source=SOURCE,
            replace=params.get("replace", "").lower() in TRUE,
            agent=params.get("agent") or None,
            agent_version=params.get("agent_version") or None,
            spelling=API,
        )
        return import_response(result)
