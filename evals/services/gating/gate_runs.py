"""Gate runs: run a gate on a candidate agent version and record exactly what it used.

A gate run gathers facts (the candidate's and the baseline's golden-set calls, the promoted rule
versions, the gate judge's verdicts, turn timings), asks the judge runner for verdicts that are
missing, lets `gates.gate_decide` decide, and records exactly what it used.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

from django.db import transaction
from django.db.models import Max

from evals import gates
from evals.models import (
    AgentVersion,
    Gate,
    GateMetric,
    GateRun,
    GoldenSet,
    GoldenSetMember,
    Judge,
    Rule,
    RuleVersion,
    Transcript,
    Turn,
    Verdict,
)

from .errors import GateCannotRun
from .golden_sets import golden_checksum, golden_set_member_specs

logger = logging.getLogger(__name__)


def agent_version_resolve(text: str, *, what: str = "candidate") -> AgentVersion:
    """Find an agent version by `VERSION` or `AGENT:VERSION`;
    raise GateCannotRun when unknown or ambiguous."""
    agent, sep, version = (text or "").rpartition(":")
    qs = AgentVersion.objects.select_related("agent").filter(version=version)
    if sep:
        qs = qs.filter(agent__name=agent)
    found = list(qs[:2])
    if not found:
        raise GateCannotRun(f"{what}: no agent version {text!r}")
    if len(found) > 1:
        raise GateCannotRun(
            f"{what}: {text!r} names versions of several agents; write AGENT:VERSION"
        )
    return found[0]


def gate_resolve(name: str) -> Gate:
    gate = Gate.objects.select_related("golden_set", "judge").filter(name=name).first()
    if gate is None:
        raise GateCannotRun(f"gate: no gate {name!r}")
    return gate


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


def promoted_rules() -> tuple[dict[str, gates.GatedRule], dict[str, RuleVersion]]:
    """Every active rule with its promoted (latest gated) version, or version None."""
    out, versions = {}, {}
    gated = {}
    promoted = RuleVersion.objects.filter(
        status=RuleVersion.Status.GATED, rule__status=Rule.Status.ACTIVE
    )
    for rv in promoted.select_related("rule").order_by("rule_id", "number"):
        gated[rv.rule_id] = rv
    for rule in Rule.objects.filter(status=Rule.Status.ACTIVE):
        rv = gated.get(rule.pk)
        out[rule.rule_id] = gates.GatedRule(
            rule=rule.rule_id,
            group=rule.group,
            version=rv.number if rv else None,
            safety=rule.safety,
            severity=rule.severity,
            rule_version_id=rv.pk if rv else None,
        )
        if rv:
            versions[rule.rule_id] = rv
    return out, versions


def metric_specs_one(m: GateMetric) -> gates.MetricSpec:
    return gates.MetricSpec(
        kind=m.kind,
        rule=m.rule.rule_id if m.rule_id else "",
        group=m.group,
        measure=m.measure,
        threshold=m.threshold,
        tolerance=m.tolerance,
    )


def metric_specs(gate: Gate) -> list[gates.MetricSpec]:
    return [metric_specs_one(m) for m in gate.metrics.select_related("rule")]


def _golden_calls(golden_set: GoldenSet, version: AgentVersion) -> dict[str, Transcript]:
    """scenario -> the version's call of that scenario (the latest imported when replayed twice)."""
    scenarios = list(golden_set.members.values_list("scenario", flat=True))
    out: dict[str, Transcript] = {}
    for t in Transcript.objects.filter(agent_version=version, scenario__in=scenarios).order_by(
        "scenario", "-imported_at", "-pk"
    ):
        out.setdefault(t.scenario, t)
    return out


def _is_detector(rv: RuleVersion) -> bool:
    return bool(rv.detector or rv.rule.detector)


VERDICT_FIELDS = (
    "pk",
    "transcript_id",
    "rule_version_id",
    "judge_id",
    "judge__kind",
    "flagged",
    "turn",
    "turns",
    "severity",
    "error",
)


