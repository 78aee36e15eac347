from django.contrib import admin

from . import models


class TurnInline(admin.TabularInline):
    model = models.Turn
    extra = 0


@admin.register(models.Transcript)
class TranscriptAdmin(admin.ModelAdmin):
    list_display = ["external_id", "agent_version", "started_at", "scenario", "language"]
    search_fields = ["external_id", "scenario"]
    list_filter = ["agent_version", "language"]
    inlines = [TurnInline]


class RuleVersionInline(admin.TabularInline):
    model = models.RuleVersion
    extra = 0
    readonly_fields = ["number", "text", "detector", "created_at"]


@admin.register(models.Rule)
class RuleAdmin(admin.ModelAdmin):
    list_display = ["rule_id", "group", "severity", "safety", "status"]
    list_filter = ["group", "safety", "status"]
    search_fields = ["rule_id"]
    inlines = [RuleVersionInline]


@admin.register(models.Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ["transcript", "rule_version", "judge", "flagged", "turn", "severity", "confidence"]
    list_filter = ["flagged", "judge"]
    raw_id_fields = ["transcript", "rule_version", "judge_run"]


for model in [models.Agent, models.AgentVersion, models.Turn, models.RuleVersion, models.Judge, models.JudgeRun]:
    admin.site.register(model)
