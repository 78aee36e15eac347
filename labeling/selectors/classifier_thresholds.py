"""Thresholds from marks for the runtime classifiers: per classifier (its rule and judge),
category, tenant and agent, the confidence distribution and the PR curve over marked verdicts."""

import datetime as dt
from dataclasses import dataclass, field

from django.db.models import BigIntegerField, Case, Count, Exists, OuterRef, Q, Sum, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from evals.catalog.models import AgentVersion
from evals.classifiers.services import RULE_OF
from evals.classifiers.thresholds import Item, histogram, pr_curve, threshold_choose
from evals.judging.models import Judge, Verdict
from evals.judging.selectors.browse import day_start
from evals.rules.models import RuleVersion
from labeling.models import ClassifierSpan
from labeling.services import classifier_spans as spans

CLASSIFIER_RULES = tuple(RULE_OF.values())
DEFAULT_TARGET = 0.9
# The window of calls the figures read unless the page or the API names another: the work, like
# the answer, is that window's, however many calls came before it.
WINDOW_DAYS = 90


@dataclass(frozen=True)
class Row:
    item: Item
    tenant: str
    agent: str


@dataclass
class Group:
    """The figures of one slice (everything, one tenant or one agent)."""

    split: str  # all, tenant, agent
    key: str
    verdicts: int = 0
    marked: int = 0
    flagged: int = 0
    histogram: dict = field(default_factory=dict)
    curve: list = field(default_factory=list)
    choice: object = None

    def as_dict(self) -> dict:
        return {
            "split": self.split,
            "key": self.key,
            "verdicts": self.verdicts,
            "marked": self.marked,
            "flagged": self.flagged,
            "histogram": self.histogram,
            "curve": [p.as_dict() for p in self.curve],
            "choice": self.choice.as_dict() if self.choice else None,
        }


def _group(split: str, key: str, rows: list[Row], target: float) -> Group:
    items = [r.item for r in rows]
    curve = pr_curve(items)
    return Group(
        split,
        key,
        verdicts=sum(i.n for i in items),
        marked=sum(i.n for i in items if i.positive is not None),
        flagged=sum(i.n for i in items if i.flagged),
        histogram=histogram(items),
        curve=curve,
        choice=threshold_choose(curve, target),
    )


def classifier_rows(
    *,
    rule_id: str,
    judge_id: int | None = None,
    tenant: str = "",
    agent: str = "",
    category: str = "",
    since: dt.date | None = None,
    until: dt.date | None = None,
) -> tuple[list[Row], list[str]]:
    """Return the classifier's verdicts (errored ones left out) with their marks' truth, those
    alike (per tenant and agent) counted together in the database (Item.n): the figures need no
    verdict one by one; and the categories among them.

    On PostgreSQL from the spans counted ahead (labeling/services/classifier_spans.py) when the
    current time zone is theirs, where a verdict that is not both flagged and marked has only its
    histogram bin's confidence (`Item.counted`: all the figures read of it); otherwise from the
    verdicts."""
    args = (rule_id, judge_id, tenant, agent, category, since, until)
    if spans.spans_kept() and timezone.get_current_timezone_name() == spans.spans_time_zone():
        return _span_rows(*args)
    return verdict_rows(*args)


def verdict_rows(
    rule_id, judge_id, tenant, agent, category, since, until
) -> tuple[list[Row], list[str]]:
    """`classifier_rows` counted from the verdicts themselves (the reference for the spans)."""
    qs = Verdict.objects.filter(rule_version__rule__rule_id=rule_id, error="")
    if judge_id:
        qs = qs.filter(judge_id=judge_id)
    if tenant:
        qs = qs.filter(transcript__tenant=tenant)
    if agent:
        qs = qs.filter(transcript__agent_version__agent__name=agent)
    if category:
        qs = qs.filter(category__category=category)
    if since or until:
        # A call's day is when it started, or when it came in if it says no start.
        qs = qs.annotate(at=Coalesce("transcript__started_at", "transcript__imported_at"))
        if since:
            qs = qs.filter(at__gte=day_start(since))
        if until:
            qs = qs.filter(at__lt=day_start(until + dt.timedelta(days=1)))
    fields = (
        "flagged",
        "confidence",
        "tally__truth",
        "transcript__tenant",
        "transcript__agent_version__agent__name",
    )
    rows = [
        Row(Item(flagged, conf, None if truth is None else bool(truth), n), t, a)
        for flagged, conf, truth, t, a, n in qs.values_list(*fields)
        .annotate(n=Count("pk"))
        .values_list(*fields, "n")
        .order_by()
    ]
    return rows, _categories(qs, "category__category")


def _categories(qs, field: str) -> list[str]:
    return sorted(set(qs.values_list(field, flat=True).distinct().order_by()) - {"", None})


