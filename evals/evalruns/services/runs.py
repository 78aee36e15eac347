"""Eval runs: score an agent version on a dataset under a rubric, row by row, and compare the
pass rate with the last green run.

A run has one row per dataset row. For each, the agent is asked (an OpenAI-compatible endpoint
given the agent version's instructions and the row's tools), or its recorded output is taken (the
agent version's transcript whose scenario is the row's id), and the judge scores the attempt 0-100
under the rubric, reason first. Calls run in a thread pool of `concurrency`; every database write
happens in the run's own thread, so a run behaves the same in a worker, a request's thread or a
test's transaction. A row whose agent or judge call fails is recorded with its error and left out
of every average (never scored zero). Before each new call the run checks its cost cap and its
circuit breaker (JUDGE_BREAKER_FAILURES rows failed in a row); once either trips, the rows not
started are skipped and the run reports what it has.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Avg, Count, F, Q, Sum, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from core.background import after_commit
from core.errors import DomainError
from core.leases import heartbeat, lease_expired_before, lease_lost
from evals.catalog.models import AgentVersion, Transcript
from evals.evalruns.models import Dataset, DatasetRow, EvalRun, EvalRunRow
from evals.evalruns.services import rubrics as rb
from evals.evalruns.services.agent import (
    AgentCallError,
    agent_call,
    agent_configured,
    agent_settings,
)
from evals.judging.client import JudgeCallError, judge_call, judge_configured, judge_cost
from evals.judging.client import judge_settings as judge_cfg
from evals.judging.models import JudgeCacheEntry
from evals.judging.prompt import estimate_tokens
from evals.webhooks.services import webhook_emit, webhook_link

logger = logging.getLogger(__name__)

# The Celery task of a whole run (evals.evalruns.tasks), queued by name.
EVAL_RUN_TASK = "evals.tasks.eval_run_task"

AGENT_OUT_TOKENS = 250  # a reply with a tool call or two, for the estimate
JUDGE_OUT_TOKENS = 120  # a reason of two or three sentences and the score
OUTPUT_EST_CHARS = 800  # the agent's output as the judge sees it, for the estimate
MAX_CONCURRENCY = 32


class EvalRunInvalid(DomainError):
    """An eval run cannot start as asked: says which field and why."""


@dataclass
class EvalRunPlan:
    """What a run would do (a dry run): its calls and what they would cost."""

    dataset: str
    agent_version: str
    rubric: str
    source: str
    rows: int = 0
    agent_calls: int = 0
    judge_calls: int = 0
    cache_hits: int = 0
    missing_recorded: list[str] = field(default_factory=list)
    agent_model: str = ""
    judge_model: str = ""
    est_tokens_in: int = 0
    est_tokens_out: int = 0
    est_cost: Decimal = Decimal(0)
    cost_cap: Decimal = Decimal(0)

    def as_dict(self) -> dict:
        return {
            "dataset": self.dataset,
            "agent_version": self.agent_version,
            "rubric": self.rubric,
            "source": self.source,
            "rows": self.rows,
            "agent_calls": self.agent_calls,
            "judge_calls": self.judge_calls,
            "cache_hits": self.cache_hits,
            "missing_recorded": list(self.missing_recorded),
            "agent_model": self.agent_model,
            "judge_model": self.judge_model,
            "est_tokens_in": self.est_tokens_in,
            "est_tokens_out": self.est_tokens_out,
            "est_cost": str(self.est_cost),
            "cost_cap": str(self.cost_cap),
        }


def agent_scope(version: AgentVersion) -> tuple[str, list[dict]]:
    """Return the agent version's instructions and tools (what the agent is given)."""
    tools = [t for t in version.tools or [] if isinstance(t, dict) and t.get("name")]
    return version.instructions or "", tools


def _row_tools(row: DatasetRow, version_tools: list[dict]) -> list[dict]:
    return list(row.tools) or list(version_tools)


def recorded_transcripts(version: AgentVersion, row_ids: list[str]) -> dict[str, Transcript]:
    """row id -> the agent version's latest transcript of that scenario (its recorded output)."""
    out: dict[str, Transcript] = {}
    qs = Transcript.objects.filter(agent_version=version, scenario__in=row_ids).order_by(
        "scenario", "-imported_at", "-pk"
    )
    for t in qs:
        out.setdefault(t.scenario, t)
    return out


