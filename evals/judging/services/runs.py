"""The judge runner: plan a run, fan it out as one
task per (transcript, rule group), record verdicts.

Units of work (JudgeRunItem):
- an LLM item grades one transcript against one rule group: the current versions of the rules that
  share a group and a phase (a phase-specific rule sees only its phase's
  turns, so rules of one group with different phases are separate calls);
- a detector item runs every detector rule on one transcript, in code, for free; the detector
  rules that call a model (the runtime classifiers) are an item of their own, whose model calls
  are estimated, counted in the run's calls, tokens and cost, and stopped by its cost cap like
  the judge's own (through a ModelMeter, evals.rules.detectors).

Judges: LLM verdicts belong to the judge "<model>/<prompt version>" (kind llm); detector verdicts to
one judge per detector, "detector/<name>" (kind detector), so calibration shows each detector apart.

A check that needs a model nothing can answer is skipped as "needs a model", never an errored
verdict: an LLM group with no recorded answer (cache) when no judge is configured, and a detector
rule that calls a model (a runtime classifier) when that model is not configured or the run is
detector-only (free: it makes no model calls). Such items are recorded finished, outcome skipped,
with the reason; a run in which every check would be skipped is refused.

A verdict key (transcript, rule version, judge) is written once: re-judging keeps an existing good
verdict (as importing the same key is a no-op, and marks stay attached to what they marked), and
only an errored verdict is replaced. Answers are cached on (transcript checksum, the group's rule
versions, model, prompt version), so a rerun makes calls only for groups that changed.
"""

import dataclasses
import fnmatch
import logging
import threading
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Case, Count, F, IntegerField, Max, Q, Sum, Value, When
from django.db.models.functions import Least, Length
from django.utils import timezone

from core.background import in_thread, task_named
from core.errors import DomainError
from core.leases import heartbeat, lease_expired_before
from evals.catalog.models import Transcript, Turn
from evals.catalog.selectors import agent_version_resolve
from evals.judging import prompt as jp
from evals.judging import registry
from evals.judging.client import (
    JudgeCallError,
    judge_call,
    judge_configured,
    judge_cost,
    judge_settings,
)
from evals.judging.models import Judge, JudgeCacheEntry, JudgeRun, JudgeRunItem, Verdict
from evals.judging.selectors.runs import skipped_groups
from evals.judging.services.counts import verdict_counts_compact_on_commit
from evals.rules.detectors import (
    DetectorContext,
    ModelMeter,
    detector_judge,
    detector_model_calls,
    detector_model_need,
    detector_run,
    turn_views,
)
from evals.rules.models import Rule, RuleVersion
from evals.rules.selectors import rule_versions_current, rule_versions_judged_beside

logger = logging.getLogger(__name__)

# The Celery task of one item (evals.judging.tasks), queued by name; the name predates the split.
ITEM_TASK = "evals.tasks.judge_run_item_task"

OUT_TOKENS_PER_RULE = 70  # a one-sentence reason and the verdict fields
NEEDS_MODEL = "needs a model"
NO_JUDGE = (
    f"{NEEDS_MODEL}: no judge is configured (JUDGE_BASE_URL or JUDGE_API_KEY) and no answer is "
    "recorded for these rule versions on this call"
)
FREE_RUN = f"{NEEDS_MODEL}: a detector-only run makes no model calls"
PER_TURN_OVERHEAD_CHARS = 14  # "[123] AGENT: " and the newline
TURN_VIEW_FIELDS = ("index", "speaker", "text", "start_ms", "end_ms", "asr_confidence", "phase")


class JudgeRunInvalid(DomainError, ValueError):
    """A filter of a judge run names nothing: says which."""


@dataclass(frozen=True)
class PlannedItem:
    transcript_id: int
    checksum: str
    kind: str
    group: str
    phase: str
    rule_versions: tuple[RuleVersion, ...]
    skip: str = ""  # why the check is not made ("needs a model: ..."); recorded as skipped
    paid: bool = False  # detector rules that call a model (a runtime classifier)

    @property
    def prompt_rules(self) -> list[jp.PromptRule]:
        return [_prompt_rule(rv) for rv in self.rule_versions]


@dataclass
class JudgeRunPlan:
    """What a run would do: its items, how many calls it would make and what they would cost."""

    model: str
    prompt_version: str
    transcripts: int = 0
    rule_versions: int = 0
    items: list[PlannedItem] = field(default_factory=list)
    llm_items: int = 0
    detector_items: int = 0
    cache_hits: int = 0
    calls: int = 0  # model calls: the judge's, and the detector rules' (detector_calls of them)
    detector_calls: int = 0
    est_tokens_in: int = 0
    est_tokens_out: int = 0
    est_cost: Decimal = Decimal(0)
    cost_cap: Decimal = Decimal(0)
    needs_model: int = 0  # checks skipped because they need a model nothing can answer

    @property
    def runnable(self) -> int:
        return len(self.items) - self.needs_model

    def needs_model_groups(self) -> list[dict]:
        """The skipped checks by group, rule versions and reason: what needs a model, and why."""
        return skipped_groups(
            ((i.group or "detectors", i.phase, _labels(i.rule_versions), i.skip), "")
            for i in self.items
            if i.skip
        )

    def as_dict(self) -> dict:
        return {
            "model": self.model,
            "prompt_version": self.prompt_version,
            "transcripts": self.transcripts,
            "rule_versions": self.rule_versions,
            "llm_items": self.llm_items,
            "detector_items": self.detector_items,
            "cache_hits": self.cache_hits,
            "calls": self.calls,
            "detector_calls": self.detector_calls,
            "est_tokens_in": self.est_tokens_in,
            "est_tokens_out": self.est_tokens_out,
            "est_cost": str(self.est_cost),
            "cost_cap": str(self.cost_cap),
            "needs_model": self.needs_model,
            "needs_model_groups": self.needs_model_groups(),
        }


def _labels(rvs) -> tuple[str, ...]:
    return tuple(f"{rv.rule.rule_id} v{rv.number}" for rv in rvs)


def _detector_skip(rv: RuleVersion, *, detectors_only: bool) -> str:
    """Why a detector rule's check is not made here ("" when it is): it needs a model."""
    uses, missing = detector_model_need(_detector_spec(rv) or {})
    if not uses:
        return ""
    if detectors_only:
        return FREE_RUN
    return f"{NEEDS_MODEL}: {missing}" if missing else ""


