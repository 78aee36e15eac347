from django.contrib import admin

from evals.gating.models import Gate, GateMetric, GateRun, GoldenSet, GoldenSetMember


class GoldenSetMemberInline(admin.TabularInline):
    model = GoldenSetMember
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
        return False


@admin.register(GoldenSet)
class GoldenSetAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "checksum", "created_at", "created_by"]
    readonly_fields = ["name", "version", "checksum", "created_by", "created_at"]
    inlines = [GoldenSetMemberInline]


class GateMetricInline(admin.TabularInline):
    model = GateMetric
    extra = 0


@admin.register(Gate)
class GateAdmin(admin.ModelAdmin):
    list_display = ["name", "golden_set", "judge", "updated_at", "updated_by"]
    inlines = [GateMetricInline]


@admin.register(GateRun)
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
    readonly_fields = [f.name for f in GateRun._meta.fields] + ["rule_versions"]

    def has_change_permission(self, request, obj=None):
        return False
