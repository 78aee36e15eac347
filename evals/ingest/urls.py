from django.urls import path

from evals.ingest import api, views

urlpatterns = [
    path("voice-hooks/", views.voice_hook_list, name="voice-hook-list"),
    path("voice-hooks/<int:pk>/toggle/", views.voice_hook_toggle, name="voice-hook-toggle"),
]

api_urlpatterns = [
    path("hooks/vapi/", api.hook_view("vapi"), name="api-hook-vapi"),
    path("hooks/retell/", api.hook_view("retell"), name="api-hook-retell"),
    path("hooks/elevenlabs/", api.hook_view("elevenlabs"), name="api-hook-elevenlabs"),
    path("voice-hooks/", api.VoiceHookListCreate.as_view(), name="api-voice-hooks"),
    path("voice-hooks/<int:pk>/", api.VoiceHookDetail.as_view(), name="api-voice-hook"),
]

# Where OpenTelemetry exporters send traces: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
otel_urlpatterns = [path("v1/traces", api.OtlpTraces.as_view(), name="api-otel-traces")]
