"""Traces pushed in over HTTP: voice platforms' webhooks (signed with each platform's own
scheme, no login), OTLP/HTTP traces (token auth, import_data), and the hooks leads configure."""

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import parsers
from core.api.importing import RESPONSES, ImportResultSerializer, import_response
from core.api.parsers import BodyTooLarge, body_bytes
from core.api.schema import error_response
from core.permissions import api_permission
from evals.ingest import otlp
from evals.ingest.models import VoiceHook
from evals.ingest.services import (
    hook_receive,
    otlp_receive,
    voice_hook_endpoint,
    voice_hook_get,
    voice_hook_save,
)

MANAGE = [api_permission("manage_webhooks")]
PLATFORM_HEADERS = {
    "vapi": "X-Vapi-Secret or X-Vapi-Signature",
    "retell": "X-Retell-Signature",
    "elevenlabs": "ElevenLabs-Signature",
}


class ProtobufParser(parsers.StreamParser):
    media_type = otlp.PROTOBUF


def _body(request, setting: str) -> bytes:
    limit = getattr(settings, setting)
    data = body_bytes(request, limit=limit, setting=setting)
    if request.headers.get("Content-Encoding", "").lower() == "gzip":
        data = otlp.gunzip(data, limit=limit, setting=setting)
    return data


class HookReceive(APIView):
    """A voice platform's end-of-call webhook (Vapi `end-of-call-report`, Retell `call_ended` /
    `call_analyzed`, ElevenLabs `post_call_transcription`), verified with the platform's own
    signature against the secrets of its hooks: 401 with nothing stored when none verifies.
    The call is imported for the agent version its hook maps the platform's agent to; the same
    call delivered again is a no-op (a later event about it adds to its metadata). Other events
    answer 200 and store nothing."""

    platform = ""
    authentication_classes: list = []  # the platform's signature is the authentication
    permission_classes = [AllowAny]
    # A platform posts every call from a few addresses: a per-address cap would refuse a busy
    # team's calls. A bad signature costs one HMAC per hook and stores nothing.
    throttle_classes: list = []
    parser_classes = [parsers.JSONStreamParser]

    def post(self, request):
        # One call, read before anyone is known: bounded like one record of an import.
        body = _body(request, "DOCKET_IMPORT_MAX_LINE_BYTES")
        result = hook_receive(platform=self.platform, body=body, headers=request.headers)
        if isinstance(result, str):
            return Response({"ignored": result}, status=status.HTTP_200_OK)
        return import_response(result)


def hook_view(platform: str):
    label = VoiceHook.Platform(platform).label

    @extend_schema(
        operation_id=f"hooks_{platform}",
        request={"application/json": OpenApiTypes.OBJECT},
        responses={
            **RESPONSES,
            401: error_response("No hook's secret verifies the signature; nothing stored."),
            422: error_response("No hook maps the platform's agent."),
        },
    )
    def post(self, request):
        return HookReceive.post(self, request)

    doc = f"{HookReceive.__doc__}\n\n{label} signs with {PLATFORM_HEADERS[platform]}."
    view = type(
        f"{platform.title()}Hook",
        (HookReceive,),
        {"platform": platform, "__doc__": doc, "post": post},
    )
    return view.as_view()