def _span_rows(
    rule_id, judge_id, tenant, agent, category, since, until
) -> tuple[list[Row], list[str]]:
    # The rule's versions fetched first: a list the span key's index probes, where a subquery
    # would read every classifier's rows of each span and join them.
    versions = list(RuleVersion.objects.filter(rule__rule_id=rule_id).values_list("pk", flat=True))
    qs = ClassifierSpan.objects.filter(rule_version_id__in=versions)
    if since or until:
        covering = spans.spans_covering(since or spans.EPOCH, until or dt.date(9999, 12, 31))
        span = Q(pk__in=[])
        for level, start in covering:
            span |= Q(level=level, start=start)
        qs = qs.filter(span)
    else:
        qs = qs.filter(level=spans.EVERY_DAY)
    if judge_id:
        qs = qs.filter(judge_id=judge_id)
    if tenant:
        qs = qs.filter(tenant=tenant)
    if agent:
        qs = qs.filter(
            agent_version_id__in=AgentVersion.objects.filter(agent__name=agent).values("pk")
        )
    if category:
        qs = qs.filter(category=category)
    # Counted per agent, not per agent version (the figures split by tenant and by agent only):
    # fewer rows to bring back and to curve.
    agent_versions: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for pk, agent_id, name in AgentVersion.objects.values_list("pk", "agent_id", "agent__name"):
        agent_versions.setdefault(agent_id, []).append(pk)
        names[agent_id] = name
    agent_of = Case(
        *[When(agent_version_id__in=pks, then=Value(a)) for a, pks in agent_versions.items()],
        default=Value(0),
        output_field=BigIntegerField(),
    )
    fields = ("flagged", "confidence", "truth", "tenant", "agent", "category")
    counts: dict[tuple, int] = {}
    categories = set()
    for flagged, conf, truth, t, a, c, n in (
        qs.annotate(agent=agent_of).values(*fields).annotate(n=Sum("n")).values_list(*fields, "n")
    ).order_by():
        key = (flagged, None if conf < 0 else conf, None if truth < 0 else bool(truth), t, a)
        counts[key] = counts.get(key, 0) + n
        categories.add(c)
    rows = [
        Row(Item(flagged, conf, truth, n), t, names.get(a, ""))
        for (flagged, conf, truth, t, a), n in counts.items()
    ]
    return rows, sorted(categories - {""})


def classifier_thresholds(
    *,
    rule_id: str,
    judge_id: int | None = None,
    tenant: str = "",
    agent: str = "",
    category: str = "",
    target: float = DEFAULT_TARGET,
    since: dt.date | None = None,
    until: dt.date | None = None,
) -> dict:
    """Return the figures of one classifier over the calls of a window of days (every call when
    neither end is given): everything, then split by tenant and by agent."""
    rows, categories = classifier_rows(
        rule_id=rule_id,
        judge_id=judge_id,
        tenant=tenant,
        agent=agent,
        category=category,
        since=since,
        until=until,
    )
    by: dict[str, dict[str, list[Row]]] = {"tenant": {}, "agent": {}}
    for r in rows:
        by["tenant"].setdefault(r.tenant, []).append(r)
        by["agent"].setdefault(r.agent, []).append(r)
    return {
        "all": _group("all", "", rows, target),
        "tenants": [_group("tenant", k, v, target) for k, v in sorted(by["tenant"].items())],
        "agents": [_group("agent", k, v, target) for k, v in sorted(by["agent"].items())],
        "categories": categories,
    }


def classifier_checks() -> list[dict]:
    """Return each classifier rule with its judges and how many verdicts each has, marked."""
    return _span_checks() if spans.spans_kept() else verdict_checks()


def verdict_checks() -> list[dict]:
    """`classifier_checks` counted from the verdicts themselves (the reference for the spans)."""
    rows = (
        Verdict.objects.filter(rule_version__rule__rule_id__in=CLASSIFIER_RULES, error="")
        .values("rule_version__rule__rule_id", "judge_id", "judge__name")
        .annotate(
            verdicts=Count("pk"),
            flagged=Count("pk", filter=Q(flagged=True)),
            marked=Count("pk", filter=Q(tally__truth__isnull=False)),
        )
        .order_by("rule_version__rule__rule_id", "judge__name")
    )
    return [
        {
            "rule": r["rule_version__rule__rule_id"],
            "judge_id": r["judge_id"],
            "judge": r["judge__name"],
            "verdicts": r["verdicts"],
            "flagged": r["flagged"],
            "marked": r["marked"],
        }
        for r in rows
    ]


def _span_checks() -> list[dict]:
    rows = (
        ClassifierSpan.objects.filter(level=spans.EVERY_DAY)
        .values("rule_version_id", "judge_id")
        .annotate(
            verdicts=Sum("n"),
            flagged=Coalesce(Sum("n", filter=Q(flagged=True)), 0),
            marked=Coalesce(Sum("n", filter=Q(truth__gte=0)), 0),
        )
        .order_by()
    )
    rules = dict(
        RuleVersion.objects.filter(rule__rule_id__in=CLASSIFIER_RULES).values_list(
            "pk", "rule__rule_id"
        )
    )
    judges = dict(Judge.objects.values_list("pk", "name"))
    out: dict[tuple, dict] = {}
    for r in rows:
        rule = rules.get(r["rule_version_id"])
        if rule is None:
            continue
        d = out.setdefault(
            (rule, r["judge_id"]),
            {"rule": rule, "judge_id": r["judge_id"], "judge": judges.get(r["judge_id"], "")},
        )
        for k in ("verdicts", "flagged", "marked"):
            d[k] = d.get(k, 0) + r[k]
    return sorted(out.values(), key=lambda d: (d["rule"], d["judge"]))


def classifier_judges(rule_id: str) -> list[Judge]:
    # One probe of the (rule version, judge) index per judge, not a join of every verdict.
    versions = RuleVersion.objects.filter(rule__rule_id=rule_id)
    return list(
        Judge.objects.filter(
            Exists(Verdict.objects.filter(judge=OuterRef("pk"), rule_version__in=versions))
        ).order_by("name")
    )
