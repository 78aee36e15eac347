from django.db.models import Count, Q

from evals.models import Rule, RuleVersion, Transcript, Verdict


def dashboard_figures() -> dict:
    """Return the headline numbers: calls, rules by group and status, verdicts, flagged rate."""
    verdicts = Verdict.objects.aggregate(
        total=Count("id"),
        flagged=Count("id", filter=Q(flagged=True, error="")),
        errored=Count("id", filter=~Q(error="")),
    )
    judged = verdicts["total"] - verdicts["errored"]
    groups = list(
        Rule.objects.values("group").annotate(rules=Count("id")).order_by("group")
    )
    statuses = dict(
        RuleVersion.objects.values_list("status").annotate(n=Count("id")).order_by("status")
    )
    return {
        "calls": Transcript.objects.count(),
        "rules": Rule.objects.count(),
        "groups": groups,
        "version_statuses": statuses,
        "verdicts": verdicts["total"],
        "flagged": verdicts["flagged"],
        "errored": verdicts["errored"],
        "flagged_rate": (verdicts["flagged"] / judged) if judged else None,
    }
