from django.contrib import admin

from core.admin import KeptByTriggersAdmin
from evals.judging.models import (
    Judge,
    JudgeCacheEntry,
    JudgeRun,
    JudgeRunItem,
    Verdict,
    VerdictCount,
)


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    inlines: list = []  # other apps add theirs (evals.classifiers.admin)
    list_display = [
        "transcript",
        "rule_version",
        "judge",
        "flagged",
        "turn",
        "severity",
        "confidence",
    ]
    list_filter = ["flagged", "judge"]
    raw_id_fields = ["transcript", "rule_version", "judge_run"]


@admin.register(JudgeRunItem)
class JudgeRunItemAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "run",
        "transcript",
        "kind",
        "group",
        "phase",
        "outcome",
        "tokens_in",
        "tokens_out",
    ]
    list_filter = ["outcome", "kind"]
    raw_id_fields = ["run", "transcript"]


@admin.register(JudgeCacheEntry)
class JudgeCacheEntryAdmin(admin.ModelAdmin):
    list_display = ["key", "model", "prompt_version", "tokens_in", "tokens_out", "created_at"]
    list_filter = ["model", "prompt_version"]


for model in [Judge, JudgeRun]:
    admin.site.register(model)

# Kept by database triggers: verdict_counts_rebuild repairs it.
admin.site.register(VerdictCount, KeptByTriggersAdmin)
