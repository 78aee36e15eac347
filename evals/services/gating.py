"""Golden sets, gates and gate runs: the writes. The decision itself is pure (`evals/gates.py`).

A gate run gathers facts (the candidate's and the baseline's golden-set calls, the promoted rule
versions, the gate judge's verdicts, turn timings), asks the judge runner for verdicts that are
missing, lets `gates.gate_decide` decide, and records exactly what it used.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Max

from core.errors import DomainError
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

logger = logging.getLogger(__name__)


class GateCannotRun(DomainError):
    """The gate could not run at all (unknown gate, version or baseline; a broken configuration)."""

    code = "gate_cannot_run"


class GateConfigInvalid(DomainError, ValueError):
    """A golden set or gate definition is bad; the
    message names where (`gates[0].metrics[1].max`)."""

    code = "gate_config_invalid"


# ---- golden sets -----------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberSpec:
    scenario: str
    call: str = ""  # external id of a pinned recorded call
    checksum: str = ""  # that call's checksum when pinned


def golden_checksum(members: Iterable[MemberSpec]) -> str:
    """sha256 over the members' content: scenario names and pinned calls' checksums, order-free."""
    canon = sorted(
        ({"scenario": m.scenario, "call": m.call, "checksum": m.checksum} for m in members),
        key=lambda d: d["scenario"],
    )
    return hashlib.sha256(
        json.dumps(canon, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


def golden_set_member_specs(golden_set: GoldenSet) -> list[MemberSpec]:
    """The members as stored now (what the frozen checksum is checked against)."""
    return [
        MemberSpec(m.scenario, m.transcript_external_id, m.transcript_checksum)
        for m in golden_set.members.all()
    ]


def _member_specs(members: Sequence[Any], where: str = "members") -> list[MemberSpec]:
    """Validate member input (scenario names, or {"scenario", "call"} mappings) and pin calls."""
    if not members:
        raise GateConfigInvalid(f"{where}: a golden set needs at least one scenario")
    out, seen = [], set()
    for i, raw in enumerate(members):
        here = f"{where}[{i}]"
        if isinstance(raw, str):
            raw = {"scenario": raw}
        if not isinstance(raw, Mapping):
            raise GateConfigInvalid(
                f"{here}: must be a scenario name or a mapping with scenario and call"
            )
        unknown = set(raw) - {"scenario", "call"}
        if unknown:
            raise GateConfigInvalid(f"{here}.{min(unknown)}: unknown field (use scenario, call)")
        call = str(raw.get("call") or "").strip()
        scenario = str(raw.get("scenario") or "").strip()
        checksum = ""
        if call:
            t = Transcript.objects.filter(external_id=call).only("checksum", "scenario").first()
            if t is None:
                raise GateConfigInvalid(f"{here}.call: no call {call!r} in Docket")
            checksum = t.checksum
            scenario = scenario or t.scenario or f"call/{call}"
        if not scenario:
            raise GateConfigInvalid(f"{here}.scenario: missing")
        if len(scenario) > 200:
            raise GateConfigInvalid(f"{here}.scenario: longer than 200 characters")
        if scenario in seen:
            raise GateConfigInvalid(f"{here}.scenario: {scenario!r} is listed twice")
        seen.add(scenario)
        out.append(MemberSpec(scenario, call, checksum))
    return out


def _golden_set_write(
    *, name: str, version: int, specs: list[MemberSpec], description: str, by: str
) -> GoldenSet:
    gs = GoldenSet.objects.create(
        name=name,
        version=version,
        description=description,
        checksum=golden_checksum(specs),
        created_by=by,
    )
    calls = {
        t.external_id: t
        for t in Transcript.objects.filter(external_id__in=[s.call for s in specs if s.call])
    }
    GoldenSetMember.objects.bulk_create(
        [
            GoldenSetMember(
                golden_set=gs,
                position=i,
                scenario=s.scenario,
                transcript=calls.get(s.call),
                transcript_external_id=s.call,
                transcript_checksum=s.checksum,
            )
            for i, s in enumerate(specs)
        ]
    )
    logger.info(
        "golden_set_created", extra={"golden_set": gs.pk, "version": version, "members": len(specs)}
    )
    return gs


@transaction.atomic
def golden_set_create(
    *, name: str, members: Sequence[Any], description: str = "", by: str = ""
) -> GoldenSet:
    """Create and freeze version 1 of a golden set. Members: scenario names or {scenario, call}."""
    if not name or not isinstance(name, str):
        raise GateConfigInvalid("name: missing")
    if GoldenSet.objects.filter(name=name).exists():
        raise GateConfigInvalid(
            f"name: golden set {name!r} exists; revise it to make a new version"
        )
    return _golden_set_write(
        name=name, version=1, specs=_member_specs(members), description=description, by=by
    )


@transaction.atomic
def golden_set_revise(
    *, golden_set: GoldenSet, members: Sequence[Any], description: str | None = None, by: str = ""
) -> GoldenSet:
    """Return a new frozen version with these members (the latest one when nothing changed).

    Gates on any older version of the set move to the new version.
    """
    specs = _member_specs(members)
    latest = GoldenSet.objects.filter(name=golden_set.name).order_by("-version").first()
    intact = golden_checksum(golden_set_member_specs(latest)) == latest.checksum
    if intact and latest.checksum == golden_checksum(specs):
        return latest
    new = _golden_set_write(
        name=golden_set.name,
        version=latest.version + 1,
        specs=specs,
        description=latest.description if description is None else description,
        by=by,
    )
    moved = Gate.objects.filter(golden_set__name=golden_set.name).update(golden_set=new)
    logger.info(
        "golden_set_revised",
        extra={"golden_set": new.pk, "version": new.version, "gates_moved": moved},
    )
    return new


# ---- gates -----------------------------------------------------------------------------------

METRIC_FIELDS = {
    GateMetric.Kind.SAFETY_CEILING: {"rule"},
    GateMetric.Kind.VIOLATION_RATE: {"rule", "group", "max"},
    GateMetric.Kind.DETECTOR_METRIC: {"measure", "max"},
    GateMetric.Kind.JUDGE_SCORE_REGRESSION: {"rule", "group", "score", "tolerance"},
}


def _number(value: Any, where: str, *, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GateConfigInvalid(f"{where}: must be a number, got {value!r}")
    if value < minimum:
        raise GateConfigInvalid(f"{where}: must be {minimum:g} or more")
    return float(value)


def metric_clean(raw: Any, where: str = "metric") -> dict:
    """Validate one metric definition (YAML shape) and return GateMetric field values."""
    if not isinstance(raw, Mapping):
        raise GateConfigInvalid(f"{where}: must be a mapping with a kind")
    kind = raw.get("kind")
    if kind not in GateMetric.Kind.values:
        raise GateConfigInvalid(
            f"{where}.kind: {kind!r} is not one of {', '.join(GateMetric.Kind.values)}"
        )
    allowed = METRIC_FIELDS[kind]
    for key in raw:
        if key != "kind" and key not in allowed:
            raise GateConfigInvalid(
                f"{where}.{key}: not a field of {kind} (fields: {', '.join(sorted(allowed))})"
            )
    out: dict[str, Any] = {
        "kind": kind,
        "rule": None,
        "group": "",
        "measure": "",
        "threshold": None,
        "tolerance": None,
    }
    if raw.get("rule"):
        rule = Rule.objects.filter(rule_id=raw["rule"]).first()
        if rule is None:
            raise GateConfigInvalid(f"{where}.rule: no rule {raw['rule']!r}")
        out["rule"] = rule
    if raw.get("group"):
        out["group"] = str(raw["group"])
    if out["rule"] and out["group"]:
        raise GateConfigInvalid(f"{where}: give a rule or a group, not both")
    if kind == GateMetric.Kind.VIOLATION_RATE:
        if not (out["rule"] or out["group"]):
            raise GateConfigInvalid(f"{where}: a violation rate needs a rule or a group")
        if "max" not in raw:
            raise GateConfigInvalid(
                f"{where}.max: missing (the highest violation rate that passes, 0 to 1)"
            )
        out["threshold"] = _number(raw["max"], f"{where}.max")
        if out["threshold"] > 1:
            raise GateConfigInvalid(f"{where}.max: a rate is at most 1")
    elif kind == GateMetric.Kind.DETECTOR_METRIC:
        if raw.get("measure") not in gates.MEASURES:
            raise GateConfigInvalid(
                f"{where}.measure: {raw.get('measure')!r} is not one of {', '.join(gates.MEASURES)}"
            )
        out["measure"] = raw["measure"]
        if "max" not in raw:
            raise GateConfigInvalid(f"{where}.max: missing")
        out["threshold"] = _number(raw["max"], f"{where}.max")
    elif kind == GateMetric.Kind.JUDGE_SCORE_REGRESSION:
        score = raw.get("score", gates.WEIGHTED_VIOLATIONS)
        if score not in gates.SCORES:
            raise GateConfigInvalid(
                f"{where}.score: {score!r} is not one of {', '.join(gates.SCORES)}"
            )
        out["measure"] = score
        if "tolerance" not in raw:
            raise GateConfigInvalid(
                f"{where}.tolerance: missing (how much worse than the baseline passes)"
            )
        out["tolerance"] = _number(raw["tolerance"], f"{where}.tolerance")
    return out


def metric_as_yaml(m: GateMetric) -> dict:
    """The YAML shape of a metric (inverse of metric_clean)."""
    d: dict[str, Any] = {"kind": m.kind}
    if m.rule_id:
        d["rule"] = m.rule.rule_id
    if m.group:
        d["group"] = m.group
    if m.kind == GateMetric.Kind.DETECTOR_METRIC:
        d["measure"] = m.measure
    if m.kind == GateMetric.Kind.JUDGE_SCORE_REGRESSION:
        d["score"] = m.measure or gates.WEIGHTED_VIOLATIONS
        d["tolerance"] = m.tolerance
    if m.kind in (GateMetric.Kind.VIOLATION_RATE, GateMetric.Kind.DETECTOR_METRIC):
        d["max"] = m.threshold
    return d


def _judge_clean(name: Any, where: str) -> Judge | None:
    if not name:
        return None
    judge = Judge.objects.filter(name=name).first()
    if judge is None:
        raise GateConfigInvalid(f"{where}: no judge {name!r} (import its verdicts first)")
    return judge


@transaction.atomic
def gate_save(
    *,
    name: str,
    golden_set: GoldenSet,
    metrics: Sequence[Mapping],
    judge: Judge | None = None,
    description: str = "",
    by: str = "",
) -> tuple[Gate, bool]:
    """Create a gate or replace its definition; return (gate, changed). Unchanged is a no-op."""
    cleaned = [metric_clean(m, f"metrics[{i}]") for i, m in enumerate(metrics)]
    if not cleaned:
        raise GateConfigInvalid("metrics: a gate needs at least one metric")
    gate = Gate.objects.filter(name=name).first()
    if gate is not None:
        same = (
            gate.golden_set_id == golden_set.pk
            and gate.judge_id == (judge.pk if judge else None)
            and gate.description == description
            and [metric_as_yaml(m) for m in gate.metrics.select_related("rule")]
            == [metric_as_yaml(GateMetric(**c)) for c in cleaned]
        )
        if same:
            return gate, False
        gate.golden_set, gate.judge, gate.description, gate.updated_by = (
            golden_set,
            judge,
            description,
            by,
        )
        gate.save()
        gate.metrics.all().delete()
    else:
        gate = Gate.objects.create(
            name=name,
            golden_set=golden_set,
            judge=judge,
            description=description,
            created_by=by,
            updated_by=by,
        )
    GateMetric.objects.bulk_create(
        [GateMetric(gate=gate, position=i, **c) for i, c in enumerate(cleaned)]
    )
    logger.info("gate_saved", extra={"gate": gate.pk, "metrics": len(cleaned)})
    return gate, True


@transaction.atomic
def gate_metric_add(*, gate: Gate, data: Mapping, by: str = "") -> GateMetric:
    """Add one metric to a gate."""
    cleaned = metric_clean(data)
    position = (gate.metrics.aggregate(m=Max("position"))["m"] or 0) + 1
    metric = GateMetric.objects.create(gate=gate, position=position, **cleaned)
    Gate.objects.filter(pk=gate.pk).update(updated_by=by)
    return metric


@transaction.atomic
def gate_metric_update(
    *, metric: GateMetric, threshold: Any = None, tolerance: Any = None, by: str = ""
) -> GateMetric:
    """Change a metric's threshold (violation rate, detector) or tolerance (judge score)."""
    raw = metric_as_yaml(metric)
    if metric.kind in (GateMetric.Kind.VIOLATION_RATE, GateMetric.Kind.DETECTOR_METRIC):
        raw["max"] = threshold
    elif metric.kind == GateMetric.Kind.JUDGE_SCORE_REGRESSION:
        raw["tolerance"] = tolerance
    cleaned = metric_clean(raw)
    metric.threshold, metric.tolerance = cleaned["threshold"], cleaned["tolerance"]
    metric.save(update_fields=["threshold", "tolerance"])
    Gate.objects.filter(pk=metric.gate_id).update(updated_by=by)
    return metric