def recorded_attempt(transcript: Transcript) -> rb.Attempt:
    """Return what the agent did in a transcript: its last text and its tool calls, in order."""
    turns = list(transcript.turns.order_by("index"))
    results = {t.tool_call_id: t.text for t in turns if t.speaker == "tool" and t.tool_call_id}
    calls, output = [], ""
    for t in turns:
        if t.speaker != "agent":
            continue
        for c in t.tool_calls or []:
            if isinstance(c, dict) and c.get("name"):
                calls.append(
                    rb.ToolCall(
                        name=c["name"],
                        arguments=c.get("arguments"),
                        result=results.get(c.get("id")),
                    )
                )
        if (t.text or "").strip():
            output = t.text
    return rb.Attempt(output=output, calls=tuple(calls))


@dataclass(frozen=True)
class JudgeRequest:
    messages: list[dict]
    schema: dict
    key: str


def judge_request(
    *, rubric: str, rubric_text: str, model: str, row: DatasetRow, tools: list, attempt
) -> JudgeRequest:
    """The judge's messages, answer schema and cache key for one row's attempt."""
    names = [t["name"] for t in tools] + [c.name for c in attempt.calls]
    messages = rb.build_messages(
        rubric=rubric,
        custom_text=rubric_text,
        task=list(row.messages),
        tools=tools,
        attempt=attempt,
        reference=row.reference,
    )
    schema = rb.answer_schema(rubric, names)
    return JudgeRequest(
        messages, schema, rb.cache_key(messages=messages, schema=schema, model=model)
    )


def recorded_judge_requests(
    *, dataset: Dataset, agent_version: AgentVersion, rubric: str, rubric_text: str, model: str
) -> dict[str, JudgeRequest]:
    """row id -> the judge request for its recorded output (rows without one are left out)."""
    _, version_tools = agent_scope(agent_version)
    rows = list(dataset.rows.order_by("position"))
    found = recorded_transcripts(agent_version, [r.row_id for r in rows])
    return {
        row.row_id: judge_request(
            rubric=rubric,
            rubric_text=rubric_text,
            model=model,
            row=row,
            tools=_row_tools(row, version_tools),
            attempt=recorded_attempt(found[row.row_id]),
        )
        for row in rows
        if row.row_id in found
    }


def _cap(cost_cap) -> Decimal:
    return Decimal(str(settings.EVAL_COST_CAP_USD if cost_cap is None else cost_cap))


def eval_run_plan(
    *,
    dataset: Dataset,
    agent_version: AgentVersion,
    rubric: str,
    rubric_text: str = "",
    recorded: bool = False,
    cost_cap=None,
) -> EvalRunPlan:
    """Return the plan of a run: calls and an estimate of tokens and cost (four characters a
    token); spends nothing."""
    try:
        text = rb.rubric_text(rubric, rubric_text)
    except rb.RubricInvalid as exc:
        raise EvalRunInvalid(str(exc), field="rubric") from None
    rows = list(dataset.rows.order_by("position"))
    instructions, version_tools = agent_scope(agent_version)
    plan = EvalRunPlan(
        dataset=str(dataset),
        agent_version=f"{agent_version.agent.name}:{agent_version.version}",
        rubric=rubric,
        source=EvalRun.Source.RECORDED if recorded else EvalRun.Source.AGENT,
        rows=len(rows),
        agent_model="" if recorded else agent_settings().model,
        judge_model=judge_cfg().model,
        cost_cap=_cap(cost_cap),
    )
    found = recorded_transcripts(agent_version, [r.row_id for r in rows]) if recorded else {}
    agent_in = judge_in = 0
    for row in rows:
        if recorded and row.row_id not in found:
            plan.missing_recorded.append(row.row_id)
            continue
        tools = _row_tools(row, version_tools)
        task_chars = sum(len(m.get("content") or "") for m in row.messages)
        tool_chars = sum(len(t["name"]) + len(t.get("description") or "") + 40 for t in tools)
        if not recorded:
            plan.agent_calls += 1
            agent_in += estimate_tokens(len(instructions) + task_chars + tool_chars * 2)
        plan.judge_calls += 1
        judge_in += estimate_tokens(
            len(rb.SYSTEM_PROMPT) + len(text) + task_chars + tool_chars + OUTPUT_EST_CHARS
        )
        judge_in += estimate_tokens(len(row.reference or ""))
    if recorded and found:
        requests = recorded_judge_requests(
            dataset=dataset,
            agent_version=agent_version,
            rubric=rubric,
            rubric_text=rubric_text,
            model=plan.judge_model,
        )
        keys = {r.key for r in requests.values()}
        plan.cache_hits = JudgeCacheEntry.objects.filter(
            key__in=keys, prompt_version=rb.PROMPT_VERSION
        ).count()
        if plan.judge_calls:
            judge_in = judge_in * (plan.judge_calls - plan.cache_hits) // plan.judge_calls
        plan.judge_calls -= plan.cache_hits
    agent_out = AGENT_OUT_TOKENS * plan.agent_calls
    judge_out = JUDGE_OUT_TOKENS * plan.judge_calls
    plan.est_tokens_in, plan.est_tokens_out = agent_in + judge_in, agent_out + judge_out
    plan.est_cost = judge_cost(plan.judge_model, judge_in, judge_out)
    if not recorded:
        plan.est_cost += judge_cost(plan.agent_model, agent_in, agent_out)
    return plan


