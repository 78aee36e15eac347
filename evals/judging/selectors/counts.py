"""Reads of the verdict counts (evals.judging.services.counts): a few rows per rule version, judge
and agent version, whatever the number of verdicts."""

from django.db.models import Sum

from evals.judging.models import VerdictCount


def verdict_counts(*fields: str, **filters) -> dict:
    """Return {value of `fields` (a tuple when several): {"n", "flagged", "errored"}} summed from
    the verdict counts matching `filters`; keys with no verdict are left out."""
    rows = (
        VerdictCount.objects.filter(**filters)
        .values_list(*fields)
        .annotate(sn=Sum("n"), sf=Sum("flagged"), se=Sum("errored"))
        .filter(sn__gt=0)
        .order_by()
    )
    width = len(fields)
    return {
        (r[0] if width == 1 else r[:width]): {"n": r[-3], "flagged": r[-2], "errored": r[-1]}
        for r in rows
    }