def _detector_spec(rv: RuleVersion) -> dict | None:
    return rv.detector or rv.rule.detector or None


def _prompt_rule(rv: RuleVersion) -> jp.PromptRule:
    return jp.PromptRule(
        rule_id=rv.rule.rule_id,
        version=rv.number,
        text=rv.text,
        severity=rv.rule.severity,
        phase=rv.rule.phase,
    )


def item_cache_key(
    *, checksum: str, rule_versions, phase: str, model: str, prompt_version: str
) -> str:
    """Return the cache key of an LLM item's answer: the transcript's checksum, the group's rule
    versions (as the prompt shows them), the phase, the model and the prompt version."""
    return jp.cache_key(
        checksum=checksum,
        rules=[_prompt_rule(rv) for rv in rule_versions],
        phase=phase,
        model=model,
        prompt_version=prompt_version,
    )


def llm_judge_name(model: str, prompt_version: str = jp.PROMPT_VERSION) -> str:
    return f"{model}/{prompt_version}"


def _transcripts(transcript_ids, agent_version) -> list[Transcript]:
    qs = Transcript.objects.all()
    if agent_version:
        qs = qs.filter(agent_version=agent_version_resolve(agent_version, what="agent version"))
    if transcript_ids:
        ids = list(dict.fromkeys(transcript_ids))
        qs = qs.filter(external_id__in=ids)
        found = set(qs.values_list("external_id", flat=True))
        missing = [i for i in ids if i not in found]
        if missing:
            raise JudgeRunInvalid(
                f"transcript: no such transcript {', '.join(missing[:5])}"
                + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
                + (f" for agent version {agent_version}" if agent_version else "")
            )
    return list(qs.only("pk", "checksum", "external_id").order_by("pk"))


def _rule_versions(rule_ids, *, detectors_only: bool) -> list[RuleVersion]:
    """Return the current (highest, not retired) version of every active rule matching the
    patterns, and the versions judged beside them (rule_versions_judged_beside)."""
    rules = list(Rule.objects.filter(status=Rule.Status.ACTIVE).order_by("rule_id"))
    if rule_ids:
        chosen = []
        for pattern in rule_ids:
            # A pattern matches rule ids (`asking.*`,
            # `opening.greet-by-name`) or a group (`signals.*`).
            matched = [
                r
                for r in rules
                if fnmatch.fnmatchcase(r.rule_id, pattern) or pattern in (r.group, f"{r.group}.*")
            ]
            if not matched:
                raise JudgeRunInvalid(f"rule: no active rule matches {pattern!r}")
            chosen += [r for r in matched if r not in chosen]
        rules = chosen
    current = {rv.rule_id: rv for rv in rule_versions_current([r.pk for r in rules])}
    versions = [current[r.pk] for r in rules if r.pk in current]
    versions += rule_versions_judged_beside(versions)
    if detectors_only:
        versions = [rv for rv in versions if _detector_spec(rv)]
    return versions


def judge_run_plan(
    *,
    transcript_ids=None,
    rule_ids=None,
    agent_version=None,
    detectors_only: bool = False,
    cost_cap: Decimal | None = None,
) -> JudgeRunPlan:
    """Return the plan of a judge run: items, calls after cache hits, estimated tokens and cost."""
    transcripts = _transcripts(transcript_ids, agent_version)
    versions = _rule_versions(rule_ids, detectors_only=detectors_only)
    return _plan_pairs(
        [(t, versions) for t in transcripts],
        model=judge_settings().model,
        cost_cap=cost_cap,
        rule_versions=len(versions),
        detectors_only=detectors_only,
        judge_ready=judge_configured(),
    )


def judge_cost_cap(cost_cap: Decimal | None = None) -> Decimal:
    """The cost cap of a judge run: the one asked for, else JUDGE_COST_CAP_USD (0: none)."""
    return Decimal(str(settings.JUDGE_COST_CAP_USD if cost_cap is None else cost_cap))


def _plan_pairs(
    work: list[tuple[Transcript, list[RuleVersion]]],
    *,
    model: str,
    cost_cap: Decimal | None,
    rule_versions: int,
    prompt_version: str = jp.PROMPT_VERSION,
    detectors_only: bool = False,
    judge_ready: bool = True,
) -> JudgeRunPlan:
    """Plan items for each transcript and the rule versions it is to be judged on.

    Checks that need a model nothing can answer become skipped items (`skip`): detector rules
    that call a model in a detector-only run or when that model is not configured, and LLM groups
    with no cached answer when the judge is not (`judge_ready` False).
    """
    cap = judge_cost_cap(cost_cap)
    plan = JudgeRunPlan(model=model, prompt_version=prompt_version, cost_cap=cap)
    plan.transcripts, plan.rule_versions = len(work), rule_versions
    detector_skips: dict[int, str] = {}
    for t, versions in work:
        groups: dict[tuple[str, str], list[RuleVersion]] = {}
        for rv in versions:
            # Groups an item kind of another app judges (the conversation checks, whole-call)
            # are left to it.
            if not _detector_spec(rv) and not registry.judged_elsewhere(rv.rule.group):
                groups.setdefault((rv.rule.group, rv.rule.phase), []).append(rv)
        for (group, phase), rvs in sorted(groups.items()):
            # A version judged beside its rule's newer one is a call of its own: one call grades
            # each rule id once.
            newest = {}
            for rv in rvs:
                if rv.number > newest.get(rv.rule_id, 0):
                    newest[rv.rule_id] = rv.number
            beside = [rv for rv in rvs if rv.number < newest[rv.rule_id]]
            main = tuple(rv for rv in rvs if rv not in beside)
            for item_rvs in [main, *((rv,) for rv in beside)]:
                plan.items.append(
                    PlannedItem(t.pk, t.checksum, JudgeRunItem.Kind.LLM, group, phase, item_rvs)
                )
        # The free detector rules are one item, those that call a model another: the cost cap
        # stops the second whole, as it stops an LLM item.
        by_skip: dict[tuple[str, bool], list[RuleVersion]] = {}
        for rv in versions:
            if spec := _detector_spec(rv):
                if rv.pk not in detector_skips:
                    detector_skips[rv.pk] = _detector_skip(rv, detectors_only=detectors_only)
                paid = detector_model_need(spec)[0]
                by_skip.setdefault((detector_skips[rv.pk], paid), []).append(rv)
        for (skip, paid), rvs in sorted(by_skip.items()):
            plan.items.append(
                PlannedItem(
                    t.pk,
                    t.checksum,
                    JudgeRunItem.Kind.DETECTORS,
                    "",
                    "",
                    tuple(rvs),
                    skip=skip,
                    paid=paid and not skip,
                )
            )
    llm = [i for i in plan.items if i.kind == JudgeRunItem.Kind.LLM]
    plan.llm_items = len(llm)
    plan.detector_items = sum(
        1 for i in plan.items if i.kind == JudgeRunItem.Kind.DETECTORS and not i.skip
    )
    plan.needs_model = sum(1 for i in plan.items if i.skip)
    _estimate_detectors(plan, [i for i in plan.items if i.paid])
    if not llm:
        return plan
    keys = {
        id(i): item_cache_key(
            checksum=i.checksum,
            rule_versions=i.rule_versions,
            phase=i.phase,
            model=model,
            prompt_version=prompt_version,
        )
        for i in llm
    }
    cached = set()
    values = list(keys.values())
    for start in range(0, len(values), 1000):
        cached |= set(
            JudgeCacheEntry.objects.filter(key__in=values[start : start + 1000]).values_list(
                "key", flat=True
            )
        )
    to_call = [i for i in llm if keys[id(i)] not in cached]
    plan.cache_hits, plan.calls = len(llm) - len(to_call), len(to_call) + plan.detector_calls
    if to_call and not judge_ready:
        # Nothing can answer them: recorded as skipped ("needs a model"), never errored verdicts.
        uncached = {id(i) for i in to_call}
        plan.items = [
            dataclasses.replace(i, skip=NO_JUDGE) if id(i) in uncached else i for i in plan.items
        ]
        plan.llm_items -= len(to_call)
        plan.needs_model += len(to_call)
        plan.calls = plan.detector_calls
        return plan
    _estimate(plan, to_call)
    return plan


