from django.contrib import admin

from evals.evalruns.models import Dataset, DatasetRow, EvalRun, EvalRunRow


def _read_only(model):
    return [f.name for f in model._meta.fields]


class DatasetRowInline(admin.TabularInline):
    model = DatasetRow
    fields = ["position", "row_id", "reference"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "rows_count", "checksum", "created_at"]
    search_fields = ["name"]
    readonly_fields = _read_only(Dataset)
    inlines = [DatasetRowInline]


class EvalRunRowInline(admin.TabularInline):
    model = EvalRunRow
    fields = ["position", "outcome", "score", "passed", "error"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(EvalRun)
class EvalRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "dataset", "agent_version", "rubric", "status", "pass_rate", "regressed"]
    list_filter = ["status", "rubric", "regressed"]
    list_select_related = ["dataset", "agent_version__agent"]
    readonly_fields = _read_only(EvalRun)
    inlines = [EvalRunRowInline]