def _pick_verdicts(
    transcript_ids: Sequence[int], rvs: Iterable[RuleVersion], judge: Judge | None
) -> dict[tuple[int, int], tuple]:
    """(transcript, rule version) -> the verdict row
    the gate counts: the gate judge's, or a detector's.

    Rows (VERDICT_FIELDS), not model instances: a large golden set has tens of thousands of them.
    """
    rv_list = list(rvs)
    detector_rvs = {rv.pk for rv in rv_list if _is_detector(rv)}
    chosen: dict[tuple[int, int], tuple] = {}
    rows = Verdict.objects.filter(
        transcript__in=list(transcript_ids), rule_version__in=[rv.pk for rv in rv_list]
    )
    for row in rows.values_list(*VERDICT_FIELDS).iterator(chunk_size=5000):
        key = (row[1], row[2])
        if judge is not None and row[3] == judge.pk:
            chosen[key] = row
        elif row[2] in detector_rvs and row[4] == Judge.Kind.DETECTOR:
            chosen.setdefault(key, row)
    return chosen


def _gate_judge(
    gate: Gate, calls: Iterable[Transcript], rvs: Iterable[RuleVersion]
) -> Judge | None:
    """The gate's judge; when it names none, the one LLM judge with verdicts on these calls."""
    if gate.judge_id:
        return gate.judge
    llm_rvs = [rv.pk for rv in rvs if not _is_detector(rv)]
    ids = list(
        Judge.objects.filter(
            verdicts__transcript__in=[t.pk for t in calls], verdicts__rule_version__in=llm_rvs
        )
        .exclude(kind=Judge.Kind.DETECTOR)
        .distinct()
        .values_list("pk", flat=True)[:2]
    )
    if len(ids) > 1:
        raise GateCannotRun(
            f"gate {gate.name}: several judges have verdicts on its calls; set the gate's judge"
        )
    return Judge.objects.get(pk=ids[0]) if ids else None


def _call_facts(
    calls: Mapping[str, Transcript],
    rvs: Mapping[str, RuleVersion],
    verdicts: Mapping[tuple[int, int], tuple],
) -> dict[str, gates.CallFacts]:
    """scenario -> CallFacts from the picked verdict rows and the calls' turn timings."""
    ids = [t.pk for t in calls.values()]
    timings: dict[int, list[gates.TurnTiming]] = {}
    for tid, index, speaker, start, end, conf in (
        Turn.objects.filter(transcript__in=ids)
        .values_list("transcript_id", "index", "speaker", "start_ms", "end_ms", "asr_confidence")
        .iterator(chunk_size=20000)
    ):
        timings.setdefault(tid, []).append(gates.TurnTiming(index, speaker, start, end, conf))
    out = {}
    for scenario, t in calls.items():
        facts = {}
        for rule_id, rv in rvs.items():
            row = verdicts.get((t.pk, rv.pk))
            if row is not None:
                pk, _, _, _, _, flagged, turn, turns, severity, error = row
                facts[rule_id] = gates.VerdictFact(
                    flagged=flagged,
                    turns=tuple(turns or ([turn] if turn is not None else [])),
                    severity=severity,
                    error=error,
                    ref=pk,
                )
        out[scenario] = gates.CallFacts(
            call=t.external_id,
            scenario=scenario,
            verdicts=facts,
            turns=tuple(sorted(timings.get(t.pk, []), key=lambda x: x.index)),
        )
    return out


def _missing_pairs(
    calls: Iterable[Transcript], rvs: Iterable[RuleVersion], judge: Judge | None
) -> list[tuple]:
    rv_list = list(rvs)
    call_list = list(calls)
    have = set(_pick_verdicts([t.pk for t in call_list], rv_list, judge))
    return [(t, rv) for t in call_list for rv in rv_list if (t.pk, rv.pk) not in have]


