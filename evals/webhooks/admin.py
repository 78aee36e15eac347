from django.contrib import admin

from evals.webhooks.models import Webhook, WebhookDelivery
from evals.webhooks.services import webhook_events_clean, webhook_url_clean


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ["url", "events", "active", "created_by", "created_at"]
    list_filter = ["active"]
    search_fields = ["url", "description"]

    def save_model(self, request, obj, form, change):
        obj.url = webhook_url_clean(obj.url)
        obj.events = webhook_events_clean(obj.events)
        if not obj.secret:
            import secrets

            obj.secret = secrets.token_hex(32)
        if not change:
            obj.created_by = request.user.get_username()
        super().save_model(request, obj, form, change)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ["event", "webhook", "status", "response_status", "created_at"]
    list_filter = ["status", "event"]
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]
