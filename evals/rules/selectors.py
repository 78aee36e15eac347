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


def rule_versions_replaced(versions) -> dict[int, int]:
    """Return {version id: id of the version it replaces} for these versions: the version its
    rule-workbench estimate was made from, else the one numbered just below."""
    wanted = {}
    for rv in versions:
        number = (rv.estimate or {}).get("from_version")
        wanted[rv.pk] = (rv.rule_id, number if isinstance(number, int) else rv.number - 1)
    found = {
        (rule_id, number): pk
        for pk, rule_id, number in RuleVersion.objects.filter(
            rule_id__in={r for r, _ in wanted.values()}
        ).values_list("pk", "rule_id", "number")
    }
    return {pk: found[key] for pk, key in wanted.items() if key in found}


def rule_versions_judged_beside(versions) -> list[RuleVersion]:
    """Return the versions the judge runner judges beside these current ones: for a candidate
    saved from the rule workbench, the version its estimate was made from (unless retired), until
    a lead gates the candidate. The calls where the two disagree are the daily sample's first
    judge checks, the quickest way to the candidate's own marks."""
    saved = [
        rv
        for rv in versions
        if rv.status in (RuleVersion.Status.CANDIDATE, RuleVersion.Status.DRAFT)
        and (rv.estimate or {}).get("from_version")
    ]
    if not saved:
        return []
    ids = set(rule_versions_replaced(saved).values())
    return list(
        RuleVersion.objects.filter(pk__in=ids)
        .exclude(status=RuleVersion.Status.RETIRED)
        .select_related("rule")
        .order_by("rule__rule_id")
    )