def _estimate(plan: JudgeRunPlan, items: list[PlannedItem]) -> None:
    """Fill the estimated tokens and cost from the prompt's length (four characters a token)."""
    if not items:
        return
    clipped = Case(
        When(speaker="tool", then=Least(Length("text"), Value(jp.TOOL_TEXT_MAX))),
        When(speaker="system", then=Least(Length("text"), Value(jp.SYSTEM_TEXT_MAX))),
        default=Length("text"),
        output_field=IntegerField(),
    )
    sizes: dict[tuple[int, str], list[int]] = {}
    transcript_ids = sorted({i.transcript_id for i in items})
    for start in range(0, len(transcript_ids), 500):
        rows = (
            Turn.objects.filter(transcript_id__in=transcript_ids[start : start + 500])
            .values("transcript_id", "phase")
            .annotate(chars=Sum(clipped), n=Count("id"))
        )
        for row in rows:
            # A phase's turns count for that phase's rules and for the whole-call rules ("").
            for key in {(row["transcript_id"], row["phase"] or ""), (row["transcript_id"], "")}:
                acc = sizes.setdefault(key, [0, 0])
                acc[0] += row["chars"] or 0
                acc[1] += row["n"]
    fixed = len(jp.SYSTEM_PROMPT) + 300
    tokens_in = tokens_out = 0
    for item in items:
        chars, n = sizes.get((item.transcript_id, item.phase), [0, 0])
        rules_chars = sum(len(r.rule_id) + len(r.text) + 40 for r in item.prompt_rules)
        tokens_in += jp.estimate_tokens(fixed + rules_chars + chars + n * PER_TURN_OVERHEAD_CHARS)
        tokens_out += OUT_TOKENS_PER_RULE * len(item.rule_versions) + 10
    plan.est_tokens_in += tokens_in
    plan.est_tokens_out += tokens_out
    plan.est_cost += judge_cost(plan.model, tokens_in, tokens_out)


def _estimate_detectors(plan: JudgeRunPlan, items: list[PlannedItem]) -> None:
    """Add the model calls of the detector rules that make them (the runtime classifiers): each
    detector counts the calls it would make on the call's turns, with its own model's price."""
    ids = sorted({i.transcript_id for i in items})
    for start in range(0, len(ids), 200):
        chunk = ids[start : start + 200]
        views: dict[int, list[dict]] = {}
        for row in (
            Turn.objects.filter(transcript_id__in=chunk)
            .order_by("transcript_id", "index")
            .values("transcript_id", *TURN_VIEW_FIELDS)
        ):
            views.setdefault(row["transcript_id"], []).append(row)
        contexts = {
            t.pk: _detector_context(t)
            for t in Transcript.objects.filter(pk__in=chunk).select_related("agent_version__agent")
        }
        for item in (i for i in items if i.transcript_id in contexts):
            turns = turn_views(views.get(item.transcript_id, []))
            for rv in item.rule_versions:
                scoped = [v for v in turns if not rv.rule.phase or v.phase == rv.rule.phase]
                for call in detector_model_calls(
                    _detector_spec(rv) or {}, scoped, contexts[item.transcript_id]
                ):
                    plan.detector_calls += 1
                    plan.est_tokens_in += call.tokens_in
                    plan.est_tokens_out += call.tokens_out
                    plan.est_cost += judge_cost(call.model, call.tokens_in, call.tokens_out)
    plan.calls += plan.detector_calls


@transaction.atomic
def judge_run_create(
    *,
    transcript_ids=None,
    rule_ids=None,
    agent_version=None,
    started_by: str = "",
    dry_run: bool = False,
    detectors_only: bool = False,
    cost_cap: Decimal | None = None,
    background: bool = False,
) -> "JudgeRun | JudgeRunPlan":
    """Plan a judge run and queue its tasks after commit;
    a dry run returns the plan and spends nothing.

    Without a broker the tasks run eagerly: in the caller's thread, or with `background=True`
    (pages and the API) in a thread of their own so the request returns and the run page can poll.
    """
    plan = judge_run_plan(
        transcript_ids=transcript_ids,
        rule_ids=rule_ids,
        agent_version=agent_version,
        detectors_only=detectors_only,
        cost_cap=cost_cap,
    )
    if dry_run:
        return plan
    if plan.needs_model and not plan.runnable:
        raise JudgeRunInvalid(nothing_to_run(plan))
    run = _run_record(
        plan,
        started_by=started_by,
        params={
            "transcripts": list(transcript_ids or []),
            "rules": list(rule_ids or []),
            "agent_version": agent_version or "",
            "detectors_only": detectors_only,
        },
    )
    if background and settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(lambda: _eager_in_thread(run.pk))
    else:
        transaction.on_commit(lambda: judge_run_enqueue(run_id=run.pk))
    return run