def judge_missing(
    *, judge: Judge | None, pairs: Sequence[tuple[Transcript, RuleVersion]], by: str = ""
) -> int:
    """Ask the judge runner (and its cache) for the
    verdicts a gate run lacks; return how many it added.

    The runner judges the current version of a rule with the configured LLM judge, and detector
    rules with their detector judges. A pair it cannot produce (a promoted version that is not the
    current one, or a gate judge other than the runner's) stays missing, and the gate fails on it
    with "no verdict". Runs eagerly without a broker; with one, waits up to GATE_JUDGE_WAIT_S.
    """
    if not pairs:
        return 0
    from evals.services import judging  # imports the LLM client: only when something is missing

    runner_judge = judging.llm_judge_name(judging.judge_settings().model)
    latest = dict(
        RuleVersion.objects.values("rule_id").annotate(n=Max("number")).values_list("rule_id", "n")
    )
    usable = [
        (t, rv)
        for t, rv in pairs
        if latest.get(rv.rule_id) == rv.number
        and (_is_detector(rv) or (judge is not None and judge.name == runner_judge))
    ]
    if not usable:
        return 0
    before = len(pairs)
    transcript_ids = sorted({t.external_id for t, _ in usable})
    rule_ids = sorted({rv.rule.rule_id for _, rv in usable})
    try:
        run = judging.judge_run_create(
            transcript_ids=transcript_ids,
            rule_ids=rule_ids,
            started_by=by or "gate",
            detectors_only=all(_is_detector(rv) for _, rv in usable),
        )
    except judging.JudgeRunInvalid as e:
        logger.info("gate_judge_skipped", extra={"reason": str(e)[:200]})
        return 0
    if transaction.get_connection().in_atomic_block:
        # Inside a caller's transaction the run's tasks are queued only at its commit: run them now
        # when Celery is eager; a worker could not see
        # the uncommitted run, so then they stay missing.
        from django.conf import settings

        if settings.CELERY_TASK_ALWAYS_EAGER:
            judging.judge_run_enqueue(run_id=run.pk)
    else:
        _judge_run_wait(run.pk)
    after = len(
        _missing_pairs(
            {t.pk: t for t, _ in pairs}.values(), {rv.pk: rv for _, rv in pairs}.values(), judge
        )
    )
    logger.info(
        "gate_judged", extra={"judge_run": run.pk, "missing_before": before, "missing_after": after}
    )
    return max(0, before - after)


def _judge_run_wait(run_id: int) -> None:
    """Wait for a judge run to finish (it already has when Celery runs eagerly)."""
    import time

    from django.conf import settings

    from evals.models import JudgeRun

    deadline = time.monotonic() + settings.GATE_JUDGE_WAIT_S
    open_states = (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING)
    while JudgeRun.objects.filter(pk=run_id, status__in=open_states).exists():
        if time.monotonic() > deadline:
            logger.info("gate_judge_wait_timeout", extra={"judge_run": run_id})
            return
        time.sleep(1)


def _gate_scope(specs, rules) -> tuple[set[str], list[str]]:
    rule_ids: set[str] = set()
    for spec in specs:
        scope, _, _ = gates.metric_rules(spec, rules)
        rule_ids.update(r.rule for r in scope)
    return rule_ids, sorted(rule_ids)