class OtlpTraces(APIView):
    """OpenTelemetry traces over OTLP/HTTP (`application/x-protobuf` or `application/json`,
    gzip or not): spans following the GenAI semantic conventions or OpenInference become calls,
    one per trace or per session id. The agent and version come from the resource's
    `service.name` and `service.version`, or `?agent=&agent_version=`. Answers an
    ExportTraceServiceResponse in the request's encoding; `Docket-Import` says what was done."""

    permission_classes = [api_permission("import_data")]
    parser_classes = [ProtobufParser, parsers.JSONStreamParser]

    @extend_schema(
        operation_id="otlp_traces",
        request={otlp.PROTOBUF: OpenApiTypes.BINARY, otlp.JSON: OpenApiTypes.OBJECT},
        responses={
            200: OpenApiResponse(description="ExportTraceServiceResponse"),
            413: error_response("The body is larger than DOCKET_IMPORT_MAX_BYTES."),
            415: error_response("Neither application/x-protobuf nor application/json."),
        },
    )
    def post(self, request):
        content_type = request.content_type.split(";")[0].strip().lower()
        export = otlp.export_request(_body(request, "DOCKET_IMPORT_MAX_BYTES"), content_type)
        params = request.query_params
        result = otlp_receive(
            export=export,
            agent=params.get("agent") or None,
            agent_version=params.get("agent_version") or None,
        )
        response = HttpResponse(otlp.export_response(content_type), content_type=content_type)
        response["Docket-Import"] = result.summary.split("\n", 1)[0]
        return response


class VoiceHookSerializer(serializers.ModelSerializer):
    agent = serializers.CharField(source="agent.name")
    secret_set = serializers.SerializerMethodField()
    endpoint = serializers.SerializerMethodField(help_text="the URL to give the platform")

    class Meta:
        model = VoiceHook
        fields = [
            "id",
            "platform",
            "platform_agent_id",
            "agent",
            "agent_version",
            "active",
            "secret_set",
            "endpoint",
            "created_by",
            "created_at",
            "last_received_at",
        ]
        read_only_fields = fields

    def get_secret_set(self, hook) -> bool:
        return bool(hook.secret)

    def get_endpoint(self, hook) -> str:
        return voice_hook_endpoint(hook.platform, self.context.get("request"))


class VoiceHookWrite(serializers.Serializer):
    platform = serializers.ChoiceField(choices=VoiceHook.Platform.values, required=False)
    platform_agent_id = serializers.CharField(max_length=200, required=False, allow_blank=True)
    agent = serializers.SlugField(max_length=100, required=False)
    agent_version = serializers.CharField(max_length=100, required=False)
    secret = serializers.CharField(
        max_length=500,
        min_length=8,
        required=False,
        write_only=True,
        help_text="the platform's signing secret; never shown again (default: 64 random hex "
        "digits, for Vapi's server URL secret)",
    )
    active = serializers.BooleanField(required=False)


class VoiceHookListCreate(generics.GenericAPIView):
    """GET: the voice hooks. POST: map a platform's agent to a Docket agent version and set the
    secret its webhooks are signed with (manage_webhooks: leads)."""

    permission_classes = MANAGE
    serializer_class = VoiceHookSerializer
    queryset = VoiceHook.objects.select_related("agent").order_by("pk")

    @extend_schema(responses={200: VoiceHookSerializer(many=True)})
    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(
            VoiceHookSerializer(page, many=True, context={"request": request}).data
        )

    @extend_schema(request=VoiceHookWrite, responses={201: VoiceHookSerializer})
    def post(self, request):
        body = VoiceHookWrite(data=request.data)
        body.is_valid(raise_exception=True)
        hook = voice_hook_save(**body.validated_data, by=request.user.get_username())
        return Response(
            VoiceHookSerializer(hook, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )


class VoiceHookDetail(generics.GenericAPIView):
    """GET one voice hook; PATCH its mapping, secret or active flag; DELETE it."""

    permission_classes = MANAGE
    serializer_class = VoiceHookSerializer

    @extend_schema(responses={200: VoiceHookSerializer})
    def get(self, request, pk: int):
        return Response(VoiceHookSerializer(voice_hook_get(pk), context={"request": request}).data)

    @extend_schema(request=VoiceHookWrite, responses={200: VoiceHookSerializer})
    def patch(self, request, pk: int):
        hook = voice_hook_get(pk)
        body = VoiceHookWrite(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        hook = voice_hook_save(hook=hook, **body.validated_data)
        return Response(VoiceHookSerializer(hook, context={"request": request}).data)

    @extend_schema(responses={204: None})
    def delete(self, request, pk: int):
        voice_hook_get(pk).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


__all__ = ["BodyTooLarge", "ImportResultSerializer"]
