from django.contrib import admin

from evals.ingest.models import TraceSpan, VoiceHook


@admin.register(VoiceHook)
class VoiceHookAdmin(admin.ModelAdmin):
    list_display = ["platform", "platform_agent_id", "agent", "agent_version", "active"]
    list_filter = ["platform", "active"]
    search_fields = ["platform_agent_id", "agent__name", "agent_version"]
    readonly_fields = ["created_by", "created_at", "last_received_at"]

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user.get_username()
        super().save_model(request, obj, form, change)


@admin.register(TraceSpan)
class TraceSpanAdmin(admin.ModelAdmin):
    list_display = ["key", "trace_id", "span_id", "received_at"]
    search_fields = ["key", "trace_id"]
    readonly_fields = [f.name for f in TraceSpan._meta.fields]