def _check_params(*, threshold: int, concurrency: int, max_drop: float | None) -> None:
    if isinstance(threshold, bool) or not isinstance(threshold, int) or not 0 <= threshold <= 100:
        raise EvalRunInvalid("a whole number from 0 to 100", field="threshold")
    if not isinstance(concurrency, int) or not 1 <= concurrency <= MAX_CONCURRENCY:
        raise EvalRunInvalid(f"from 1 to {MAX_CONCURRENCY}", field="concurrency")
    if max_drop is not None and not 0 <= max_drop <= 100:
        raise EvalRunInvalid("percentage points from 0 to 100", field="max_drop")


@transaction.atomic
def eval_run_create(
    *,
    dataset: Dataset,
    agent_version: AgentVersion,
    rubric: str,
    rubric_text: str = "",
    threshold: int = 70,
    concurrency: int | None = None,
    recorded: bool = False,
    cost_cap=None,
    max_drop: float | None = None,
    dry_run: bool = False,
    started_by: str = "",
    background: bool = False,
) -> EvalRun | EvalRunPlan:
    """Plan a run and record it with its rows; a dry run returns the plan and records nothing.

    `background`: queue its execution after commit (a Celery task; a thread without a broker),
    for the API and pages. Otherwise the caller runs `eval_run_execute` (the CLI waits for it).
    """
    concurrency = settings.EVAL_CONCURRENCY if concurrency is None else concurrency
    _check_params(threshold=threshold, concurrency=concurrency, max_drop=max_drop)
    plan = eval_run_plan(
        dataset=dataset,
        agent_version=agent_version,
        rubric=rubric,
        rubric_text=rubric_text,
        recorded=recorded,
        cost_cap=cost_cap,
    )
    if dry_run:
        return plan
    if plan.judge_calls and not judge_configured():
        raise EvalRunInvalid(
            "no LLM judge is configured: set JUDGE_BASE_URL (and JUDGE_API_KEY, JUDGE_MODEL) to "
            "an OpenAI-compatible server",
            field="judge",
        )
    if plan.agent_calls and not agent_configured():
        raise EvalRunInvalid(
            "no agent endpoint is configured: set EVAL_AGENT_BASE_URL (and EVAL_AGENT_MODEL, "
            "EVAL_AGENT_API_KEY), or score recorded outputs",
            field="agent",
        )
    run = EvalRun.objects.create(
        dataset=dataset,
        agent_version=agent_version,
        rubric=rubric,
        rubric_text=rubric_text if rubric == rb.CUSTOM else "",
        threshold=threshold,
        concurrency=concurrency,
        source=plan.source,
        status=EvalRun.Status.PENDING,
        judge_model=plan.judge_model,
        agent_model=plan.agent_model,
        cost_cap=plan.cost_cap,
        rows_total=plan.rows,
        max_drop=settings.EVAL_MAX_DROP if max_drop is None else max_drop,
        started_by=started_by,
    )
    EvalRunRow.objects.bulk_create(
        [
            EvalRunRow(run=run, dataset_row=row, position=row.position)
            for row in dataset.rows.order_by("position")
        ],
        batch_size=1000,
    )
    logger.info(
        "eval_run.created",
        extra={"eval_run": run.pk, "rows": plan.rows, "rubric": rubric, "source": plan.source},
    )
    if background:
        after_commit(EVAL_RUN_TASK, run.pk, on_error=lambda: eval_run_fail(run_id=run.pk))
    return run