@transaction.atomic
def gate_metric_delete(*, metric: GateMetric, by: str = "") -> None:
    gate_id = metric.gate_id
    if GateMetric.objects.filter(gate_id=gate_id).count() <= 1:
        raise GateConfigInvalid("metrics: a gate needs at least one metric")
    metric.delete()
    Gate.objects.filter(pk=gate_id).update(updated_by=by)


@transaction.atomic
def gate_settings_update(*, gate: Gate, golden_set_id: Any, judge_id: Any, by: str = "") -> Gate:
    """Point a gate at another version of its golden
    set and/or another judge (None: the one judge)."""
    gs = (
        GoldenSet.objects.filter(pk=golden_set_id, name=gate.golden_set.name).first()
        if golden_set_id
        else None
    )
    if gs is None:
        raise GateConfigInvalid(f"golden_set: pick a version of {gate.golden_set.name}")
    judge = None
    if judge_id:
        judge = Judge.objects.filter(pk=judge_id).first()
        if judge is None:
            raise GateConfigInvalid("judge: no such judge")
    gate.golden_set, gate.judge, gate.updated_by = gs, judge, by
    gate.save(update_fields=["golden_set", "judge", "updated_by", "updated_at"])
    logger.info("gate_settings_updated", extra={"gate": gate.pk, "golden_set": gs.pk})
    return gate


