"""Reads for judge runs: lists, progress and the summary shown when a run ends."""

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from evals.catalog.models import AgentVersion
from evals.judging.models import JudgeRun, JudgeRunItem, Verdict
from evals.rules.models import RuleVersion


def judge_run_list() -> QuerySet[JudgeRun]:
    return JudgeRun.objects.select_related("judge").order_by("-created_at", "-pk")


def judge_run_get(pk: int) -> JudgeRun | None:
    return JudgeRun.objects.select_related("judge").filter(pk=pk).first()


def agent_version_choices() -> list[str]:
    return sorted(set(AgentVersion.objects.values_list("version", flat=True)))


@dataclass(frozen=True)
class ItemError:
    item_id: int
    transcript: str
    group: str
    phase: str
    rules: list[str]
    error: str


def judge_run_finished(run: JudgeRun) -> bool:
    return run.finished_at is not None


def judge_run_duration_s(run: JudgeRun) -> float | None:
    if not run.started_at:
        return None
    from django.utils import timezone

    end = run.finished_at or timezone.now()
    return max(0.0, (end - run.started_at).total_seconds())


STALE_AFTER_S = 60


def judge_run_stale(run: JudgeRun) -> bool:
    """Return whether an unfinished run has made no progress for STALE_AFTER_S seconds."""
    from django.db.models import Max
    from django.utils import timezone

    if run.finished_at is not None or run.started_at is None:
        return False
    last = run.items.aggregate(last=Max("finished_at"))["last"] or run.started_at
    return (timezone.now() - max(last, run.started_at)).total_seconds() > STALE_AFTER_S


def judge_run_progress(run: JudgeRun) -> int:
    """Return the percent of items done (100 for an empty run)."""
    return 100 if not run.tasks_total else min(100, round(100 * run.tasks_done / run.tasks_total))


def judge_run_item_counts(run: JudgeRun) -> dict[str, int]:
    """Return the run's detector checks that ran, checks skipped at the cost cap, and checks
    skipped because they need a model (the runner records why in the item's error)."""
    skipped = Q(outcome=JudgeRunItem.Outcome.SKIPPED)
    return run.items.aggregate(
        detector_checks=Count(
            "id",
            filter=Q(
                kind=JudgeRunItem.Kind.DETECTORS,
                outcome__in=[JudgeRunItem.Outcome.DETECTED, JudgeRunItem.Outcome.ERROR],
            ),
        ),
        skipped=Count("id", filter=skipped & Q(error="")),
        needs_model=Count("id", filter=skipped & ~Q(error="")),
    )


def judge_run_needs_model(run: JudgeRun, *, calls_shown: int = 8) -> list[dict]:
    """Return the checks the run skipped because they need a model, grouped by rule group, rule
    versions and reason, most calls first, with the first few calls of each."""
    items = list(
        run.items.filter(outcome=JudgeRunItem.Outcome.SKIPPED)
        .exclude(error="")
        .select_related("transcript")
        .order_by("pk")
    )
    rv_ids = {pk for i in items for pk in i.rule_version_ids}
    names = {
        rv.pk: f"{rv.rule.rule_id} v{rv.number}"
        for rv in RuleVersion.objects.filter(pk__in=rv_ids).select_related("rule")
    }
    return skipped_groups(
        (
            (
                i.group or "detectors",
                i.phase,
                tuple(names.get(pk, "?") for pk in i.rule_version_ids),
                i.error,
            ),
            i.transcript.external_id,
        )
        for i in items
    )


def skipped_groups(rows, *, calls_shown: int = 8) -> list[dict]:
    """Group ((group, phase, rule labels, reason), call) rows of skipped checks: one entry per
    key with its number of calls and the first few, most calls first."""
    groups: dict[tuple, list[str]] = {}
    for key, call in rows:
        groups.setdefault(key, []).append(call)
    out = [
        {
            "group": g,
            "phase": ph,
            "rules": list(rules),
            "reason": reason,
            "calls": len(calls),
            "transcripts": [c for c in calls[:calls_shown] if c],
        }
        for (g, ph, rules, reason), calls in groups.items()
    ]
    return sorted(out, key=lambda x: (-x["calls"], x["group"], x["reason"]))


def judge_run_verdict_counts(run: JudgeRun) -> dict[str, int]:
    return Verdict.objects.filter(judge_run=run).aggregate(
        total=Count("id"),
        flagged=Count("id", filter=Q(flagged=True, error="")),
        errored=Count("id", filter=~Q(error="")),
    )


def judge_run_errors(run: JudgeRun, limit: int = 200) -> list[ItemError]:
    """Return the failed items of a run with the rule ids they covered."""
    items = list(
        run.items.filter(outcome=JudgeRunItem.Outcome.ERROR)
        .select_related("transcript")
        .order_by("pk")[:limit]
    )
    rv_ids = {pk for i in items for pk in i.rule_version_ids}
    names = dict(RuleVersion.objects.filter(pk__in=rv_ids).values_list("pk", "rule__rule_id"))
    return [
        ItemError(
            i.pk,
            i.transcript.external_id,
            i.group or "detectors",
            i.phase,
            [names.get(pk, "?") for pk in i.rule_version_ids],
            i.error,
        )
        for i in items
    ]


@dataclass(frozen=True)
class ErrorGroup:
    group: str
    phase: str
    rules: list[str]
    error: str
    count: int
    transcripts: list[str]


def judge_run_error_groups(run: JudgeRun, *, calls_shown: int = 8) -> list[ErrorGroup]:
    """Return the failed checks of a run grouped by rule group and error, most frequent first."""
    groups: dict[tuple, list] = {}
    for e in judge_run_errors(run, limit=5000):
        key = (e.group, e.phase, tuple(e.rules), e.error)
        groups.setdefault(key, []).append(e.transcript)
    out = [
        ErrorGroup(g, ph, list(rules), err, len(ts), ts[:calls_shown])
        for (g, ph, rules, err), ts in groups.items()
    ]
    return sorted(out, key=lambda x: (-x.count, x.group, x.error))


def judge_run_summary(run: JudgeRun) -> dict:
    """Return the run's figures as plain data (the API and the command print this)."""
    counts = judge_run_item_counts(run)
    return {
        "id": run.pk,
        "status": run.status,
        "judge": run.judge.name if run.judge else None,
        "started_by": run.started_by,
        "params": {k: v for k, v in run.params.items() if k != "planned"},
        "tasks_total": run.tasks_total,
        "tasks_done": run.tasks_done,
        "progress": judge_run_progress(run),
        "calls_made": run.calls_made,
        "cache_hits": run.cache_hits,
        "detector_checks": counts["detector_checks"],
        "skipped": counts["skipped"],
        "needs_model": counts["needs_model"],
        "tokens_in": run.tokens_in,
        "tokens_out": run.tokens_out,
        "cost": str(run.cost),
        "errors": run.errors,
        "replaced": run.replaced,
        "recoveries": run.recoveries,
        "stop_reason": run.stop_reason,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
        "duration_s": judge_run_duration_s(run),
        "verdicts": judge_run_verdict_counts(run),
    }