def eval_run_fail(*, run_id: int, reason: str = "The run failed; see the server log.") -> None:
    """Close a run that crashed, keeping what it scored."""
    _finish(EvalRun.objects.get(pk=run_id), stop_reason=reason, failed=True)


# ---- executing a run --------------------------------------------------------------------------


@dataclass
class _Job:
    """One row on its way through the agent and the judge (no database in the pool's threads)."""

    row: EvalRunRow
    task: list[dict]
    tools: list[dict]
    reference: str
    attempt: rb.Attempt | None = None
    messages: list[dict] | None = None
    schema: dict | None = None
    key: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    agent_cost: Decimal = Decimal(0)
    judge_cost: Decimal = Decimal(0)

    @property
    def cost(self) -> Decimal:
        return self.agent_cost + self.judge_cost


class _Budget:
    """The run's spend and failures so far, checked before each new call."""

    def __init__(self, run: EvalRun):
        self.run = run
        self.cost = Decimal(run.cost)
        self.failures_in_a_row = 0
        self.stop_reason = ""

    def spend(self, cost: Decimal) -> None:
        self.cost += cost

    def may_call(self) -> bool:
        cap = Decimal(self.run.cost_cap)
        if not self.stop_reason and cap > 0 and self.cost >= cap:
            self.stop_reason = (
                f"Cost cap reached: spent ${self.cost:.4f} of ${cap:.2f} (EVAL_COST_CAP_USD); "
                "rows not started were skipped."
            )
        return not self.stop_reason

    def row_done(self, ok: bool, error: str = "") -> None:
        self.failures_in_a_row = 0 if ok else self.failures_in_a_row + 1
        limit = settings.JUDGE_BREAKER_FAILURES
        if not ok and limit > 0 and self.failures_in_a_row >= limit and not self.stop_reason:
            self.stop_reason = (
                f"Stopped: {limit} rows failed in a row (JUDGE_BREAKER_FAILURES); rows not "
                f"started were skipped. Last error: {error}"
            )[:300]


def _judge_prepare(run: EvalRun, job: _Job) -> None:
    request = judge_request(
        rubric=run.rubric,
        rubric_text=run.rubric_text,
        model=run.judge_model,
        row=job.row.dataset_row,
        tools=job.tools,
        attempt=job.attempt,
    )
    job.messages, job.schema, job.key = request.messages, request.schema, request.key


def _agent_step(run: EvalRun, instructions: str, job: _Job) -> _Job:
    cfg = agent_settings()
    reply = agent_call(instructions=instructions, messages=job.task, tools=job.tools, cfg=cfg)
    job.attempt = reply.attempt
    job.tokens_in += reply.tokens_in
    job.tokens_out += reply.tokens_out
    job.agent_cost = judge_cost(run.agent_model or cfg.model, reply.tokens_in, reply.tokens_out)
    _judge_prepare(run, job)
    return job


def _judge_step(run: EvalRun, job: _Job) -> dict:
    cfg = judge_cfg()
    if cfg.model != run.judge_model:
        cfg = type(cfg)(**{**cfg.__dict__, "model": run.judge_model})
    answer = judge_call(job.messages, job.schema, cfg=cfg, validate=rb.answer_validate)
    job.tokens_in += answer.tokens_in
    job.tokens_out += answer.tokens_out
    job.judge_cost = judge_cost(run.judge_model, answer.tokens_in, answer.tokens_out)
    return answer.verdicts


DB_TRIES = 5


def _retrying(write):
    """Run a write, retrying a locked database with backoff (SQLite while a page polls)."""
    for attempt in range(DB_TRIES):
        try:
            return write()
        except OperationalError:
            if attempt == DB_TRIES - 1:
                raise
            time.sleep(0.05 * 2**attempt)


def _row_save(run: EvalRun, job: _Job, *, answer=None, error="", cached=False) -> None:
    """Record one row's outcome and move the run's counters on (the page polls them)."""
    _retrying(lambda: _row_write(run, job, answer=answer, error=error, cached=cached))


