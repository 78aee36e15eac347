from django.contrib import admin

from . import models


class TurnInline(admin.TabularInline):
    model = models.Turn
    extra = 0


@admin.register(models.Transcript)
class TranscriptAdmin(admin.ModelAdmin):
    list_display = ["external_id", "agent_version", "started_at", "scenario", "language"]
    search_fields = ["external_id", "scenario"]
    list_filter = ["agent_version", "language"]
    inlines = [TurnInline]


class RuleVersionInline(admin.TabularInline):
    model = models.RuleVersion
    extra = 0
    readonly_fields = ["number", "text", "detector", "created_at"]


@admin.register(models.Rule)
class RuleAdmin(admin.ModelAdmin):
    list_display = ["rule_id", "group", "severity", "safety", "status"]
    list_filter = ["group", "safety", "status"]
    search_fields = ["rule_id"]
    inlines = [RuleVersionInline]


class VerdictCategoryInline(admin.StackedInline):
    model = models.VerdictCategory
    extra = 0


@admin.register(models.Verdict)
class VerdictAdmin(admin.ModelAdmin):
    inlines = [VerdictCategoryInline]
    list_display = [
        "transcript",
        "rule_version",
        "judge",
        "flagged",
        "turn",
        "severity",
        "confidence",
    ]
    list_filter = ["flagged", "judge"]
    raw_id_fields = ["transcript", "rule_version", "judge_run"]


for model in [
    models.Agent,
    models.AgentVersion,
    models.Turn,
    models.RuleVersion,
    models.Judge,
    models.JudgeRun,
]:
    admin.site.register(model)


class GoldenSetMemberInline(admin.TabularInline):
    model = models.GoldenSetMember
    extra = 0
    can_delete = False
    readonly_fields = [
        "position",
        "scenario",
        "transcript",
        "transcript_external_id",
        "transcript_checksum",
    ]

    def has_add_permission(self, request, obj=None):
        return False  # frozen: change a golden set with import_gates, which makes a new version


@admin.register(models.GoldenSet)
class GoldenSetAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "checksum", "created_at", "created_by"]
    readonly_fields = ["name", "version", "checksum", "created_by", "created_at"]
    inlines = [GoldenSetMemberInline]


class GateMetricInline(admin.TabularInline):
    model = models.GateMetric
    extra = 0


@admin.register(models.Gate)
class GateAdmin(admin.ModelAdmin):
    list_display = ["name", "golden_set", "judge", "updated_at", "updated_by"]
    inlines = [GateMetricInline]


@admin.register(models.GateRun)
class GateRunAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "gate",
        "candidate",
        "baseline",
        "status",
        "golden_set_checksum",
        "created_at",
    ]
    list_filter = ["status", "gate"]
    readonly_fields = [f.name for f in models.GateRun._meta.fields] + ["rule_versions"]

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.JudgeRunItem)
class JudgeRunItemAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "run",
        "transcript",
        "kind",
        "group",
        "phase",
        "outcome",
        "tokens_in",
        "tokens_out",
    ]
    list_filter = ["outcome", "kind"]
    raw_id_fields = ["run", "transcript"]


@admin.register(models.JudgeCacheEntry)
class JudgeCacheEntryAdmin(admin.ModelAdmin):
    list_display = ["key", "model", "prompt_version", "tokens_in", "tokens_out", "created_at"]
    list_filter = ["model", "prompt_version"]


class DecisionKindVersionInline(admin.TabularInline):
    model = models.DecisionKindVersion
    extra = 0
    readonly_fields = ["number", "question", "answers", "source", "created_at"]


@admin.register(models.DecisionKind)
class DecisionKindAdmin(admin.ModelAdmin):
    list_display = ["kind_id", "derive", "status"]
    list_filter = ["status", "derive"]
    search_fields = ["kind_id"]
    inlines = [DecisionKindVersionInline]


@admin.register(models.Decision)
class DecisionAdmin(admin.ModelAdmin):
    list_display = ["transcript", "kind", "key", "choice", "confidence", "gap_ms", "truth"]
    list_filter = ["kind", "source"]
    search_fields = ["transcript__external_id"]
    raw_id_fields = ["transcript"]
    list_select_related = ["transcript", "kind"]


@admin.register(models.Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ["url", "events", "active", "created_by", "created_at"]
    list_filter = ["active"]
    search_fields = ["url", "description"]

    def save_model(self, request, obj, form, change):
        from evals.services.webhooks import webhook_events_clean, webhook_url_clean

        obj.url = webhook_url_clean(obj.url)
        obj.events = webhook_events_clean(obj.events)
        if not obj.secret:
            import secrets

            obj.secret = secrets.token_hex(32)
        if not change:
            obj.created_by = request.user.get_username()
        super().save_model(request, obj, form, change)


@admin.register(models.WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ["event", "webhook", "status", "response_status", "created_at"]
    list_filter = ["status", "event"]
    readonly_fields = [f.name for f in models.WebhookDelivery._meta.fields]


# Runtime classifiers, the conversation judge, trajectory axes and dataset evals: written by their
# services (imports, runs); the admin shows them read-only, with raw-id pickers for big tables.
def _read_only(model):
    return [f.name for f in model._meta.fields]


@admin.register(models.VerdictCategory)
class VerdictCategoryAdmin(admin.ModelAdmin):
    list_display = ["verdict", "category"]
    list_filter = ["category"]
    raw_id_fields = ["verdict"]
    readonly_fields = _read_only(models.VerdictCategory)


@admin.register(models.ConversationScore)
class ConversationScoreAdmin(admin.ModelAdmin):
    list_display = ["transcript", "judge", "score", "error", "created_at"]
    list_filter = ["judge"]
    search_fields = ["transcript__external_id"]
    list_select_related = ["transcript", "judge"]
    readonly_fields = _read_only(models.ConversationScore)


@admin.register(models.AxesReport)
class AxesReportAdmin(admin.ModelAdmin):
    list_display = ["agent_version", "passed", "baseline", "created_by", "created_at"]
    list_filter = ["passed"]
    list_select_related = ["agent_version__agent"]
    readonly_fields = _read_only(models.AxesReport)


class DatasetRowInline(admin.TabularInline):
    model = models.DatasetRow
    fields = ["position", "row_id", "reference"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False


@admin.register(models.Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "rows_count", "checksum", "created_at"]
    search_fields = ["name"]
    readonly_fields = _read_only(models.Dataset)
    inlines = [DatasetRowInline]


class EvalRunRowInline(admin.TabularInline):
    model = models.EvalRunRow
    fields = ["position", "outcome", "score", "passed", "error"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(models.EvalRun)
class EvalRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "dataset", "agent_version", "rubric", "status", "pass_rate", "regressed"]
    list_filter = ["status", "rubric", "regressed"]
    list_select_related = ["dataset", "agent_version__agent"]
    readonly_fields = _read_only(models.EvalRun)
    inlines = [EvalRunRowInline]
