from django.contrib import admin

from evals.catalog.models import Agent, AgentVersion, Transcript, Turn


class TurnInline(admin.TabularInline):
    model = Turn
    extra = 0


@admin.register(Transcript)
class TranscriptAdmin(admin.ModelAdmin):
    list_display = ["external_id", "agent_version", "started_at", "scenario", "language"]
    search_fields = ["external_id", "scenario"]
    list_filter = ["agent_version", "language"]
    inlines = [TurnInline]


for model in [Agent, AgentVersion, Turn]:
    admin.site.register(model)
