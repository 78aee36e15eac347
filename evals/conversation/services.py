"""The conversation judge: one LLM call per transcript over the whole call, via the judge runner.

A conversation judge run is a JudgeRun whose items are of kind `conversation` (one per transcript),
so it has the rule judge's progress page, cost cap, circuit breaker, cache and Celery tasks. Its
judge is "<model>/conversation-v1". Each item writes:
- two verdicts of the one shape, for the current versions of the rules `conversation.plan_followed`
  and `conversation.no_drift` (flagged when the judge named a finding of that check, citing its
  turns), which reviewers mark and calibration counts like any other;
- one ConversationScore (1-10, the reasons and the named findings), keyed (transcript, judge):
  written once, and only an errored one is replaced, as verdicts are.
"""

from __future__ import annotations

import logging
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Sum
from django.db.models.functions import Length

from core.errors import DomainError
from evals.catalog.models import Agent, Transcript, Turn
from evals.conversation import prompt as jc
from evals.conversation.figures import conversation_figures_compact_on_commit
from evals.conversation.models import ConversationScore
from evals.judging.client import JudgeCallError, judge_call, judge_cost, judge_settings
from evals.judging.models import Judge, JudgeCacheEntry, JudgeRun, JudgeRunItem, Verdict
from evals.judging.services import runs as judging
from evals.rules.models import Rule, RuleVersion
from evals.rules.selectors import rule_version_current

logger = logging.getLogger(__name__)

# The judge-run item kind of a whole-call judgement (registered with judging in apps.py).
ITEM_KIND = "conversation"


def conversation_judge_name(model: str | None = None) -> str:
    return judging.llm_judge_name(model or judge_settings().model, jc.PROMPT_VERSION)


@transaction.atomic
def conversation_checks_ensure() -> list[RuleVersion]:
    """Return the current versions of the two conversation rules, creating them (v1) if missing."""
    out = []
    for rule_id, text in jc.CHECKS.items():
        rule, _ = Rule.objects.get_or_create(
            rule_id=rule_id,
            defaults={"group": jc.GROUP, "severity": "major"},
        )
        rv = (
            rule_version_current(rule)
            or RuleVersion.objects.get_or_create(
                rule=rule, number=1, defaults={"text": text, "source": "conversation judge"}
            )[0]
        )
        rv.rule = rule
        out.append(rv)
    return out


def _checks(rvs) -> list[jc.Check]:
    return [jc.Check(rv.rule.rule_id, rv.number, rv.text) for rv in rvs]


def agent_plan_set(*, agent: str, phases: list[str]) -> Agent:
    """Set an agent's conversation plan (its phases in order); raise DomainError when unknown."""
    found = Agent.objects.filter(name=agent).first()
    if found is None:
        raise judging.JudgeRunInvalid(f"agent: no agent {agent!r}")
    cleaned = [p.strip() for p in phases if p.strip()]
    if len(set(cleaned)) != len(cleaned):
        raise judging.JudgeRunInvalid("plan: a phase is named twice")
    found.conversation_plan = cleaned
    found.save(update_fields=["conversation_plan"])
    return found


def _plans(transcripts: list[Transcript]) -> dict[int, list[str]]:
    """transcript pk -> the plan the judge is given: its agent's, else its own phase labels."""
    agent_plans = dict(
        Agent.objects.filter(versions__transcripts__in=[t.pk for t in transcripts])
        .distinct()
        .values_list("pk", "conversation_plan")
    )
    out, unplanned = {}, []
    for t in transcripts:
        plan = agent_plans.get(t.agent_version.agent_id) or []
        out[t.pk] = list(plan)
        if not plan:
            unplanned.append(t.pk)
    for start in range(0, len(unplanned), 500):
        rows = (
            Turn.objects.filter(transcript__in=unplanned[start : start + 500])
            .exclude(phase="")
            .order_by("transcript_id", "index")
            .values_list("transcript_id", "phase")
        )
        for tid, phase in rows:
            if phase not in out[tid]:
                out[tid].append(phase)
    return out


def conversation_judge_plan(
    *, transcript_ids=None, agent_version=None, cost_cap: Decimal | None = None
) -> judging.JudgeRunPlan:
    """Return what a conversation judge run would do: calls after cache hits, tokens and cost."""
    transcripts = list(
        Transcript.objects.filter(
            pk__in=[t.pk for t in judging._transcripts(transcript_ids, agent_version)]
        ).select_related("agent_version")
    )
    return _plan(transcripts, model=judge_settings().model, cost_cap=cost_cap)


