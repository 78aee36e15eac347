"""Gates and their metrics: validate a metric, save a gate, edit its metrics and settings."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction
from django.db.models import Max

from evals.gating import decision as gates
from evals.gating.models import Gate, GateMetric, GoldenSet
from evals.gating.services.errors import GateConfigInvalid
from evals.judging.models import Judge
from evals.rules.models import Rule

logger = logging.getLogger(__name__)


def _number(value: Any, where: str, *, minimum: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GateConfigInvalid(f"{where}: must be a number, got {value!r}")
    if value < minimum:
        raise GateConfigInvalid(f"{where}: must be {minimum:g} or more")
    return float(value)


def metric_clean(raw: Any, where: str = "metric") -> dict:
    """Validate one metric definition (YAML shape) against its kind in gates.METRIC_KINDS and
    return GateMetric field values."""
    if not isinstance(raw, Mapping):
        raise GateConfigInvalid(f"{where}: must be a mapping with a kind")
    kind = gates.METRIC_KINDS.get(raw.get("kind"))
    if kind is None:
        raise GateConfigInvalid(
            f"{where}.kind: {raw.get('kind')!r} is not one of {', '.join(gates.METRIC_KINDS)}"
        )
    for key in raw:
        if key != "kind" and key not in kind.fields:
            raise GateConfigInvalid(
                f"{where}.{key}: not a field of {kind.name} "
                f"(fields: {', '.join(sorted(kind.fields))})"
            )
    out: dict[str, Any] = {"kind": kind.name, **_metric_scope(raw, kind, where)}
    out["measure"] = _metric_measure(raw, kind, where)
    out.update(_metric_limits(raw, kind, where))
    return out


def _metric_scope(raw: Mapping, kind: gates.MetricKind, where: str) -> dict:
    """The rule or group a metric counts."""
    rule = None
    if raw.get("rule"):
        rule = Rule.objects.filter(rule_id=raw["rule"]).first()
        if rule is None:
            raise GateConfigInvalid(f"{where}.rule: no rule {raw['rule']!r}")
    group = str(raw["group"]) if raw.get("group") else ""
    if rule and group:
        raise GateConfigInvalid(f"{where}: give a rule or a group, not both")
    if kind.scope == gates.RULE_OR_GROUP and not (rule or group):
        raise GateConfigInvalid(f"{where}: a {kind.name.replace('_', ' ')} needs a rule or a group")
    return {"rule": rule, "group": group}


def _metric_measure(raw: Mapping, kind: gates.MetricKind, where: str) -> str:
    """The metric's measure, score or named thing of its layer (a decision kind)."""
    measure = ""
    for key in ("measure", "score"):
        if key in kind.fields:
            value = raw.get(key, kind.default_option or None)
            if value not in kind.options:
                raise GateConfigInvalid(
                    f"{where}.{key}: {value!r} is not one of {', '.join(kind.options)}"
                )
            measure = value
    if kind.named and raw.get(kind.named):
        name = raw[kind.named]
        if kind.names is not None and name not in set(kind.names()):
            raise GateConfigInvalid(f"{where}.{kind.named}: no {kind.named} kind {name!r}")
        measure = name
    return measure


def _metric_limits(raw: Mapping, kind: gates.MetricKind, where: str) -> dict:
    """The metric's threshold (max or min) and tolerance."""
    out: dict[str, Any] = {"threshold": None, "tolerance": None}
    for key, column in (("max", "threshold"), ("min", "threshold"), ("tolerance", "tolerance")):
        if key in kind.required and key not in raw:
            hint = f" ({kind.help[key]})" if key in kind.help else ""
            raise GateConfigInvalid(f"{where}.{key}: missing{hint}")
        if key in raw:
            out[column] = _number(raw[key], f"{where}.{key}")
    if kind.max_at_most is not None and (out["threshold"] or 0) > kind.max_at_most:
        too_high = kind.help.get("max_at_most") or f"at most {kind.max_at_most:g}"
        raise GateConfigInvalid(f"{where}.{'min' if 'min' in kind.fields else 'max'}: {too_high}")
    return out


def metric_as_yaml(m: GateMetric) -> dict:
    """The YAML shape of a metric (inverse of metric_clean)."""
    kind = gates.METRIC_KINDS.get(m.kind)
    fields = kind.fields if kind else ()
    d: dict[str, Any] = {"kind": m.kind}
    if m.rule_id:
        d["rule"] = m.rule.rule_id
    if m.group:
        d["group"] = m.group
    for key in ("measure", "score"):
        if key in fields:
            d[key] = m.measure or kind.default_option
    if kind and kind.named and m.measure:
        d[kind.named] = m.measure
    if "tolerance" in fields:
        d["tolerance"] = m.tolerance
    if "max" in fields:
        d["max"] = m.threshold
    if "min" in fields:
        d["min"] = m.threshold
    return d


def metric_limit_field(kind_name: str) -> str | None:
    """The one number a lead edits on a metric: `tolerance`, `max`, `min`, or None (a fixed
    ceiling)."""
    kind = gates.METRIC_KINDS.get(kind_name)
    fields = kind.fields if kind else ()
    return next((f for f in ("tolerance", "max", "min") if f in fields), None)


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
    """Change a metric's threshold (`max`) or tolerance, whichever its kind takes."""
    raw = metric_as_yaml(metric)
    limit = metric_limit_field(metric.kind)
    if limit:
        raw[limit] = tolerance if limit == "tolerance" else threshold
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
