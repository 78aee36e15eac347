"""Gate runs: run a gate on a candidate agent version and record exactly what it used.

A gate run gathers facts (the candidate's and the baseline's golden-set calls, the promoted rule
versions, the gate judge's verdicts, turn timings), asks the judge runner for verdicts that are
missing, lets `gates.gate_decide` decide, and records exactly what it used.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from core.background import after_commit
from core.errors import DomainError
from core.leases import heartbeat, lease_expired_before, lease_lost
from evals.catalog.models import AgentVersion, Transcript
from evals.gating import decision as gates
from evals.gating.models import Gate, GateRun, GoldenSet
from evals.gating.registry import GateSource, gate_sources_used
from evals.gating.selectors import gate_agents
from evals.gating.services.errors import GateCannotRun
from evals.gating.services.gate_facts import (
    call_facts,
    current_checksum,
    gate_judge,
    gate_scope,
    golden_calls,
    is_detector,
    metric_specs,
    pick_verdicts,
    promoted_rules,
)
from evals.gating.services.golden_sets import golden_checksum, golden_set_member_specs
from evals.judging.models import Judge, JudgeRun
from evals.judging.services import runs as judging
from evals.rules.models import RuleVersion
from evals.rules.selectors import rule_versions_current
from evals.webhooks.services import webhook_emit, webhook_link

logger = logging.getLogger(__name__)

# The Celery task of a run's steps (evals.gating.tasks), queued by name.
GATE_RUN_TASK = "evals.tasks.gate_run_task"


def gate_resolve(name: str) -> Gate:
    gate = Gate.objects.select_related("golden_set", "judge").filter(name=name).first()
    if gate is None:
        raise GateCannotRun(f"gate: no gate {name!r}")
    return gate


def gate_versions_check(
    *, gate: Gate, candidate: AgentVersion, baseline: AgentVersion | None = None
) -> None:
    """Refuse a candidate or baseline of an agent the gate does not gate (its golden set has no
    call of that agent): such a run could only fail on calls it cannot find."""
    agents = gate_agents(gate)
    if not agents:
        return  # no golden call recorded yet: nothing says whose gate this is
    ids = {a.pk for a in agents}
    names = ", ".join(a.name for a in agents)
    for which, version in (("candidate", candidate), ("baseline", baseline)):
        if version is not None and version.agent_id not in ids:
            raise GateCannotRun(
                f"{version} is a version of agent {version.agent.name}, but gate {gate.name} "
                f"gates {names} (its golden set {gate.golden_set.name} has calls of "
                f"{'that agent' if len(agents) == 1 else 'those agents'} only): choose a "
                f"version of {names}",
                field=which,
            )


def gate_default_baseline(*, gate: Gate, candidate: AgentVersion) -> GateRun | None:
    """The latest passing run of this gate on another
    version of the same agent (never a failed one)."""
    return (
        GateRun.objects.filter(
            gate=gate, status=GateRun.Status.PASS, candidate__agent_id=candidate.agent_id
        )
        .exclude(candidate=candidate)
        .select_related("candidate")
        .order_by("-created_at", "-pk")
        .first()
    )


def judge_missing_start(
    *, judge: Judge | None, pairs: Sequence[tuple[Transcript, RuleVersion]], by: str = ""
) -> JudgeRun | None:
    """Start a judge run for the verdicts a gate run lacks; return it (None when there is none).

    The runner judges the current version of a rule with the configured LLM judge, and detector
    rules with their detector judges. A pair it cannot produce (a promoted version that is not the
    current one, or a gate judge other than the runner's) stays missing, and the gate fails on it
    with "no verdict". Without a broker the run's items are judged before this returns.
    """
    if not pairs:
        return None
    runner_judge = judging.llm_judge_name(judging.judge_settings().model)
    latest = {rv.rule_id: rv.number for rv in rule_versions_current()}
    usable = [
        (t, rv)
        for t, rv in pairs
        if latest.get(rv.rule_id) == rv.number
        and (is_detector(rv) or (judge is not None and judge.name == runner_judge))
    ]
    if not usable:
        return None
    try:
        run = judging.judge_run_create(
            transcript_ids=sorted({t.external_id for t, _ in usable}),
            rule_ids=sorted({rv.rule.rule_id for _, rv in usable}),
            started_by=by or "gate",
            detectors_only=all(is_detector(rv) for _, rv in usable),
        )
    except DomainError as e:  # JudgeRunInvalid, an unknown agent version
        logger.info("gate_judge_skipped", extra={"reason": str(e)[:200]})
        return None
    if transaction.get_connection().in_atomic_block and settings.CELERY_TASK_ALWAYS_EAGER:
        # Inside a caller's transaction the run's tasks are queued only at its commit: without a
        # broker run them now (a worker could not see the uncommitted run anyway).
        judging.judge_run_enqueue(run_id=run.pk)
    return run


FINISHED = (GateRun.Status.PASS, GateRun.Status.FAIL, GateRun.Status.ERROR)
DECIDED = (GateRun.Status.PASS, GateRun.Status.FAIL)
WAITING, DONE = "waiting", "done"


@transaction.atomic
def gate_run_start(
    *,
    gate: Gate,
    candidate: AgentVersion,
    baseline: AgentVersion | None = None,
    by: str = "",
    judge_missing_verdicts: bool = True,
    background: bool = True,
) -> GateRun:
    """Record a pending gate run and decide it: in a Celery task after commit (`background`; a
    thread of this process without a broker), or here, waiting for the judge (the CLI).

    `baseline` defaults to the candidate of this gate's latest passing run on another version of
    the same agent; a failed run never becomes the baseline. The baseline is re-scored with the
    same promoted rule versions, judge and golden set as the candidate, so only the agent differs.
    """
    if baseline is not None and baseline.pk == candidate.pk:
        raise GateCannotRun("baseline: the same version as the candidate")
    gate_versions_check(gate=gate, candidate=candidate, baseline=baseline)
    run = GateRun.objects.create(
        gate=gate,
        candidate=candidate,
        baseline=baseline,
        status=GateRun.Status.PENDING,
        golden_set=gate.golden_set,
        golden_set_checksum=gate.golden_set.checksum,
        judge_missing_verdicts=judge_missing_verdicts,
        started_by=by,
        results={},
    )
    logger.info("gate_run_queued", extra={"gate": gate.pk, "gate_run": run.pk})
    if background:
        after_commit(GATE_RUN_TASK, run.pk)
        return run
    return gate_run_finish(run_id=run.pk)


def gate_run_evaluate(
    *,
    gate: Gate,
    candidate: AgentVersion,
    baseline: AgentVersion | None = None,
    by: str = "",
    judge_missing_verdicts: bool = True,
) -> GateRun:
    """Run a gate here and now, waiting for the judge; return the decided run."""
    return gate_run_start(
        gate=gate,
        candidate=candidate,
        baseline=baseline,
        by=by,
        judge_missing_verdicts=judge_missing_verdicts,
        background=False,
    )


def gate_run_finish(*, run_id: int) -> GateRun:
    """Take a run's steps until it is decided, sleeping while the judge works (CLI, tests)."""
    while gate_run_step(run_id=run_id) == WAITING:
        time.sleep(settings.GATE_POLL_S)
    return GateRun.objects.get(pk=run_id)


def gate_run_step(*, run_id: int) -> str:
    """Move a gate run on; return "waiting" (its judge run is still working) or "done".

    Idempotent: a decided run is left alone. Anything that stops the run records it as `error`
    with the reason, so the history shows it (the one place that catches it).
    """
    with transaction.atomic():
        run = (
            GateRun.objects.select_for_update(of=("self",))
            .select_related("gate", "candidate", "baseline", "golden_set")
            .filter(pk=run_id)
            .first()
        )
        if run is None or run.status in FINISHED:
            return DONE
        run.status, run.heartbeat_at = GateRun.Status.RUNNING, timezone.now()
        run.save(update_fields=["status", "heartbeat_at"])
    try:
        with heartbeat(GateRun.objects.filter(pk=run.pk)):  # a long step (judging here) too
            return _step(run)
    except GateCannotRun as e:
        _record_error(run, str(e))
    except Exception as e:
        logger.exception("gate_run_crashed", extra={"gate_run": run.pk})
        _record_error(run, f"{type(e).__name__}: {e}")
    return DONE


@dataclass
class _Inputs:
    """What a gate run decides on, gathered at each step."""

    golden_set: GoldenSet
    rules: dict
    specs: list
    scope_rvs: dict[str, RuleVersion]
    baseline: AgentVersion | None
    baseline_run: GateRun | None
    cand_calls: dict[str, Transcript]
    base_calls: dict[str, Transcript]
    judge: Judge | None
    # The layers above gating the gate reads (evals.gating.registry), and each one's judge.
    sources: list[GateSource] = field(default_factory=list)
    source_judges: dict[str, Judge | None] = field(default_factory=dict)

    @property
    def all_calls(self) -> list[Transcript]:
        return list(self.cand_calls.values()) + list(self.base_calls.values())

    def picked(self) -> dict:
        return pick_verdicts(
            [t.pk for t in self.all_calls],
            self.scope_rvs.values(),
            self.judge,
            {g: self.source_judges.get(s.name) for s in self.sources for g in s.rule_groups},
        )

    def judge_sources(self) -> None:
        """(Re)read each source's judge: a run it started may have made a new one."""
        self.source_judges = {
            s.name: s.judge(self.all_calls) if s.judge else None for s in self.sources
        }


def _inputs(run: GateRun) -> _Inputs:
    gate, candidate, baseline = run.gate, run.candidate, run.baseline
    rules, rvs_by_rule = promoted_rules()
    specs = metric_specs(gate)
    _, scope_ids = gate_scope(specs, rules)
    scope_rvs = {rid: rvs_by_rule[rid] for rid in scope_ids}
    if baseline is None:
        baseline_run = gate_default_baseline(gate=gate, candidate=candidate)
        baseline = baseline_run.candidate if baseline_run else None
    else:
        baseline_run = (
            GateRun.objects.filter(gate=gate, candidate=baseline, status__in=DECIDED)
            .order_by("-created_at", "-pk")
            .first()
        )
    cand_calls = golden_calls(run.golden_set, candidate)
    base_calls = golden_calls(run.golden_set, baseline) if baseline else {}
    calls = list(cand_calls.values()) + list(base_calls.values())
    sources = gate_sources_used(
        [s.kind for s in specs], {rv.rule.group for rv in scope_rvs.values()}
    )
    elsewhere = {g for s in sources for g in s.rule_groups}
    judge = gate_judge(
        gate, calls, [rv for rv in scope_rvs.values() if rv.rule.group not in elsewhere]
    )
    inputs = _Inputs(
        run.golden_set,
        rules,
        specs,
        scope_rvs,
        baseline,
        baseline_run,
        cand_calls,
        base_calls,
        judge,
        sources,
    )
    inputs.judge_sources()
    return inputs


def _step(run: GateRun) -> str:
    """Start the judge on what is missing (once), wait for it (up to GATE_JUDGE_WAIT_S), decide."""
    inputs = _inputs(run)
    picked = inputs.picked()
    judging = run.results.get("judging")
    if run.judge_missing_verdicts and judging is None:
        judging = _judging_claim(run, inputs, picked)
    runs = [(judging or {}).get("judge_run"), *((judging or {}).get("layer_runs") or {}).values()]
    if any(runs):
        if _judging_waits(judging, [r for r in runs if r]):
            return WAITING
        if judging.get("layer_runs"):
            inputs.judge_sources()
        picked = inputs.picked()
    judged = 0
    if judging:
        missing_now = len(inputs.all_calls) * len(inputs.scope_rvs) - len(picked)
        judged = max(0, judging["missing"] - missing_now)
    _decide(run, inputs, picked, judged)
    return DONE


def _judging_waits(judging: dict, run_ids: list[int]) -> bool:
    """Return whether the judge runs still work (within GATE_JUDGE_WAIT_S); raise GateCannotRun
    when they cannot give the verdicts (one failed or stopped short at its cost cap or circuit
    breaker, or they did not finish in time): a gate never
    fails on verdicts that a dead worker or a failed judge run did not make."""
    open_states = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)
    still_open = JudgeRun.objects.filter(pk__in=run_ids, status__in=open_states)
    if still_open.exists():
        if time.time() < judging["until"]:
            return True
        logger.info("gate_judge_wait_timeout", extra={"judge_run": judging["judge_run"]})
        late = still_open.order_by("pk").first()
        raise GateCannotRun(
            f"judge run #{late.pk} did not finish within GATE_JUDGE_WAIT_S "
            f"({settings.GATE_JUDGE_WAIT_S:g} s; {late.tasks_done} of {late.tasks_total} checks "
            "done): the verdicts it was to make are missing"
        )
    # A run stopped by its cost cap or its circuit breaker left checks undone, as a failed one did.
    ended_short = (JudgeRun.Status.FAILED, JudgeRun.Status.STOPPED)
    failed = JudgeRun.objects.filter(pk__in=run_ids, status__in=ended_short).first()
    if failed is not None:
        how = "failed" if failed.status == JudgeRun.Status.FAILED else "stopped"
        raise GateCannotRun(
            f"judge run #{failed.pk} {how} ({failed.stop_reason or 'see the server log'}): "
            "the verdicts it was to make are missing"
        )
    return False