def _plan(transcripts, *, model: str, cost_cap: Decimal | None) -> judging.JudgeRunPlan:
    rvs = conversation_checks_ensure()
    checks = _checks(rvs)
    cap = judging.judge_cost_cap(cost_cap)
    plan = judging.JudgeRunPlan(model=model, prompt_version=jc.PROMPT_VERSION, cost_cap=cap)
    plan.transcripts, plan.rule_versions = len(transcripts), len(rvs)
    plans = _plans(transcripts)
    keys = {}
    for t in transcripts:
        plan.items.append(
            judging.PlannedItem(t.pk, t.checksum, ITEM_KIND, jc.GROUP, "", tuple(rvs))
        )
        keys[t.pk] = jc.cache_key(checksum=t.checksum, checks=checks, plan=plans[t.pk], model=model)
    plan.llm_items = len(plan.items)
    cached = set()
    values = list(keys.values())
    for start in range(0, len(values), 1000):
        cached |= set(
            JudgeCacheEntry.objects.filter(key__in=values[start : start + 1000]).values_list(
                "key", flat=True
            )
        )
    to_call = [pk for pk, key in keys.items() if key not in cached]
    plan.cache_hits, plan.calls = len(keys) - len(to_call), len(to_call)
    if to_call:
        sizes = dict(
            Turn.objects.filter(transcript__in=to_call)
            .values("transcript_id")
            .annotate(chars=Sum(Length("text")) + Count("id") * judging.PER_TURN_OVERHEAD_CHARS)
            .values_list("transcript_id", "chars")
        )
        fixed = len(jc.SYSTEM_PROMPT) + sum(len(c.text) + 40 for c in checks) + 300
        plan.est_tokens_in = sum(
            jc.jp.estimate_tokens(fixed + (sizes.get(pk) or 0)) for pk in to_call
        )
        plan.est_tokens_out = jc.OUT_TOKENS * len(to_call)
        plan.est_cost = judge_cost(model, plan.est_tokens_in, plan.est_tokens_out)
    return plan


@transaction.atomic
def conversation_judge_create(
    *,
    transcript_ids=None,
    agent_version=None,
    started_by: str = "",
    dry_run: bool = False,
    cost_cap: Decimal | None = None,
    background: bool = False,
) -> JudgeRun | judging.JudgeRunPlan:
    """Plan a conversation judge run and queue its items after commit, as judge_run_create does;
    a dry run returns the plan and spends nothing."""
    plan = conversation_judge_plan(
        transcript_ids=transcript_ids, agent_version=agent_version, cost_cap=cost_cap
    )
    if dry_run:
        return plan
    if plan.calls and not (settings.JUDGE_BASE_URL or settings.JUDGE_API_KEY):
        raise judging.JudgeRunInvalid(
            f"no LLM judge is configured, and this run needs {plan.calls} "
            "judge calls: set JUDGE_BASE_URL (and JUDGE_API_KEY, JUDGE_MODEL) "
            "to an OpenAI-compatible server"
        )
    run = judging._run_record(
        plan,
        started_by=started_by,
        params={
            "conversation": True,
            "transcripts": list(transcript_ids or []),
            "agent_version": agent_version or "",
        },
    )
    if background and settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(lambda: judging._eager_in_thread(run.pk))
    else:
        transaction.on_commit(lambda: judging.judge_run_enqueue(run_id=run.pk))
    return run


def conversation_item_run(item: JudgeRunItem, rvs: list[RuleVersion], turns) -> judging._Outcome:
    """Judge one whole transcript (or answer from the cache); return the item's outcome."""
    run = item.run
    model = run.params.get("model") or judge_settings().model
    prompt_version = run.params.get("prompt_version") or jc.PROMPT_VERSION
    judge = (
        run.judge
        or Judge.objects.get_or_create(
            name=judging.llm_judge_name(model, prompt_version),
            defaults={"kind": Judge.Kind.LLM, "model": model, "prompt_version": prompt_version},
        )[0]
    )
    judges = {rv.pk: judge for rv in rvs}
    by_id = {rv.rule.rule_id: rv for rv in rvs}
    checks = _checks(rvs)
    transcript = Transcript.objects.select_related("agent_version__agent").get(
        pk=item.transcript_id
    )
    plan = jc.plan_of(turns, transcript.agent_version.agent.conversation_plan)
    key = jc.cache_key(
        checksum=transcript.checksum,
        checks=checks,
        plan=plan,
        model=model,
        prompt_version=prompt_version,
    )

    def verdicts(answer: dict) -> dict:
        return {by_id[rid].pk: v for rid, v in answer["verdicts"].items() if rid in by_id}

    def score(answer: dict) -> dict:
        return {k: answer[k] for k in ("score", "reason", "findings")} | {"plan": plan}

    hit = JudgeCacheEntry.objects.filter(key=key).first()
    if hit is not None:
        return judging._Outcome(
            JudgeRunItem.Outcome.CACHED, verdicts(hit.answer), judges, extra=score(hit.answer)
        )
    agent = jc.jp.agent_turn_indices(turns)
    if not agent:
        empty = {
            "flagged": False,
            "turns": [],
            "severity": "",
            "rationale": "No agent turns in this call.",
            "confidence": None,
        }
        return judging._Outcome(
            JudgeRunItem.Outcome.EMPTY, {rv.pk: dict(empty) for rv in rvs}, judges
        )
    if judging.run_stopped(run):
        return judging._Outcome(JudgeRunItem.Outcome.SKIPPED, {}, judges)
    cfg = judge_settings()
    if cfg.model != model:
        cfg = type(cfg)(**{**cfg.__dict__, "model": model})
    try:
        answer = judge_call(
            jc.build_messages(checks, turns, plan),
            jc.answer_schema(agent),
            cfg=cfg,
            validate=jc.answer_validate,
        )
    except JudgeCallError as exc:
        logger.warning("conversation_judge.failed", extra={"run": run.pk, "item": item.pk})
        return judging.call_failed(exc, rvs, judges, model, extra={"error": str(exc), "plan": plan})
    return judging.call_answered(
        answer,
        verdicts(answer.verdicts),
        judges,
        key=key,
        model=model,
        prompt_version=prompt_version,
        extra=score(answer.verdicts),
    )