def gate_run_evaluate(
    *,
    gate: Gate,
    candidate: AgentVersion,
    baseline: AgentVersion | None = None,
    by: str = "",
    judge_missing_verdicts: bool = True,
) -> GateRun:
    """Judge what is missing, decide the gate on the candidate's golden-set calls, record the run.

    `baseline` defaults to the candidate of this gate's latest passing run on another version of
    the same agent; a failed run never becomes the baseline. The baseline is re-scored with the same
    promoted rule versions, judge and golden set as the candidate, so only the agent differs.
    """
    golden_set = gate.golden_set
    rules, rvs_by_rule = promoted_rules()
    specs = metric_specs(gate)
    _, scope_ids = _gate_scope(specs, rules)
    scope_rvs = {rid: rvs_by_rule[rid] for rid in scope_ids}
    baseline_run = None
    notes: list[str] = []
    if baseline is None:
        baseline_run = gate_default_baseline(gate=gate, candidate=candidate)
        baseline = baseline_run.candidate if baseline_run else None
    elif baseline.pk == candidate.pk:
        raise GateCannotRun("baseline: the same version as the candidate")
    else:
        baseline_run = (
            GateRun.objects.filter(gate=gate, candidate=baseline)
            .order_by("-created_at", "-pk")
            .first()
        )

    cand_calls = _golden_calls(golden_set, candidate)
    base_calls = _golden_calls(golden_set, baseline) if baseline else {}
    judge = _gate_judge(
        gate, list(cand_calls.values()) + list(base_calls.values()), scope_rvs.values()
    )

    all_calls = list(cand_calls.values()) + list(base_calls.values())
    picked = _pick_verdicts([t.pk for t in all_calls], scope_rvs.values(), judge)
    judged = 0
    if judge_missing_verdicts:
        pairs = [
            (t, rv) for t in all_calls for rv in scope_rvs.values() if (t.pk, rv.pk) not in picked
        ]
        judged = judge_missing(judge=judge, pairs=pairs, by=by)
        if judged:
            picked = _pick_verdicts([t.pk for t in all_calls], scope_rvs.values(), judge)

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
                current_checksum=_current_checksum(m),
            )
            for m in members
        ),
    )
    decision = gates.gate_decide(
        golden=golden,
        rules=rules,
        metrics=specs,
        candidate=_call_facts(cand_calls, scope_rvs, picked),
        baseline=_call_facts(base_calls, scope_rvs, picked) if baseline else None,
    )
    if baseline_run is not None:
        notes += _comparability_notes(baseline_run, golden_set, scope_rvs, judge)
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
            "rule_versions": [
                {"rule": rid, "version": rv.number, "id": rv.pk}
                for rid, rv in sorted(scope_rvs.items())
            ],
            "calls": {s: t.external_id for s, t in sorted(cand_calls.items())},
            "baseline_calls": {s: t.external_id for s, t in sorted(base_calls.items())},
            "baseline_run": baseline_run.pk if baseline_run else None,
        }
    )
    with transaction.atomic():
        run = GateRun.objects.create(
            gate=gate,
            candidate=candidate,
            baseline=baseline,
            status=GateRun.Status.PASS if decision.passed else GateRun.Status.FAIL,
            golden_set=golden_set,
            golden_set_checksum=golden_set.checksum,
            judge=judge,
            results=results,
            judged=judged,
            started_by=by,
        )
        run.rule_versions.set(list(scope_rvs.values()))
    logger.info(
        "gate_run_evaluated",
        extra={
            "gate": gate.pk,
            "gate_run": run.pk,
            "candidate": candidate.pk,
            "baseline": baseline.pk if baseline else None,
            "status": run.status,
            "metrics": len(specs),
            "judged": judged,
        },
    )
    return run


def _current_checksum(member: GoldenSetMember) -> str | None:
    if not member.transcript_external_id:
        return None
    t = (
        member.transcript
        or Transcript.objects.filter(external_id=member.transcript_external_id).first()
    )
    return t.checksum if t else None


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


def gate_run_record_error(
    *, gate: Gate, candidate: AgentVersion, error: str, by: str = ""
) -> GateRun:
    """Record a run that could not be decided (status error), so the history shows it."""
    return GateRun.objects.create(
        gate=gate,
        candidate=candidate,
        status=GateRun.Status.ERROR,
        golden_set=gate.golden_set,
        golden_set_checksum=gate.golden_set.checksum,
        error=error[:2000],
        started_by=by,
        results={},
    )