def _judging_claim(run: GateRun, inputs: _Inputs, picked: dict) -> dict:
    """Start the judge on the verdicts the run lacks, once; return what was started.

    Under the run's row lock: a second worker taking the same step (a task delivered twice, or
    retried) finds the first one's judge run instead of starting another.
    """
    with transaction.atomic():
        locked = GateRun.objects.select_for_update().only("results").get(pk=run.pk)
        if locked.results.get("judging") is not None:
            run.results = locked.results
            return locked.results["judging"]
        elsewhere = {g for s in inputs.sources for g in s.rule_groups}
        pairs = [
            (t, rv)
            for t in inputs.all_calls
            for rv in inputs.scope_rvs.values()
            if (t.pk, rv.pk) not in picked and rv.rule.group not in elsewhere
        ]
        judge_run = judge_missing_start(judge=inputs.judge, pairs=pairs, by=run.started_by)
        # Each layer's own judge works on what the calls lack (the conversation judge scores the
        # golden calls it has not, whole).
        layer_runs = {}
        for source in inputs.sources:
            if source.start_missing:
                started = source.start_missing(transcripts=inputs.all_calls, by=run.started_by)
                if started is not None:
                    layer_runs[source.name] = started.pk
        judging = {
            "judge_run": judge_run.pk if judge_run else None,
            "layer_runs": layer_runs,
            "missing": len(pairs),
            "until": time.time() + settings.GATE_JUDGE_WAIT_S,
        }
        run.results = {"judging": judging}
        GateRun.objects.filter(pk=run.pk).update(results=run.results)
    return judging