def nothing_to_run(plan: JudgeRunPlan) -> str:
    """Why a run whose every check needs a model is refused, naming what would be needed."""
    llm = sum(1 for i in plan.items if i.skip == NO_JUDGE)
    if llm:
        # Without an endpoint or a key the client would try OpenAI's public API with no key,
        # and every call would end as an errored verdict after its retries.
        return (
            f"no LLM judge is configured, and this run needs {llm} judge calls (no answer is "
            "recorded for them): set JUDGE_BASE_URL (and JUDGE_API_KEY, JUDGE_MODEL) to an "
            "OpenAI-compatible server (see Judge connection), or run the detector rules only"
        )
    reasons = sorted({i.skip for i in plan.items if i.skip})
    return f"every check of this run {'; '.join(reasons)}"


def _run_record(plan: JudgeRunPlan, *, started_by: str, params: dict) -> JudgeRun:
    """Create the JudgeRun and its items for a plan."""
    judge = None
    if plan.llm_items:
        judge, _ = Judge.objects.get_or_create(
            name=llm_judge_name(plan.model, plan.prompt_version),
            defaults={
                "kind": Judge.Kind.LLM,
                "model": plan.model,
                "prompt_version": plan.prompt_version,
            },
        )
    now = timezone.now()
    run = JudgeRun.objects.create(
        judge=judge,
        status=JudgeRun.Status.RUNNING if plan.runnable else JudgeRun.Status.DONE,
        started_by=started_by,
        params={
            **params,
            "cost_cap": str(plan.cost_cap),
            "model": plan.model,
            "prompt_version": plan.prompt_version,
            "planned": plan.as_dict(),
        },
        tasks_total=len(plan.items),
        tasks_done=plan.needs_model,
        started_at=now,
        finished_at=None if plan.runnable else now,
    )
    JudgeRunItem.objects.bulk_create(
        [
            JudgeRunItem(
                run=run,
                transcript_id=i.transcript_id,
                kind=i.kind,
                group=i.group,
                phase=i.phase,
                rule_version_ids=[rv.pk for rv in i.rule_versions],
                checksum=i.checksum,
                # A check that needs a model nothing can answer is done before it starts.
                outcome=JudgeRunItem.Outcome.SKIPPED if i.skip else JudgeRunItem.Outcome.PENDING,
                error=i.skip,
                finished_at=now if i.skip else None,
            )
            for i in plan.items
        ],
        batch_size=1000,
    )
    logger.info(
        "judge_run.created",
        extra={
            "run": run.pk,
            "items": len(plan.items),
            "calls": plan.calls,
            "cache_hits": plan.cache_hits,
            "needs_model": plan.needs_model,
            "transcripts": plan.transcripts,
            "rule_versions": plan.rule_versions,
        },
    )
    return run


def judge_missing_verdicts(
    *, judge: Judge | None, pairs: list[tuple[Transcript, RuleVersion]], started_by: str = ""
) -> int:
    """Judge (transcript, rule version) pairs now, in
    this process, for a gate run; return verdicts added.

    Detector rules always run. LLM rules run with `judge`'s model when it is an LLM judge of the
    current prompt version (or with the configured model when no judge is named); verdicts of any
    other judge cannot be reproduced here, so those pairs stay missing and the gate says so.
    """
    if judge is None:
        model = judge_settings().model
    elif judge.prompt_version == jp.PROMPT_VERSION and judge.model:
        model = judge.model
    elif judge.name.endswith(f"/{jp.PROMPT_VERSION}"):  # "<model>/<prompt version>", e.g. imported
        model = judge.name[: -len(jp.PROMPT_VERSION) - 1]
    else:
        model = None
    by_transcript: dict[int, tuple[Transcript, list[RuleVersion]]] = {}
    for t, rv in pairs:
        if model is None and not _detector_spec(rv):
            continue
        by_transcript.setdefault(t.pk, (t, []))[1].append(rv)
    if not by_transcript:
        return 0
    work = list(by_transcript.values())
    plan = _plan_pairs(
        work,
        model=model or judge_settings().model,
        cost_cap=None,
        rule_versions=len({rv.pk for _, rvs in work for rv in rvs}),
        judge_ready=judge_configured(),
    )
    if not plan.runnable:
        return 0
    with transaction.atomic():
        run = _run_record(plan, started_by=started_by or "gate", params={"gate": True})
    for item_id in run.items.order_by("pk").values_list("pk", flat=True):
        judge_run_item_execute(item_id=item_id)
    return Verdict.objects.filter(judge_run=run).count()


def judge_run_resume(*, run_id: int, background: bool = False) -> int:
    """Queue the run's pending items again (after a worker or server died); return how many.

    Safe while they still run: an item is claimed once, a second execution changes nothing.
    """
    pending = JudgeRunItem.objects.filter(
        run_id=run_id, outcome=JudgeRunItem.Outcome.PENDING
    ).count()
    if pending:
        logger.info("judge_run.resumed", extra={"run": run_id, "items": pending})
        if background and settings.CELERY_TASK_ALWAYS_EAGER:
            _eager_in_thread(run_id)
        else:
            judge_run_enqueue(run_id=run_id)
    return pending