def conversation_score_put(item: JudgeRunItem, fields: dict, *, judge: Judge) -> None:
    """Write the item's score unless a good one already holds (transcript, judge)."""
    values = {
        "score": fields.get("score"),
        "reason": fields.get("reason", ""),
        "findings": fields.get("findings", []),
        "plan": fields.get("plan", []),
        "error": fields.get("error", "")[:2000],
        "judge_run_id": item.run_id,
    }
    old = (
        ConversationScore.objects.select_for_update()
        .filter(transcript_id=item.transcript_id, judge=judge)
        .first()
    )
    if old is None:
        ConversationScore.objects.create(transcript_id=item.transcript_id, judge=judge, **values)
    elif old.error:
        ConversationScore.objects.filter(pk=old.pk).update(**values)
    else:
        return
    # A run's items commit one by one: each folds what the triggers appended, its own and what
    # items finishing beside it left.
    conversation_figures_compact_on_commit()


def conversation_missing_start(*, transcripts, by: str = "") -> JudgeRun | None:
    """Start a conversation judge run on the calls without a good score from the configured
    conversation judge (a gate replaying its golden set); None when nothing is missing or no
    judge is configured."""
    scored = set(
        ConversationScore.objects.filter(
            judge__name=conversation_judge_name(),
            transcript__in=[t.pk for t in transcripts],
            error="",
        ).values_list("transcript_id", flat=True)
    )
    missing = sorted({t.external_id for t in transcripts if t.pk not in scored})
    if not missing:
        return None
    try:
        run = conversation_judge_create(transcript_ids=missing, started_by=by or "gate")
    except DomainError as e:  # JudgeRunInvalid, an unknown agent version
        logger.info("gate_conversation_judge_skipped", extra={"reason": str(e)[:200]})
        return None
    if transaction.get_connection().in_atomic_block and settings.CELERY_TASK_ALWAYS_EAGER:
        judging.judge_run_enqueue(run_id=run.pk)
    return run


@transaction.atomic
def conversation_result_record(
    *, transcript: Transcript, judge_name: str, answer: dict, plan: list[str]
) -> bool:
    """Store a conversation judgement made elsewhere (precomputed, as the demo's are): its score
    and its two verdicts. Idempotent: a stored good score or verdict is kept; return whether
    anything was written."""
    model, _, prompt_version = judge_name.rpartition("/")
    if not model or not prompt_version.startswith("conversation-"):
        raise judging.JudgeRunInvalid(
            f"judge: {judge_name!r} is not a conversation judge (<model>/conversation-vN)"
        )
    judge, _ = Judge.objects.get_or_create(
        name=judge_name,
        defaults={"kind": Judge.Kind.LLM, "model": model, "prompt_version": prompt_version},
    )
    result = jc.answer_from(answer)
    _, created = ConversationScore.objects.get_or_create(
        transcript=transcript,
        judge=judge,
        defaults={
            "score": result["score"],
            "reason": result["reason"],
            "findings": result["findings"],
            "plan": list(plan),
        },
    )
    wrote = created
    for rv in conversation_checks_ensure():
        v = judging._verdict_values(result["verdicts"][rv.rule.rule_id])
        _, made = Verdict.objects.get_or_create(
            transcript=transcript, rule_version=rv, judge=judge, defaults=v
        )
        wrote = wrote or made
    if created:
        conversation_figures_compact_on_commit()
    return wrote