def _decide(run: GateRun, inputs: _Inputs, picked: dict, judged: int) -> None:
    """Let gates.gate_decide decide on the facts; record the run with exactly what it used."""
    golden_set, scope_rvs, judge = inputs.golden_set, inputs.scope_rvs, inputs.judge
    members = list(golden_set.members.select_related("transcript"))
    golden = gates.GoldenFacts(
        name=str(golden_set),
        checksum=golden_set.checksum,
        current_checksum=golden_checksum(golden_set_member_specs(golden_set)),
        members=tuple(
            gates.MemberFact(
                scenario=m.scenario,
                pinned_call=m.transcript_external_id,
                pinned_checksum=m.transcript_checksum,
                current_checksum=current_checksum(m),
            )
            for m in members
        ),
    )
    ids = [t.pk for t in inputs.all_calls]
    per_call = {
        s.name: s.call_facts(ids, inputs.source_judges.get(s.name))
        for s in inputs.sources
        if s.call_facts
    }
    decision = gates.gate_decide(
        golden=golden,
        rules=inputs.rules,
        metrics=inputs.specs,
        candidate=call_facts(inputs.cand_calls, scope_rvs, picked, per_call),
        baseline=(
            call_facts(inputs.base_calls, scope_rvs, picked, per_call) if inputs.baseline else None
        ),
        candidate_layers=_version_facts(inputs, run.candidate),
        baseline_layers=_version_facts(inputs, inputs.baseline) if inputs.baseline else None,
    )
    notes: list[str] = []
    if inputs.baseline_run is not None:
        notes += _comparability_notes(inputs.baseline_run, golden_set, scope_rvs, judge)
    results = decision.to_dict()
    results.update(
        {
            "notes": notes,
            "golden_set": {
                "name": golden_set.name,
                "version": golden_set.version,
                "checksum": golden_set.checksum,
            },
            "judge": judge.name if judge else None,
            # "<layer>_judge": the judge of each layer the gate read ("conversation_judge").
            **{f"{name}_judge": j.name if j else None for name, j in inputs.source_judges.items()},
            "rule_versions": [
                {"rule": rid, "version": rv.number, "id": rv.pk}
                for rid, rv in sorted(scope_rvs.items())
            ],
            "calls": {s: t.external_id for s, t in sorted(inputs.cand_calls.items())},
            "baseline_calls": {s: t.external_id for s, t in sorted(inputs.base_calls.items())},
            "baseline_run": inputs.baseline_run.pk if inputs.baseline_run else None,
        }
    )
    status = GateRun.Status.PASS if decision.passed else GateRun.Status.FAIL
    with transaction.atomic():
        # Once: a step the sweep queued again beside a late one decides nothing twice.
        decided = (
            GateRun.objects.filter(pk=run.pk)
            .exclude(status__in=FINISHED)
            .update(
                baseline=inputs.baseline,
                status=status,
                judge=judge,
                results=results,
                judged=judged,
            )
        )
        if not decided:
            return
        run.rule_versions.set(list(scope_rvs.values()))
        _emit_finished(run.pk)
    logger.info(
        "gate_run_evaluated",
        extra={
            "gate": run.gate_id,
            "gate_run": run.pk,
            "candidate": run.candidate_id,
            "baseline": inputs.baseline.pk if inputs.baseline else None,
            "status": status,
            "metrics": len(inputs.specs),
            "judged": judged,
        },
    )


