"""Reads of rules and their versions, and the one definition of a rule's current version."""

from django.db.models import Max, OuterRef, Prefetch, QuerySet, Subquery

from evals.rules.models import Rule, RuleVersion


def rule_versions_current(rules=None) -> QuerySet[RuleVersion]:
    """Return the current version of each rule (of `rules`, a queryset or ids, when given): its
    highest-numbered version that is not retired. The judge judges it, triage fixes it, and a
    new version replaces it; the gate keeps using the promoted (gated) one meanwhile."""
    live = RuleVersion.objects.exclude(status=RuleVersion.Status.RETIRED)
    newest = (
        live.filter(rule_id=OuterRef("rule_id"))
        .order_by()
        .values("rule_id")
        .annotate(n=Max("number"))
        .values("n")[:1]
    )
    qs = live.filter(number=Subquery(newest))
    if rules is not None:
        qs = qs.filter(rule__in=rules)
    return qs.select_related("rule")


def rule_version_current(rule: Rule) -> RuleVersion | None:
    """Return the rule's current version (see rule_versions_current), or None."""
    return (
        rule.versions.exclude(status=RuleVersion.Status.RETIRED)
        .select_related("rule")
        .order_by("-number")
        .first()
    )


def rules_with_versions() -> QuerySet[Rule]:
    """Return rules with every version prefetched, oldest version first."""
    return Rule.objects.order_by("group", "rule_id").prefetch_related(
        Prefetch("versions", queryset=RuleVersion.objects.order_by("number"))
    )
