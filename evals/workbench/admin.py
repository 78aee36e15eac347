from django.contrib import admin

from evals.workbench.models import DraftRun, DraftVerdict, RuleDraft


def _read_only(model):
    return [f.name for f in model._meta.fields]


@admin.register(RuleDraft)
class RuleDraftAdmin(admin.ModelAdmin):
    list_display = ["pk", "rule", "base", "model", "changes_meaning", "saved_as", "created_at"]
    search_fields = ["rule__rule_id"]
    list_select_related = ["rule", "base__rule", "saved_as__rule"]
    readonly_fields = _read_only(RuleDraft)


@admin.register(DraftRun)
class DraftRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "draft", "judge_run", "base_judge", "size", "created_at"]
    list_select_related = ["draft__rule", "judge_run", "base_judge"]
    readonly_fields = _read_only(DraftRun)


@admin.register(DraftVerdict)
class DraftVerdictAdmin(admin.ModelAdmin):
    list_display = ["run", "transcript", "stratum", "flagged", "error", "judged_at"]
    list_filter = ["stratum"]
    list_select_related = ["run", "transcript"]
    readonly_fields = _read_only(DraftVerdict)
