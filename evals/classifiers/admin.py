from django.contrib import admin

from evals.classifiers.models import VerdictCategory
from evals.judging.admin import VerdictAdmin


def _read_only(model):
    return [f.name for f in model._meta.fields]


@admin.register(VerdictCategory)
class VerdictCategoryAdmin(admin.ModelAdmin):
    list_display = ["verdict", "category"]
    list_filter = ["category"]
    raw_id_fields = ["verdict"]
    readonly_fields = _read_only(VerdictCategory)


class VerdictCategoryInline(admin.StackedInline):
    model = VerdictCategory
    extra = 0


# A classifier's verdict shows its category on the verdict's own admin page.
VerdictAdmin.inlines = [*VerdictAdmin.inlines, VerdictCategoryInline]