def _row_write(run: EvalRun, job: _Job, *, answer=None, error="", cached=False) -> None:
    row = job.row
    attempt = job.attempt or rb.Attempt()
    values = {
        "output": attempt.output,
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in attempt.calls],
        "tokens_in": job.tokens_in,
        "tokens_out": job.tokens_out,
        "cost": job.cost,
        "cached": cached,
    }
    if error:
        values.update(outcome=EvalRunRow.Outcome.ERROR, error=error[:2000])
    else:
        values.update(
            outcome=EvalRunRow.Outcome.SCORED,
            score=answer["score"],
            passed=answer["score"] >= run.threshold,
            reason=answer["reason"],
        )
    with transaction.atomic():
        EvalRunRow.objects.filter(pk=row.pk).update(**values)
        _counters_update(run)


def _counters_update(run: EvalRun) -> None:
    agg = run.rows.aggregate(
        done=Count("pk", filter=~Q(outcome=EvalRunRow.Outcome.PENDING)),
        scored=Count("pk", filter=Q(outcome=EvalRunRow.Outcome.SCORED)),
        passed=Count("pk", filter=Q(outcome=EvalRunRow.Outcome.SCORED, passed=True)),
        errored=Count("pk", filter=Q(outcome=EvalRunRow.Outcome.ERROR)),
        mean=Avg("score", filter=Q(outcome=EvalRunRow.Outcome.SCORED)),
        tokens_in=Sum("tokens_in"),
        tokens_out=Sum("tokens_out"),
        cost=Sum("cost"),
    )
    tokens_in, tokens_out = agg["tokens_in"] or 0, agg["tokens_out"] or 0
    cost = agg["cost"] or Decimal(0)
    scored = agg["scored"]
    EvalRun.objects.filter(pk=run.pk).update(
        rows_done=agg["done"],
        rows_scored=scored,
        rows_passed=agg["passed"],
        rows_errored=agg["errored"],
        mean_score=agg["mean"],
        pass_rate=(100.0 * agg["passed"] / scored) if scored else None,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost=cost,
    )


def _cache_get(key: str) -> dict | None:
    hit = _retrying(
        lambda: JudgeCacheEntry.objects.filter(key=key, prompt_version=rb.PROMPT_VERSION).first()
    )
    return hit.answer if hit else None


def _cache_put(run: EvalRun, job: _Job, answer: dict) -> None:
    try:
        with transaction.atomic():
            JudgeCacheEntry.objects.get_or_create(
                key=job.key,
                defaults={
                    "model": run.judge_model,
                    "prompt_version": rb.PROMPT_VERSION,
                    "answer": answer,
                    "tokens_in": job.tokens_in,
                    "tokens_out": job.tokens_out,
                },
            )
    except IntegrityError:
        pass  # another run cached the same answer first


def eval_run_execute(*, run_id: int) -> EvalRun:
    """Run a pending eval run to its end here (a worker, a thread, the CLI); return it.

    Idempotent: a run that another process has claimed, or that has finished, is left alone.
    A run whose worker died (its lease expired) is set pending again by the sweep
    (eval_runs_recover) and resumed here from its pending rows: the rows scored are kept.
    """
    now = timezone.now()
    claimed = EvalRun.objects.filter(pk=run_id, status=EvalRun.Status.PENDING).update(
        status=EvalRun.Status.RUNNING,
        started_at=Coalesce("started_at", Value(now)),
        heartbeat_at=now,
    )
    run = EvalRun.objects.select_related("dataset", "agent_version__agent").get(pk=run_id)
    if not claimed:
        return run
    try:
        with heartbeat(EvalRun.objects.filter(pk=run_id, status=EvalRun.Status.RUNNING)):
            _execute(run)
    except Exception as exc:
        logger.exception("eval_run.crashed", extra={"eval_run": run.pk})
        _finish(run, stop_reason=f"The run failed: {type(exc).__name__}.", failed=True)
    return EvalRun.objects.get(pk=run_id)


