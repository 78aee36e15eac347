from django.contrib import admin

from . import models


@admin.register(models.IssueRow)
class IssueRowAdmin(admin.ModelAdmin):
    list_display = ["number", "transcript", "turn", "severity", "status", "outcome", "assignee"]
    list_filter = ["status", "outcome", "severity", "audio_only"]
    raw_id_fields = ["transcript", "duplicate_of", "rule", "rule_version"]


for model in [
    models.DailySample, models.SampleItem, models.Assignment, models.Mark, models.Settlement,
    models.IssueRowEvent, models.PromotionDecision,
]:
    admin.site.register(model)