def judge_runs_recover(*, now=None, eager: bool | None = None) -> dict[str, list[int]]:
    """Find running judge runs (conversation runs too) whose work lost its worker, and free it to
    be queued again; return {"requeue": item ids, "failed": run ids}. The caller queues the items
    (judge_items_enqueue).

    Lost work: a pending item whose lease expired (its worker died mid-check); without a broker
    (tasks run in a thread of the process that started them) every pending item of a run that
    has not moved for a lease. A run recovered DOCKET_RUN_MAX_RECOVERIES times in a row without
    moving on ends as failed, with the reason. A stored result is never paid again: a finished
    item is never queued again, and an answer already cached is read from the cache. `eager`:
    whether tasks run in threads of their process (default: no broker is configured).
    """
    now = now or timezone.now()
    expired = lease_expired_before(now)
    out: dict[str, list[int]] = {"requeue": [], "failed": []}
    eager = settings.CELERY_TASK_ALWAYS_EAGER if eager is None else eager
    for run in JudgeRun.objects.filter(status=JudgeRun.Status.RUNNING, finished_at__isnull=True):
        pending = run.items.filter(outcome=JudgeRunItem.Outcome.PENDING)
        lost = pending.filter(heartbeat_at__lt=expired)
        if eager:
            moved = run.items.aggregate(a=Max("heartbeat_at"), b=Max("finished_at"))
            last = max(t for t in (run.started_at, run.recovered_at, *moved.values()) if t)
            if last >= expired:
                continue
            lost = pending.filter(Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=expired))
        if not lost.exists():
            continue
        progressed = (
            run.recovered_at is None or run.items.filter(finished_at__gt=run.recovered_at).exists()
        )
        recoveries = 1 if progressed else run.recoveries + 1
        if recoveries > settings.DOCKET_RUN_MAX_RECOVERIES:
            _run_fail(run, now, recoveries - 1)
            out["failed"].append(run.pk)
            continue
        ids = list(lost.order_by("pk").values_list("pk", flat=True))
        JudgeRunItem.objects.filter(pk__in=ids).update(heartbeat_at=None)
        JudgeRun.objects.filter(pk=run.pk).update(recovered_at=now, recoveries=recoveries)
        logger.warning("judge_run.recovered", extra={"run": run.pk, "items": len(ids)})
        out["requeue"] += ids
    return out


def judge_items_enqueue(item_ids: list[int]) -> int:
    """Queue the task of each of these items (the sweep's); return how many."""
    task = task_named(ITEM_TASK)
    for item_id in item_ids:
        task.delay(item_id)
    return len(item_ids)


@transaction.atomic
def _run_fail(run: JudgeRun, now, recoveries: int) -> None:
    reason = (
        f"Failed: its worker stopped and {recoveries} recoveries in a row made no progress "
        "(DOCKET_RUN_MAX_RECOVERIES); the checks not made were left without a verdict."
    )
    left = run.items.filter(outcome=JudgeRunItem.Outcome.PENDING).update(
        outcome=JudgeRunItem.Outcome.ERROR, error=reason, finished_at=now
    )
    JudgeRun.objects.filter(pk=run.pk, finished_at__isnull=True).update(
        status=JudgeRun.Status.FAILED,
        stop_reason=reason[:300],
        tasks_done=F("tasks_done") + left,
        finished_at=now,
    )
    logger.warning("judge_run.failed", extra={"run": run.pk, "left": left})


def _eager_in_thread(run_id: int) -> threading.Thread:
    """Without a broker, judge the run's items in a thread: the request that started it returns."""

    def failed():
        JudgeRun.objects.filter(pk=run_id, finished_at__isnull=True).update(
            status=JudgeRun.Status.FAILED,
            finished_at=timezone.now(),
            stop_reason="The in-process run failed; see the server log.",
        )

    return in_thread(
        lambda: judge_run_enqueue(run_id=run_id), name=f"judge-run-{run_id}", on_error=failed
    )