# ---- YAML import and export ------------------------------------------------------------------


def _golden_ref(ref: Any, where: str, made: Mapping[str, GoldenSet]) -> GoldenSet:
    if not isinstance(ref, str) or not ref:
        raise GateConfigInvalid(f"{where}: missing (a golden set name, or name@version)")
    name, _, version = ref.partition("@")
    if name in made and not version:
        return made[name]
    qs = GoldenSet.objects.filter(name=name)
    if version:
        if not version.isdigit():
            raise GateConfigInvalid(f"{where}: {ref!r}: the version after @ must be a number")
        qs = qs.filter(version=int(version))
    gs = qs.order_by("-version").first()
    if gs is None:
        raise GateConfigInvalid(f"{where}: no golden set {ref!r}")
    return gs


def _config_entry_check(raw: Any, where: str, fields: set[str]) -> None:
    """Check one golden_sets or gates entry: a mapping with a name and no field outside `fields`."""
    if not isinstance(raw, Mapping) or not raw.get("name"):
        raise GateConfigInvalid(f"{where}.name: missing")
    extra = set(raw) - fields
    if extra:
        raise GateConfigInvalid(f"{where}.{min(extra)}: unknown field")


@transaction.atomic
def gates_import(*, data: Any, by: str = "") -> dict:
    """Import golden sets and gates from the YAML document (already parsed); all or nothing.

    Returns counts: {"golden_sets": {"created", "revised", "unchanged"}, "gates": {...}}.
    """
    if not isinstance(data, Mapping):
        raise GateConfigInvalid("top level: must be a mapping with golden_sets and/or gates")
    unknown = set(data) - {"golden_sets", "gates"}
    if unknown:
        raise GateConfigInvalid(f"{min(unknown)}: unknown section (use golden_sets, gates)")
    counts = {
        "golden_sets": {"created": 0, "revised": 0, "unchanged": 0},
        "gates": {"created": 0, "updated": 0, "unchanged": 0},
    }
    made: dict[str, GoldenSet] = {}
    for i, raw in enumerate(data.get("golden_sets") or []):
        where = f"golden_sets[{i}]"
        _config_entry_check(raw, where, {"name", "description", "members", "checksum", "version"})
        specs = _member_specs(raw.get("members") or [], f"{where}.members")
        if raw.get("checksum") and raw["checksum"] != golden_checksum(specs):
            raise GateConfigInvalid(
                f"{where}.checksum: {raw['checksum'][:12]}… does not match its members "
                f"({golden_checksum(specs)[:12]}…): a scenario or a pinned call changed"
            )
        name, desc = raw["name"], raw.get("description", "")
        latest = GoldenSet.objects.filter(name=name).order_by("-version").first()
        if latest is None:
            made[name] = golden_set_create(
                name=name, members=raw["members"], description=desc, by=by
            )
            counts["golden_sets"]["created"] += 1
        else:
            new = golden_set_revise(
                golden_set=latest, members=raw["members"], description=desc, by=by
            )
            counts["golden_sets"]["unchanged" if new.pk == latest.pk else "revised"] += 1
            made[name] = new
    for i, raw in enumerate(data.get("gates") or []):
        where = f"gates[{i}]"
        _config_entry_check(raw, where, {"name", "description", "golden_set", "judge", "metrics"})
        gs = _golden_ref(raw.get("golden_set"), f"{where}.golden_set", made)
        judge = _judge_clean(raw.get("judge"), f"{where}.judge")
        existed = Gate.objects.filter(name=raw["name"]).exists()
        try:
            _, changed = gate_save(
                name=raw["name"],
                golden_set=gs,
                judge=judge,
                metrics=raw.get("metrics") or [],
                description=raw.get("description", ""),
                by=by,
            )
        except GateConfigInvalid as e:
            raise GateConfigInvalid(f"{where}.{e}") from None
        counts["gates"]["unchanged" if not changed else ("updated" if existed else "created")] += 1
    return counts


