"""Agents and their versions (instructions and tools), transcripts and their turns.

The tables keep the names they had in the evals app (`db_table`).
"""

from django.db import models
from django.db.models import Q


class Agent(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    conversation_plan = models.JSONField(
        default=list,
        blank=True,
        help_text="The phases of a call, in order, for the conversation judge.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_agent"
        ordering = ["name"]

    def __str__(self):
        return self.name


class AgentVersion(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="versions")
    version = models.CharField(max_length=100)
    notes = models.TextField(blank=True)
    # The agent's scope: its system prompt and the tools it may call ({name, description,
    # parameters}). Runtime classifiers and the tool_selection judge measure against these.
    instructions = models.TextField(blank=True)
    tools = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "evals_agentversion"
        ordering = ["agent__name", "version"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "version"], name="agent_version_unique")
        ]

    def __str__(self):
        return f"{self.agent.name} {self.version}"


class Transcript(models.Model):
    """One conversation. `external_id` is the id callers
    use; `checksum` pins its canonical turns."""

    external_id = models.CharField(max_length=200, unique=True)
    agent_version = models.ForeignKey(
        AgentVersion, on_delete=models.PROTECT, related_name="transcripts"
    )
    checksum = models.CharField(max_length=64, db_index=True)
    audio_url = models.CharField(max_length=2000, blank=True)
    language = models.CharField(max_length=20, blank=True)
    scenario = models.CharField(max_length=200, blank=True, db_index=True)
    tenant = models.CharField(max_length=200, blank=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True, db_index=True)
    imported_at = models.DateTimeField(auto_now_add=True, db_index=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "evals_transcript"
        ordering = ["-started_at", "external_id"]

    def __str__(self):
        return self.external_id


class Turn(models.Model):
    class Speaker(models.TextChoices):
        AGENT = "agent", "agent"
        USER = "user", "user"
        TOOL = "tool", "tool"
        SYSTEM = "system", "system"

    # A turn's own fields, in order: what the importer writes, the API shows and the pages read.
    FIELDS = (
        "index",
        "speaker",
        "text",
        "start_ms",
        "end_ms",
        "asr_confidence",
        "phase",
        "tool_calls",
        "tool_call_id",
    )

    # One vocabulary for speakers on every page; "user" is the person the agent talks to.
    SPEAKER_LABELS = {"agent": "Agent", "user": "User", "tool": "Tool", "system": "System"}

    # turn_index_unique (transcript, index) serves
    # lookups by transcript: no second index to maintain.
    transcript = models.ForeignKey(
        Transcript, on_delete=models.CASCADE, related_name="turns", db_index=False
    )
    index = models.PositiveIntegerField()
    speaker = models.CharField(max_length=10, choices=Speaker.choices)
    text = models.TextField(blank=True)
    start_ms = models.PositiveIntegerField(null=True, blank=True)
    end_ms = models.PositiveIntegerField(null=True, blank=True)
    asr_confidence = models.FloatField(null=True, blank=True)
    phase = models.CharField(max_length=50, blank=True)
    tool_calls = models.JSONField(default=list, blank=True)
    tool_call_id = models.CharField(max_length=200, blank=True)

    class Meta:
        db_table = "evals_turn"
        ordering = ["transcript", "index"]
        constraints = [
            models.UniqueConstraint(fields=["transcript", "index"], name="turn_index_unique"),
            models.CheckConstraint(
                condition=Q(asr_confidence__isnull=True)
                | Q(asr_confidence__gte=0, asr_confidence__lte=1),
                name="turn_asr_confidence_range",
            ),
        ]

    def __str__(self):
        return f"{self.transcript_id}#{self.index}"

    @property
    def speaker_label(self) -> str:
        return self.SPEAKER_LABELS.get(self.speaker, self.speaker.capitalize())