def judge_run_enqueue(*, run_id: int) -> int:
    """Queue one task per pending item of the run; return how many were queued."""
    ids = list(
        JudgeRunItem.objects.filter(run_id=run_id, outcome=JudgeRunItem.Outcome.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    return judge_items_enqueue(ids)


# ---- executing one item -----------------------------------------------------------------------


@dataclass
class _Outcome:
    outcome: str
    verdicts: dict[int, dict]  # rule version pk -> verdict fields (or {"error": ...})
    judges: dict[int, Judge]
    tokens_in: int = 0
    tokens_out: int = 0
    cost: Decimal = Decimal(0)
    error: str = ""
    called: bool = False
    calls: int = 0  # model calls made, when more than the one `called` says (detector rules)
    cache: dict | None = None  # a JudgeCacheEntry's fields to store
    extra: dict | None = None  # what the item's kind stores beside the verdicts (registry)


def judge_run_item_execute(*, item_id: int) -> str:
    """Run one item (an LLM call, a cache hit or the
    detectors) and record its verdicts; idempotent.

    The item is claimed with a lease its worker renews while it runs: a second delivery of its
    task finds it held and leaves it (no call is paid twice); a worker that dies lets the lease
    expire, and the sweep (judge_runs_recover) queues the item again.
    """
    item = JudgeRunItem.objects.select_related("run", "transcript").filter(pk=item_id).first()
    if item is None or item.outcome != JudgeRunItem.Outcome.PENDING:
        return "gone" if item is None else "already-done"
    now = timezone.now()
    mine = JudgeRunItem.objects.filter(pk=item_id, outcome=JudgeRunItem.Outcome.PENDING)
    claimed = mine.filter(
        Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=lease_expired_before(now))
    ).update(heartbeat_at=now)
    if not claimed:
        return "held-elsewhere"
    try:
        with heartbeat(mine):
            return _item_execute(item)
    except BaseException:
        mine.update(heartbeat_at=None)  # let its retry (or the sweep) take it at once
        raise


def _item_execute(item: JudgeRunItem) -> str:
    if item.checksum and item.transcript.checksum != item.checksum:
        # Replaced since the run was planned: judging the new text would answer another check.
        return _item_finish(item, _Outcome(JudgeRunItem.Outcome.REPLACED, {}, {}))
    rvs = sorted(
        RuleVersion.objects.filter(pk__in=item.rule_version_ids).select_related("rule"),
        key=lambda rv: rv.rule.rule_id,
    )
    turns = list(item.transcript.turns.order_by("index"))
    if item.kind == JudgeRunItem.Kind.DETECTORS:
        result = _run_detectors(rvs, turns, item.transcript, run=item.run)
    elif item.kind in registry.ITEM_KINDS:
        result = registry.ITEM_KINDS[item.kind].run(item, rvs, turns)
    else:
        result = _run_llm(item, rvs, turns)
    return _item_finish(item, result)


def _detector_context(transcript: Transcript, meter: ModelMeter | None = None) -> DetectorContext:
    av = transcript.agent_version
    return DetectorContext(
        call=transcript.external_id,
        tenant=transcript.tenant,
        agent=av.agent.name,
        agent_version=av.version,
        instructions=av.instructions,
        tools=list(av.tools or []),
        meter=meter,
    )


def _budget_left(run: JudgeRun | None) -> Decimal | None:
    """What the run may still spend under its cost cap (None: no cap)."""
    cap = Decimal((run.params.get("cost_cap") if run is not None else None) or "0")
    if cap <= 0:
        return None
    spent = JudgeRun.objects.filter(pk=run.pk).values_list("cost", flat=True).first()
    return cap - (spent or 0)


def _run_detectors(
    rvs: list[RuleVersion], turns, transcript: Transcript | None = None, *, run=None
) -> _Outcome:
    """Run the detector rules on one call. Those that call a model do it through a meter holding
    what is left of the run's cost cap: a rule whose calls the cap stopped, before or part way,
    gets no verdict, and the item is recorded skipped at the cap (what it paid for is kept)."""
    views = turn_views(turns)
    verdicts, judges = {}, _detector_judges(rvs)
    meter = ModelMeter(judge_cost, _budget_left(run))
    context = _detector_context(transcript, meter) if transcript is not None else None
    capped = 0
    for rv in rvs:
        spec = _detector_spec(rv)
        if run is not None and detector_model_need(spec or {})[0] and run_stopped(run):
            capped += 1
            continue
        scoped = [v for v in views if not rv.rule.phase or v.phase == rv.rule.phase]
        refused = meter.refused
        try:
            r = detector_run(spec, scoped, context)
        except ValueError as exc:
            verdicts[rv.pk] = {"error": f"detector spec invalid: {exc}"}
            continue
        if meter.refused > refused:
            capped += 1  # a verdict on part of the call would be a guess
            continue
        if r.error:
            verdicts[rv.pk] = {"error": r.error}
            continue
        verdicts[rv.pk] = {
            "flagged": r.flagged,
            "turns": r.turns,
            "severity": rv.rule.severity if r.flagged else "",
            "rationale": r.rationale,
            "confidence": r.confidence,
        }
        if r.category:
            verdicts[rv.pk]["category"] = r.category
    errors = sum(1 for v in verdicts.values() if "error" in v)
    if capped and run is not None:
        _cap_reached(run)
    return _Outcome(
        JudgeRunItem.Outcome.SKIPPED
        if capped
        else JudgeRunItem.Outcome.ERROR
        if errors
        else JudgeRunItem.Outcome.DETECTED,
        verdicts,
        judges,
        tokens_in=meter.tokens_in,
        tokens_out=meter.tokens_out,
        cost=meter.cost,
        error=f"{errors} detector rule(s) failed" if errors and not capped else "",
        called=meter.calls > 0,
        calls=meter.calls,
    )


def _detector_judges(rvs: list[RuleVersion]) -> dict[int, Judge]:
    """Return {rule version pk: its detector's judge} ("detector/<name>", or a classifier's
    "classifier/<name>/..."), creating judges once."""
    specs = {rv.pk: detector_judge(_detector_spec(rv) or {}) for rv in rvs}
    names = {s[0] for s in specs.values()}
    found = {j.name: j for j in Judge.objects.filter(name__in=names)}
    for name, kind, model, prompt_version in set(specs.values()):
        if name not in found:
            found[name], _ = Judge.objects.get_or_create(
                name=name,
                defaults={"kind": kind, "model": model, "prompt_version": prompt_version},
            )
    return {pk: found[s[0]] for pk, s in specs.items()}


def run_stopped(run: JudgeRun) -> bool:
    """Whether the run may make no more calls: its breaker tripped or it reached its cost cap."""
    cap = Decimal(run.params.get("cost_cap") or "0")
    if JudgeRun.objects.filter(pk=run.pk).exclude(stop_reason="").exists() or (
        cap > 0 and JudgeRun.objects.filter(pk=run.pk, cost__gte=cap).exists()
    ):
        _cap_reached(run)
        return True
    return False


def _cap_reached(run: JudgeRun) -> None:
    """Record that the run reached its cost cap, unless it stopped for another reason first."""
    cap = Decimal(run.params.get("cost_cap") or "0")
    JudgeRun.objects.filter(pk=run.pk, stop_reason="").update(
        stop_reason=f"Cost cap reached: spent at least ${cap} "
        "(JUDGE_COST_CAP_USD); remaining calls skipped."
    )


def item_llm_judge(run: JudgeRun) -> tuple[str, str, Judge]:
    """Return the model, prompt version and judge of a run's LLM items."""
    model, prompt_version = (
        run.params.get("model") or judge_settings().model,
        run.params.get("prompt_version") or jp.PROMPT_VERSION,
    )
    judge = (
        run.judge
        or Judge.objects.get_or_create(
            name=llm_judge_name(model, prompt_version),
            defaults={"kind": Judge.Kind.LLM, "model": model, "prompt_version": prompt_version},
        )[0]
    )
    return model, prompt_version, judge


def _run_llm(item: JudgeRunItem, rvs: list[RuleVersion], turns) -> _Outcome:
    _, _, judge = item_llm_judge(item.run)
    return rules_outcome(
        item,
        [_prompt_rule(rv) for rv in rvs],
        turns,
        keys={rv.rule.rule_id: rv.pk for rv in rvs},
        judges={rv.pk: judge for rv in rvs},
    )


def rules_outcome(
    item: JudgeRunItem, rules: list[jp.PromptRule], turns, *, keys: dict, judges: dict
) -> _Outcome:
    """Judge `rules` (one group) on the item's call with the run's model, or answer from the cache:
    the outcome holds each rule's verdict fields under keys[its rule id]."""
    run = item.run
    model, prompt_version, _ = item_llm_judge(run)
    key = jp.cache_key(
        checksum=item.transcript.checksum,
        rules=rules,
        phase=item.phase,
        model=model,
        prompt_version=prompt_version,
    )
    hit = JudgeCacheEntry.objects.filter(key=key).first()
    if hit is not None:
        return _Outcome(
            JudgeRunItem.Outcome.CACHED,
            {keys[rid]: v for rid, v in hit.answer.items() if rid in keys},
            judges,
        )
    shown = jp.scoped_turns(turns, item.phase)
    agent = jp.agent_turn_indices(shown)
    if not agent:
        where = f"the {item.phase} phase" if item.phase else "this call"
        empty = {
            "flagged": False,
            "turns": [],
            "severity": "",
            "rationale": f"No agent turns in {where}.",
            "confidence": None,
        }
        return _Outcome(JudgeRunItem.Outcome.EMPTY, {k: dict(empty) for k in keys.values()}, judges)
    if run_stopped(run):
        return _Outcome(JudgeRunItem.Outcome.SKIPPED, {}, judges)
    messages = jp.build_messages(rules, shown, phase=item.phase)
    schema = jp.answer_schema([r.rule_id for r in rules], agent)
    cfg = judge_settings()
    if cfg.model != model:
        cfg = type(cfg)(**{**cfg.__dict__, "model": model})
    try:
        answer = judge_call(messages, schema, cfg=cfg)
    except JudgeCallError as exc:
        logger.warning(
            "judge_call.failed", extra={"run": run.pk, "item": item.pk, "rules": len(rules)}
        )
        return call_failed(exc, list(keys.values()), judges, model)
    return call_answered(
        answer,
        {keys[rid]: v for rid, v in answer.verdicts.items()},
        judges,
        key=key,
        model=model,
        prompt_version=prompt_version,
    )


def call_failed(exc: JudgeCallError, rvs, judges, model: str, **extra) -> _Outcome:
    """The outcome of a judge call that failed: every rule version's verdict errored (`rvs`: rule
    versions, or the outcome's keys themselves)."""
    return _Outcome(
        JudgeRunItem.Outcome.ERROR,
        {getattr(rv, "pk", rv): {"error": str(exc)} for rv in rvs},
        judges,
        tokens_in=exc.tokens_in,
        tokens_out=exc.tokens_out,
        cost=judge_cost(model, exc.tokens_in, exc.tokens_out),
        error=str(exc),
        called=True,
        **extra,
    )


def call_answered(
    answer, verdicts: dict, judges, *, key: str, model: str, prompt_version: str, **extra
) -> _Outcome:
    """The outcome of a judge call that answered: its verdicts, and the answer to cache."""
    return _Outcome(
        JudgeRunItem.Outcome.CALLED,
        verdicts,
        judges,
        tokens_in=answer.tokens_in,
        tokens_out=answer.tokens_out,
        cost=judge_cost(model, answer.tokens_in, answer.tokens_out),
        called=True,
        cache={
            "key": key,
            "model": model,
            "prompt_version": prompt_version,
            "answer": answer.verdicts,
            "tokens_in": answer.tokens_in,
            "tokens_out": answer.tokens_out,
        },
        **extra,
    )


REPLACED_REASON = (
    "cancelled: the call was replaced during the run (checksum {was}, now {now}); no verdict stored"
)


@transaction.atomic
def _item_finish(item: JudgeRunItem, result: _Outcome) -> str:
    now = timezone.now()
    # Under the call's row lock, as a replace takes it: a verdict is stored only for the content
    # it was judged on, and a replace that commits after this forgets what it stored.
    current = (
        Transcript.objects.select_for_update()
        .filter(pk=item.transcript_id)
        .values_list("checksum", flat=True)
        .first()
    )
    if item.checksum and current != item.checksum:
        return _item_replaced(item, result, was=item.checksum, now_checksum=current or "", at=now)
    claimed = JudgeRunItem.objects.filter(pk=item.pk, outcome=JudgeRunItem.Outcome.PENDING).update(
        outcome=result.outcome,
        error=result.error[:2000],
        tokens_in=result.tokens_in,
        tokens_out=result.tokens_out,
        finished_at=now,
    )
    if not claimed:
        return "already-done"
    errored = _verdicts_put(item, result)
    for hook in registry.VERDICT_HOOKS:
        hook(item.transcript_id, result.verdicts, result.judges)
    kind = registry.ITEM_KINDS.get(item.kind)
    if result.extra is not None and kind is not None and kind.store is not None:
        errored += kind.store(item, result.extra, judge=next(iter(result.judges.values()))) or 0
    if result.cache:
        try:
            with transaction.atomic():
                JudgeCacheEntry.objects.get_or_create(
                    key=result.cache["key"], defaults=result.cache
                )
        except IntegrityError:
            pass  # another worker cached the same answer first
    failed_call = result.called and result.outcome == JudgeRunItem.Outcome.ERROR
    JudgeRun.objects.filter(pk=item.run_id).update(
        tasks_done=F("tasks_done") + 1,
        consecutive_failures=(
            F("consecutive_failures") + 1
            if failed_call
            else (0 if result.called else F("consecutive_failures"))
        ),
        calls_made=F("calls_made") + (result.calls or (1 if result.called else 0)),
        cache_hits=F("cache_hits") + (1 if result.outcome == JudgeRunItem.Outcome.CACHED else 0),
        tokens_in=F("tokens_in") + result.tokens_in,
        tokens_out=F("tokens_out") + result.tokens_out,
        cost=F("cost") + result.cost,
        errors=F("errors") + errored,
    )
    if failed_call:
        _breaker_check(item.run_id, result.error)
    _run_close_if_done(item.run_id, now)
    return result.outcome


def _run_close_if_done(run_id: int, now) -> None:
    """Close the run once every item is done: done, or stopped when its calls were stopped."""
    JudgeRun.objects.filter(
        pk=run_id, tasks_done__gte=F("tasks_total"), finished_at__isnull=True
    ).update(
        status=Case(
            When(stop_reason="", then=Value(JudgeRun.Status.DONE)),
            default=Value(JudgeRun.Status.STOPPED),
        ),
        finished_at=now,
    )


def _item_replaced(item: JudgeRunItem, result: _Outcome, *, was: str, now_checksum: str, at) -> str:
    """Cancel an item whose call was replaced while it ran: no verdict, no cached answer (both
    would belong to text the call no longer has); a call it paid for is still counted."""
    cancelled = JudgeRunItem.objects.filter(
        pk=item.pk, outcome=JudgeRunItem.Outcome.PENDING
    ).update(
        outcome=JudgeRunItem.Outcome.REPLACED,
        error=REPLACED_REASON.format(was=was[:12], now=now_checksum[:12] or "deleted"),
        tokens_in=result.tokens_in,
        tokens_out=result.tokens_out,
        finished_at=at,
    )
    if not cancelled and result.called:
        # The replace itself cancelled it while its call was in flight: count what was paid.
        JudgeRunItem.objects.filter(pk=item.pk).update(
            tokens_in=F("tokens_in") + result.tokens_in,
            tokens_out=F("tokens_out") + result.tokens_out,
        )
    if not cancelled and not result.called:
        return "already-done"
    JudgeRun.objects.filter(pk=item.run_id).update(
        tasks_done=F("tasks_done") + (1 if cancelled else 0),
        replaced=F("replaced") + (1 if cancelled else 0),
        calls_made=F("calls_made") + (1 if result.called else 0),
        tokens_in=F("tokens_in") + result.tokens_in,
        tokens_out=F("tokens_out") + result.tokens_out,
        cost=F("cost") + result.cost,
    )
    logger.info("judge_run_item.replaced", extra={"run": item.run_id, "item": item.pk})
    _run_close_if_done(item.run_id, at)
    return JudgeRunItem.Outcome.REPLACED


def judge_items_cancel_replaced(transcript_ids: list[int]) -> int:
    """Cancel the pending checks of calls a replace changed (checks planned on the old text):
    no verdict will be stored for them; return how many (inside the replace's transaction)."""
    items = list(
        JudgeRunItem.objects.filter(
            transcript_id__in=transcript_ids, outcome=JudgeRunItem.Outcome.PENDING
        )
        .exclude(checksum="")
        .exclude(checksum=F("transcript__checksum"))
        .values_list("pk", "run_id", "checksum", "transcript__checksum")
    )
    if not items:
        return 0
    now = timezone.now()
    per_run: dict[int, int] = {}
    for pk, run_id, was, current in items:
        done = JudgeRunItem.objects.filter(pk=pk, outcome=JudgeRunItem.Outcome.PENDING).update(
            outcome=JudgeRunItem.Outcome.REPLACED,
            error=REPLACED_REASON.format(was=was[:12], now=current[:12]),
            finished_at=now,
        )
        per_run[run_id] = per_run.get(run_id, 0) + done
    for run_id, n in sorted(per_run.items()):
        JudgeRun.objects.filter(pk=run_id).update(
            tasks_done=F("tasks_done") + n, replaced=F("replaced") + n
        )
        _run_close_if_done(run_id, now)
    return sum(per_run.values())


def _breaker_check(run_id: int, error: str) -> None:
    """Stop the run's calls once JUDGE_BREAKER_FAILURES calls in a row have failed (a circuit
    breaker): a judge that hangs would otherwise cost timeout x retries for every item left."""
    limit = settings.JUDGE_BREAKER_FAILURES
    if limit <= 0:
        return
    reason = (
        f"Stopped calling the judge: {limit} calls failed in a row (JUDGE_BREAKER_FAILURES); "
        "remaining calls skipped. Last error: "
    )
    tripped = JudgeRun.objects.filter(
        pk=run_id, consecutive_failures__gte=limit, stop_reason=""
    ).update(stop_reason=(reason + error)[:300])
    if tripped:
        logger.warning("judge_run.breaker_tripped", extra={"run": run_id, "failures": limit})


def _verdict_values(fields: dict) -> dict:
    if "error" in fields:
        return {
            "flagged": False,
            "turn": None,
            "turns": [],
            "severity": "",
            "rationale": "",
            "confidence": None,
            "error": fields["error"][:2000],
        }
    turns = list(fields["turns"]) if fields["flagged"] else []
    return {
        "flagged": fields["flagged"],
        "turn": turns[0] if turns else None,
        "turns": turns,
        "severity": fields["severity"] or "",
        "rationale": fields["rationale"],
        "confidence": fields["confidence"],
        "error": "",
    }


def _verdicts_put(item: JudgeRunItem, result: "_Outcome") -> int:
    """Write the item's verdicts unless a good one already
    holds the key; return how many are errored."""
    if not result.verdicts:
        return 0
    existing = {
        (v.rule_version_id, v.judge_id): v
        for v in Verdict.objects.select_for_update()
        .filter(
            transcript_id=item.transcript_id,
            rule_version_id__in=list(result.verdicts),
            judge_id__in={j.pk for j in result.judges.values()},
        )
        .only("pk", "rule_version_id", "judge_id", "error")
    }
    new, errored = [], 0
    for rv_pk, fields in result.verdicts.items():
        values = _verdict_values(fields)
        errored += 1 if values["error"] else 0
        judge = result.judges[rv_pk]
        old = existing.get((rv_pk, judge.pk))
        if old is None:
            new.append(
                Verdict(
                    transcript_id=item.transcript_id,
                    rule_version_id=rv_pk,
                    judge=judge,
                    judge_run_id=item.run_id,
                    **values,
                )
            )
        elif old.error:
            Verdict.objects.filter(pk=old.pk).update(judge_run_id=item.run_id, **values)
    Verdict.objects.bulk_create(new)
    # Workers write a few verdicts each: fold their counts' deltas as they go (core.deltas).
    verdict_counts_compact_on_commit()
    return errored


def judge_run_item_fail(*, item_id: int, error: str) -> None:
    """Close an item that could not run (its task gave up), so the run still finishes."""
    item = JudgeRunItem.objects.select_related("run").filter(pk=item_id).first()
    if item is None or item.outcome != JudgeRunItem.Outcome.PENDING:
        return
    rvs = RuleVersion.objects.filter(pk__in=item.rule_version_ids).select_related("rule")
    rvs = list(rvs)
    kind = registry.ITEM_KINDS.get(item.kind)
    if kind is not None and kind.failed is not None:
        _item_finish(item, kind.failed(item, rvs, error))
        return
    if item.kind == JudgeRunItem.Kind.DETECTORS:
        judges = _detector_judges(rvs)
    else:
        judges = {rv.pk: item.run.judge for rv in rvs}
    verdicts = {pk: {"error": error} for pk, j in judges.items() if j is not None}
    _item_finish(item, _Outcome(JudgeRunItem.Outcome.ERROR, verdicts, judges, error=error))
