"""API tokens, service accounts and the import page's jobs, for operators. A token is named by
its prefix (the key is never stored; its digest is not shown); tokens are made on the API tokens
page or with `manage.py api_token`, and revoked here, there or with the command."""

from django.contrib import admin, messages

from core.models import ApiToken, ImportJob, ServiceAccount
from core.tokens import api_token_revoke


class KeptByTriggersAdmin(admin.ModelAdmin):
    """Read-only, for the figures database triggers keep (the verdict tally, outcome sums,
    classifier spans, decision cells, verdict counts, tally cells, conversation figures, sample
    item counts): an operator looks, its rebuild command repairs."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["shown", "name", "user", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["prefix", "name", "user__username"]
    fields = ["shown", "name", "user", "created_by", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = fields
    actions = ["revoke"]

    @admin.display(description="token", ordering="prefix")
    def shown(self, token: ApiToken) -> str:
        return f"{token.prefix}…"

    def has_add_permission(self, request) -> bool:
        return False  # a key is shown once, where it is made: the page or the command

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for token in queryset.filter(revoked_at=None):
            api_token_revoke(token_id=token.pk)
        messages.info(request, "Revoked.")


@admin.register(ServiceAccount)
class ServiceAccountAdmin(admin.ModelAdmin):
    list_display = ["user", "created_by", "created_at"]
    search_fields = ["user__username"]
    readonly_fields = ["user", "created_by", "created_at"]

    def has_add_permission(self, request) -> bool:
        return False  # made with its first token, on the API tokens page or by the command


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ["file_name", "kind", "status", "size", "created_by", "created_at"]
    list_filter = ["kind", "status"]
    search_fields = ["file_name", "created_by__username"]
    readonly_fields = [f.name for f in ImportJob._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False  # files come in on the import page