def gate_runs_recover(*, now=None) -> dict[str, list[int]]:
    """Find undecided gate runs whose worker stopped taking their steps (their lease expired);
    return {"requeue": run ids to queue again, "failed": run ids ended as could-not-run}.

    A run queued again DOCKET_RUN_MAX_RECOVERIES times ends as error (could not run, exit 2),
    never as a fail: a dead worker says nothing about the candidate.
    """
    now = now or timezone.now()
    expired = lease_expired_before(now)
    out: dict[str, list[int]] = {"requeue": [], "failed": []}
    lost = GateRun.objects.exclude(status__in=FINISHED).filter(
        lease_lost(expired, since="created_at")
    )
    for run in lost.order_by("pk"):
        if run.recoveries >= settings.DOCKET_RUN_MAX_RECOVERIES:
            _record_error(
                run,
                f"its worker stopped and {run.recoveries} recoveries did not finish it "
                "(DOCKET_RUN_MAX_RECOVERIES)",
            )
            out["failed"].append(run.pk)
            continue
        # Held for the queued step, so the next sweep waits a whole lease for it.
        GateRun.objects.filter(pk=run.pk).update(recoveries=F("recoveries") + 1, heartbeat_at=now)
        logger.warning("gate_run_recovered", extra={"gate_run": run.pk})
        out["requeue"].append(run.pk)
    return out