def eval_runs_recover(*, now=None) -> dict[str, list[int]]:
    """Find running eval runs whose worker died (their lease expired) and set them pending again,
    to be resumed from their pending rows; return {"requeue": run ids (the caller queues them),
    "failed": run ids ended as failed after DOCKET_RUN_MAX_RECOVERIES recoveries}."""
    now = now or timezone.now()
    out: dict[str, list[int]] = {"requeue": [], "failed": []}
    expired = lease_expired_before(now)
    lost = EvalRun.objects.filter(status=EvalRun.Status.RUNNING).filter(
        lease_lost(expired, since="started_at")
    )
    for run in lost.order_by("pk"):
        if run.recoveries >= settings.DOCKET_RUN_MAX_RECOVERIES:
            eval_run_fail(
                run_id=run.pk,
                reason=f"The run failed: its worker stopped and {run.recoveries} recoveries did "
                "not finish it (DOCKET_RUN_MAX_RECOVERIES).",
            )
            out["failed"].append(run.pk)
            continue
        resumed = EvalRun.objects.filter(pk=run.pk, status=EvalRun.Status.RUNNING).update(
            status=EvalRun.Status.PENDING, recoveries=F("recoveries") + 1
        )
        if resumed:
            logger.warning(
                "eval_run.recovered", extra={"eval_run": run.pk, "rows_done": run.rows_done}
            )
            out["requeue"].append(run.pk)
    return out


def _execute(run: EvalRun) -> None:
    instructions, version_tools = agent_scope(run.agent_version)
    rows = list(
        run.rows.filter(outcome=EvalRunRow.Outcome.PENDING)
        .select_related("dataset_row")
        .order_by("position")
    )
    recorded = run.source == EvalRun.Source.RECORDED
    found = (
        recorded_transcripts(run.agent_version, [r.dataset_row.row_id for r in rows])
        if recorded
        else {}
    )
    budget = _Budget(run)
    queue: list[_Job] = []
    for row in rows:
        d = row.dataset_row
        job = _Job(
            row=row,
            task=list(d.messages),
            tools=_row_tools(d, version_tools),
            reference=d.reference,
        )
        if recorded:
            transcript = found.get(d.row_id)
            if transcript is None:
                _row_save(
                    run,
                    job,
                    error=f"no recorded output: {run.agent_version} has no transcript of "
                    f"scenario {d.row_id!r}",
                )
                budget.row_done(False, "no recorded output")
                continue
            _retrying(
                lambda row=row, t=transcript: EvalRunRow.objects.filter(pk=row.pk).update(
                    transcript=t
                )
            )
            job.attempt = recorded_attempt(transcript)
            _judge_prepare(run, job)
        queue.append(job)

    with ThreadPoolExecutor(max_workers=run.concurrency, thread_name_prefix="eval-run") as pool:
        running: dict[Future, tuple[str, _Job]] = {}

        def submit_next() -> None:
            while queue and len(running) < run.concurrency:
                job = queue[0]
                if job.messages is not None:
                    cached = _cache_get(job.key)
                    if cached is not None:
                        queue.pop(0)
                        _row_save(run, job, answer=cached, cached=True)
                        budget.row_done(True)
                        continue
                if not budget.may_call():
                    return
                queue.pop(0)
                if job.messages is None:
                    running[pool.submit(_agent_step, run, instructions, job)] = ("agent", job)
                else:
                    running[pool.submit(_judge_step, run, job)] = ("judge", job)

        submit_next()
        while running:
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for future in done:
                stage, job = running.pop(future)
                try:
                    result = future.result()
                except AgentCallError as exc:
                    job.tokens_in += exc.tokens_in
                    job.tokens_out += exc.tokens_out
                    job.agent_cost = judge_cost(run.agent_model, exc.tokens_in, exc.tokens_out)
                    budget.spend(job.agent_cost)
                    _row_save(run, job, error=f"agent: {exc}")
                    budget.row_done(False, f"agent: {exc}")
                except JudgeCallError as exc:
                    job.tokens_in += exc.tokens_in
                    job.tokens_out += exc.tokens_out
                    job.judge_cost = judge_cost(run.judge_model, exc.tokens_in, exc.tokens_out)
                    budget.spend(job.judge_cost)
                    _row_save(run, job, error=f"judge: {exc}")
                    budget.row_done(False, f"judge: {exc}")
                except Exception as exc:  # one broken row never fails the run
                    logger.exception("eval_run_row.crashed", extra={"eval_run": run.pk})
                    _row_save(run, job, error=f"internal error: {type(exc).__name__}")
                    budget.row_done(False, type(exc).__name__)
                else:
                    if stage == "agent":
                        budget.spend(job.agent_cost)
                        queue.insert(0, job)  # its judge call goes next
                    else:
                        budget.spend(job.judge_cost)
                        _retrying(lambda job=job, result=result: _cache_put(run, job, result))
                        _row_save(run, job, answer=result)
                        budget.row_done(True)
            submit_next()
    for job in queue:  # not scored: keep what the agent did, if it was asked
        if job.attempt is not None and run.source == EvalRun.Source.AGENT:
            _row_keep_attempt(job)
    _finish(run, stop_reason=budget.stop_reason)


