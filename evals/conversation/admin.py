from django.contrib import admin

from core.admin import KeptByTriggersAdmin
from evals.conversation.models import ConversationFindingCount, ConversationScore, ConversationSums


def _read_only(model):
    return [f.name for f in model._meta.fields]


@admin.register(ConversationScore)
class ConversationScoreAdmin(admin.ModelAdmin):
    list_display = ["transcript", "judge", "score", "error", "created_at"]
    list_filter = ["judge"]
    search_fields = ["transcript__external_id"]
    list_select_related = ["transcript", "judge"]
    readonly_fields = _read_only(ConversationScore)


# Kept by database triggers: conversation_figures_rebuild repairs them.
admin.site.register(ConversationSums, KeptByTriggersAdmin)
admin.site.register(ConversationFindingCount, KeptByTriggersAdmin)
