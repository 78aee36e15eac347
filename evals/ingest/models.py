"""Voice hooks (which Docket agent and version a platform's agent maps to, and the secret its
webhooks are signed with) and the OpenTelemetry spans received so far, by the call they make."""

from django.db import models

from evals.catalog.models import Agent


class VoiceHook(models.Model):
    """A voice platform's end-of-call webhook for one of its agents."""

    class Platform(models.TextChoices):
        VAPI = "vapi", "Vapi"
        RETELL = "retell", "Retell"
        ELEVENLABS = "elevenlabs", "ElevenLabs"

    platform = models.CharField(max_length=20, choices=Platform.choices)
    platform_agent_id = models.CharField(
        max_length=200,
        blank=True,
        help_text="The platform's agent: Vapi's assistant id, Retell's agent_id, ElevenLabs' "
        "agent_id. Blank: any agent whose calls this secret signs.",
    )
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="voice_hooks")
    agent_version = models.CharField(max_length=100)
    secret = models.CharField(
        max_length=500,
        help_text="Vapi: the server URL secret (or HMAC credential key); Retell: the API key with "
        "the webhook badge; ElevenLabs: the webhook's HMAC secret.",
    )
    active = models.BooleanField(default=True)
    created_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_received_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["platform", "platform_agent_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["platform", "platform_agent_id"], name="voice_hook_platform_agent_unique"
            )
        ]

    def __str__(self):
        return (
            f"{self.platform} {self.platform_agent_id or '*'} -> {self.agent} {self.agent_version}"
        )


class TraceSpan(models.Model):
    """One span received over OTLP, as the converter reads it; `key` is the call it belongs to
    (its transcript's id: one trace, or one session)."""

    key = models.CharField(max_length=200, db_index=True)
    trace_id = models.CharField(max_length=32)
    span_id = models.CharField(max_length=16)
    start_ns = models.BigIntegerField()
    data = models.JSONField()
    received_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["trace_id", "span_id"], name="trace_span_unique")
        ]
        indexes = [models.Index(fields=["trace_id"], name="trace_span_trace")]

    def __str__(self):
        return f"{self.trace_id}/{self.span_id}"
