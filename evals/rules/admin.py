from django.contrib import admin

from evals.rules.models import Rule, RuleVersion


class RuleVersionInline(admin.TabularInline):
    model = RuleVersion
    extra = 0
    readonly_fields = ["number", "text", "detector", "created_at"]


@admin.register(Rule)
class RuleAdmin(admin.ModelAdmin):
    list_display = ["rule_id", "group", "severity", "safety", "status"]
    list_filter = ["group", "safety", "status"]
    search_fields = ["rule_id"]
    inlines = [RuleVersionInline]


for model in [RuleVersion]:
    admin.site.register(model)
