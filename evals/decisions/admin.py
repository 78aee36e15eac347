from django.contrib import admin

from core.admin import KeptByTriggersAdmin
from evals.decisions.models import Decision, DecisionCell, DecisionKind, DecisionKindVersion


class DecisionKindVersionInline(admin.TabularInline):
    model = DecisionKindVersion
    extra = 0
    readonly_fields = ["number", "question", "answers", "source", "created_at"]


@admin.register(DecisionKind)
class DecisionKindAdmin(admin.ModelAdmin):
    list_display = ["kind_id", "derive", "status"]
    list_filter = ["status", "derive"]
    search_fields = ["kind_id"]
    inlines = [DecisionKindVersionInline]


@admin.register(Decision)
class DecisionAdmin(admin.ModelAdmin):
    list_display = ["transcript", "kind", "key", "choice", "confidence", "gap_ms", "truth"]
    list_filter = ["kind", "source"]
    search_fields = ["transcript__external_id"]
    raw_id_fields = ["transcript"]
    list_select_related = ["transcript", "kind"]


# Kept by database triggers: decision_cells_rebuild repairs it.
admin.site.register(DecisionCell, KeptByTriggersAdmin)