def _row_keep_attempt(job: _Job) -> None:
    EvalRunRow.objects.filter(pk=job.row.pk).update(
        output=job.attempt.output,
        tool_calls=[{"name": c.name, "arguments": c.arguments} for c in job.attempt.calls],
        tokens_in=job.tokens_in,
        tokens_out=job.tokens_out,
        cost=job.cost,
    )


def eval_run_baseline(run: EvalRun) -> EvalRun | None:
    """The last green run of the same dataset (any version), agent and rubric before this one."""
    candidates = (
        EvalRun.objects.filter(
            dataset__name=run.dataset.name,
            agent_version__agent_id=run.agent_version.agent_id,
            rubric=run.rubric,
            rubric_text=run.rubric_text,
            status=EvalRun.Status.DONE,
            rows_scored__gt=0,
            regressed=False,
            finished_at__isnull=False,
        )
        .exclude(pk=run.pk)
        .select_related("dataset", "agent_version")
    )
    if run.finished_at is not None:
        candidates = candidates.filter(finished_at__lte=run.finished_at)
    return candidates.order_by("-finished_at", "-pk").first()


def pass_rate_drop(run: EvalRun, baseline: EvalRun | None) -> float | None:
    """Percentage points of pass rate the run lost to its baseline (negative: it gained)."""
    if baseline is None or baseline.pass_rate is None or run.pass_rate is None:
        return None
    return round(baseline.pass_rate - run.pass_rate, 6)


def _finish(run: EvalRun, *, stop_reason: str = "", failed: bool = False) -> None:
    """Skip the rows never started, total the run, compare it with its baseline, close it."""
    _retrying(lambda: _finish_write(run, stop_reason=stop_reason, failed=failed))
    logger.info(
        "eval_run.finished",
        extra={
            "eval_run": run.pk,
            "status": run.status,
            "scored": run.rows_scored,
            "errored": run.rows_errored,
            "pass_rate": run.pass_rate,
            "regressed": run.regressed,
        },
    )


def _finish_write(run: EvalRun, *, stop_reason: str, failed: bool) -> None:
    with transaction.atomic():
        run.rows.filter(outcome=EvalRunRow.Outcome.PENDING).update(
            outcome=EvalRunRow.Outcome.SKIPPED
        )
        _counters_update(run)
        run.refresh_from_db()
        if failed:
            run.status = EvalRun.Status.FAILED
        elif stop_reason:
            run.status = EvalRun.Status.STOPPED
        else:
            run.status = EvalRun.Status.DONE
        run.stop_reason = stop_reason[:300]
        run.finished_at = timezone.now()
        run.baseline = eval_run_baseline(run)
        drop = pass_rate_drop(run, run.baseline)
        run.regressed = drop is not None and drop > run.max_drop + 1e-9
        run.save(update_fields=["status", "stop_reason", "finished_at", "baseline", "regressed"])
        eval_run_finished(run)


def eval_run_finished(run: EvalRun) -> None:
    """Tell the webhooks subscribed to eval_run.finished, inside the transaction that closes the
    run: its deliveries are sent once that commits, and never if it rolls back."""
    from django.urls import reverse

    webhook_emit(
        event="eval_run.finished",
        payload={
            "eval_run": run.pk,
            "dataset": run.dataset.name,
            "dataset_version": run.dataset.version,
            "agent": run.agent_version.agent.name,
            "agent_version": run.agent_version.version,
            "rubric": run.rubric,
            "status": run.status,
            "rows_scored": run.rows_scored,
            "rows_errored": run.rows_errored,
            "pass_rate": run.pass_rate,
            "mean_score": run.mean_score,
            "regressed": run.regressed,
            "baseline": run.baseline_id,
            "url": webhook_link(reverse("eval-run-detail", args=[run.pk])),
        },
    )
