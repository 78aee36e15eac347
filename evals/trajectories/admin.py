from django.contrib import admin

from evals.trajectories.models import AxesReport


def _read_only(model):
    return [f.name for f in model._meta.fields]


@admin.register(AxesReport)
class AxesReportAdmin(admin.ModelAdmin):
    list_display = ["agent_version", "passed", "baseline", "created_by", "created_at"]
    list_filter = ["passed"]
    list_select_related = ["agent_version__agent"]
    readonly_fields = _read_only(AxesReport)