def gates_export(*, names: Sequence[str] | None = None) -> dict:
    """The YAML document for the named gates (all when None) and the golden sets they use."""
    qs = Gate.objects.select_related("golden_set", "judge").prefetch_related("metrics__rule")
    if names:
        qs = qs.filter(name__in=names)
    gate_list = list(qs)
    sets = {g.golden_set.pk: g.golden_set for g in gate_list}
    doc = {"golden_sets": [], "gates": []}
    for gs in sorted(sets.values(), key=lambda s: s.name):
        members = []
        for m in gs.members.all():
            members.append(
                {"scenario": m.scenario, "call": m.transcript_external_id}
                if m.transcript_external_id
                else m.scenario
            )
        doc["golden_sets"].append(
            {
                "name": gs.name,
                "version": gs.version,
                "checksum": gs.checksum,
                **({"description": gs.description} if gs.description else {}),
                "members": members,
            }
        )
    for g in gate_list:
        entry = {"name": g.name}
        if g.description:
            entry["description"] = g.description
        entry["golden_set"] = g.golden_set.name
        if g.judge_id:
            entry["judge"] = g.judge.name
        entry["metrics"] = [metric_as_yaml(m) for m in g.metrics.all()]
        doc["gates"].append(entry)
    return doc


# ---- gate runs -------------------------------------------------------------------------------


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
