from django.contrib import admin

from core.admin import KeptByTriggersAdmin

from . import models


@admin.register(models.IssueRow)
class IssueRowAdmin(admin.ModelAdmin):
    list_display = ["number", "transcript", "turn", "severity", "status", "outcome", "assignee"]
    list_filter = ["status", "outcome", "severity", "audio_only"]
    raw_id_fields = ["transcript", "duplicate_of", "rule", "rule_version"]


@admin.register(models.Mark)
class MarkAdmin(admin.ModelAdmin):
    list_display = ["verdict", "reviewer", "correct", "source", "updated_at"]
    list_filter = ["correct"]
    search_fields = ["source"]
    raw_id_fields = ["verdict", "assignment"]


@admin.register(models.SampleItem)
class SampleItemAdmin(admin.ModelAdmin):
    list_display = ["sample", "transcript", "reason", "inclusion_probability", "reviews_needed"]
    list_filter = ["reason"]
    raw_id_fields = ["transcript"]


@admin.register(models.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = [
        "item",
        "reviewer",
        "claimed_at",
        "lease_expires_at",
        "finished_at",
        "released_at",
    ]
    raw_id_fields = ["item"]


@admin.register(models.Settlement)
class SettlementAdmin(admin.ModelAdmin):
    list_display = ["verdict", "correct", "settled_by", "settled_at"]
    raw_id_fields = ["verdict"]


@admin.register(models.PromotionDecision)
class PromotionDecisionAdmin(admin.ModelAdmin):
    list_display = ["rule_version", "action", "actor", "at"]
    list_filter = ["action"]
    raw_id_fields = ["rule_version", "replaced"]


@admin.register(models.VerdictTally)
class VerdictTallyAdmin(KeptByTriggersAdmin):
    """Read-only: the tally is kept by database triggers (rebuild with verdict_tally_rebuild)."""

    raw_id_fields = ["verdict"]


# Kept by database triggers: outcome_sums_rebuild, classifier_spans_rebuild,
# sample_item_counts_rebuild and verdict_tally_rebuild (the tally cells) repair them.
for model in [
    models.TallyCell,
    models.SampleItemCount,
    models.OutcomeCall,
    models.OutcomeDaySums,
    models.OutcomeCheck,
    models.OutcomeCheckSums,
    models.ClassifierSpan,
]:
    admin.site.register(model, KeptByTriggersAdmin)


for model in [models.DailySample, models.IssueRowEvent]:
    admin.site.register(model)


@admin.register(models.OutcomeQuestion)
class OutcomeQuestionAdmin(admin.ModelAdmin):
    """Outcome questions per agent; the API (/api/v1/outcome-questions/) sets them too."""

    list_display = ["agent", "key", "text", "position", "active"]
    list_filter = ["agent", "active"]


@admin.register(models.OutcomeRating)
class OutcomeRatingAdmin(admin.ModelAdmin):
    list_display = ["transcript", "question", "reviewer", "rating", "updated_at"]
    list_filter = ["question", "rating"]
    raw_id_fields = ["transcript", "assignment"]


@admin.register(models.DecisionLabel)
class DecisionLabelAdmin(admin.ModelAdmin):
    list_display = ["decision", "reviewer", "answer", "updated_at"]
    search_fields = ["decision__transcript__external_id", "reviewer__username"]
    raw_id_fields = ["decision"]


@admin.register(models.HardMoment)
class HardMomentAdmin(admin.ModelAdmin):
    list_display = ["decision", "reason", "queued_by", "queued_at"]
    raw_id_fields = ["decision"]