def _version_facts(inputs: _Inputs, version: AgentVersion) -> dict:
    """The facts of the layers the gate reads about one agent version (its eval runs)."""
    return {s.name: s.version_facts(version) for s in inputs.sources if s.version_facts}


def _record_error(run: GateRun, error: str) -> None:
    """Record why a run could not be decided (status error), so the history shows it."""
    with transaction.atomic():
        recorded = (
            GateRun.objects.filter(pk=run.pk)
            .exclude(status__in=FINISHED)
            .update(status=GateRun.Status.ERROR, error=error[:2000])
        )
        if recorded:
            _emit_finished(run.pk)
    logger.info("gate_run_error", extra={"gate_run": run.pk})


def _emit_finished(run_id: int) -> None:
    """Tell the webhooks subscribed to gate_run.finished (sent once this transaction commits)."""
    run = GateRun.objects.select_related("gate", "candidate__agent", "baseline").get(pk=run_id)
    results = run.results or {}
    webhook_emit(
        event="gate_run.finished",
        payload={
            "gate_run": run.pk,
            "gate": run.gate.name,
            "status": run.status,
            "passed": run.passed,
            "agent": run.candidate.agent.name,
            "candidate": run.candidate.version,
            "baseline": run.baseline.version if run.baseline_id else None,
            "failed_metrics": [
                {"label": m.get("label"), "value": m.get("value"), "threshold": m.get("threshold")}
                for m in results.get("metrics", [])
                if not m.get("passed")
            ],
            "problems": results.get("problems", []),
            "error": run.error,
            "url": webhook_link(reverse("gate-run-detail", args=[run.pk])),
        },
    )


def _comparability_notes(
    baseline_run: GateRun, golden_set: GoldenSet, scope_rvs, judge
) -> list[str]:
    """Say what differs from the baseline's own run: the
    baseline is re-scored, never compared across."""
    notes = []
    if baseline_run.golden_set_checksum != golden_set.checksum:
        notes.append(
            f"golden set changed since baseline run #{baseline_run.pk} "
            f"({baseline_run.golden_set_checksum[:12]} → {golden_set.checksum[:12]}); "
            "the baseline is re-scored on the current set"
        )
    before = {
        rv.rule.rule_id: rv.number for rv in baseline_run.rule_versions.select_related("rule")
    }
    now = {rid: rv.number for rid, rv in scope_rvs.items()}
    bumped = [
        f"{rid} v{before[rid]} → v{n}"
        for rid, n in sorted(now.items())
        if rid in before and before[rid] != n
    ]
    added = [f"{rid} v{n}" for rid, n in sorted(now.items()) if rid not in before]
    if bumped:
        notes.append(
            f"rule versions changed since baseline run #{baseline_run.pk}: {', '.join(bumped)}; "
            "the baseline is re-scored with the current versions"
        )
    if added:
        notes.append(f"rules added since baseline run #{baseline_run.pk}: {', '.join(added)}")
    if baseline_run.judge_id != (judge.pk if judge else None):
        notes.append(
            f"judge changed since baseline run #{baseline_run.pk}; "
            "the baseline is re-scored with this judge"
        )
    return notes
