"""Gates and their metrics: validate a metric, save a gate, edit its metrics and settings."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction
from django.db.models import Max

from evals import gates
from evals.models import (
    Gate,
    GateMetric,
    GoldenSet,
    Judge,
    Rule,
)

from .errors import GateConfigInvalid

logger = logging.getLogger(__name__)


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


def judge_clean(name: Any, where: str) -> Judge | None:
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
