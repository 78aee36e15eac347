import secrets

from django import forms
from django.contrib import admin

from core.egress import EgressRefused, egress_url_clean
from evals.webhooks.models import Webhook, WebhookDelivery
from evals.webhooks.services import webhook_events_clean


class WebhookAdminForm(forms.ModelForm):
    class Meta:
        model = Webhook
        fields = "__all__"

    def clean_url(self):
        try:
            return egress_url_clean(self.cleaned_data["url"])
        except EgressRefused as e:
            raise forms.ValidationError(e.message) from None


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    form = WebhookAdminForm
    list_display = ["url", "events", "active", "created_by", "created_at"]
    list_filter = ["active"]
    search_fields = ["url", "description"]

    def save_model(self, request, obj, form, change):
        obj.events = webhook_events_clean(obj.events)
        if not obj.secret:
            obj.secret = secrets.token_hex(32)
        if not change:
            obj.created_by = request.user.get_username()
        super().save_model(request, obj, form, change)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ["event", "webhook", "status", "response_status", "created_at"]
    list_filter = ["status", "event"]
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]
