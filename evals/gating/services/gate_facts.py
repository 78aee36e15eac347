"""The facts a gate run decides on, read from the database: the promoted rule versions, the
metrics, the golden-set calls of a version, the verdicts the gate counts and the turn timings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evals.catalog.models import AgentVersion, Transcript, Turn
from evals.gating import decision as gates
from evals.gating.models import Gate, GateMetric, GoldenSet, GoldenSetMember
from evals.gating.services.errors import GateCannotRun
from evals.judging.models import Judge, Verdict
from evals.rules.models import Rule, RuleVersion


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


def golden_calls(golden_set: GoldenSet, version: AgentVersion) -> dict[str, Transcript]:
    """scenario -> the version's call of that scenario (the latest imported when replayed twice)."""
    scenarios = list(golden_set.members.values_list("scenario", flat=True))
    out: dict[str, Transcript] = {}
    for t in Transcript.objects.filter(agent_version=version, scenario__in=scenarios).order_by(
        "scenario", "-imported_at", "-pk"
    ):
        out.setdefault(t.scenario, t)
    return out


def is_detector(rv: RuleVersion) -> bool:
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


def pick_verdicts(
    transcript_ids: Sequence[int],
    rvs: Iterable[RuleVersion],
    judge: Judge | None,
    group_judges: Mapping[str, Judge | None] | None = None,
) -> dict[tuple[int, int], tuple]:
    """(transcript, rule version) -> the verdict row the gate counts: the gate judge's, a
    detector's, or for a rule of a group another layer judges (`group_judges`: the conversation
    checks) that layer's judge's.

    Rows (VERDICT_FIELDS), not model instances: a large golden set has tens of thousands of them.
    """
    rv_list = list(rvs)
    detector_rvs = {rv.pk for rv in rv_list if is_detector(rv)}
    group_judges = group_judges or {}
    elsewhere = {
        rv.pk: group_judges[rv.rule.group] for rv in rv_list if rv.rule.group in group_judges
    }
    chosen: dict[tuple[int, int], tuple] = {}
    rows = Verdict.objects.filter(
        transcript__in=list(transcript_ids), rule_version__in=[rv.pk for rv in rv_list]
    )
    for row in rows.values_list(*VERDICT_FIELDS).iterator(chunk_size=5000):
        key = (row[1], row[2])
        if row[2] in elsewhere:
            if elsewhere[row[2]] is not None and row[3] == elsewhere[row[2]].pk:
                chosen[key] = row
        elif judge is not None and row[3] == judge.pk:
            chosen[key] = row
        elif row[2] in detector_rvs and row[4] == Judge.Kind.DETECTOR:
            chosen.setdefault(key, row)
    return chosen


def gate_judge(gate: Gate, calls: Iterable[Transcript], rvs: Iterable[RuleVersion]) -> Judge | None:
    """The gate's judge; when it names none, the one LLM judge with verdicts on these calls."""
    if gate.judge_id:
        return gate.judge
    llm_rvs = [rv.pk for rv in rvs if not is_detector(rv)]
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


def call_facts(
    calls: Mapping[str, Transcript],
    rvs: Mapping[str, RuleVersion],
    verdicts: Mapping[tuple[int, int], tuple],
    layers: Mapping[str, Mapping[int, Any]] | None = None,
) -> dict[str, gates.CallFacts]:
    """scenario -> CallFacts from the picked verdict rows, the calls' turn timings and the facts
    of the layers the gate reads (layer name -> transcript pk -> fact)."""
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
            layers={name: facts[t.pk] for name, facts in (layers or {}).items() if t.pk in facts},
        )
    return out


def gate_scope(specs, rules) -> tuple[set[str], list[str]]:
    rule_ids: set[str] = set()
    for spec in specs:
        scope, _, _ = gates.metric_rules(spec, rules)
        rule_ids.update(r.rule for r in scope)
    return rule_ids, sorted(rule_ids)


def current_checksum(member: GoldenSetMember) -> str | None:
    if not member.transcript_external_id:
        return None
    t = (
        member.transcript
        or Transcript.objects.filter(external_id=member.transcript_external_id).first()
    )
    return t.checksum if t else None
