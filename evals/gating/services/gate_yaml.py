"""Golden sets and gates as the YAML the team keeps in git: import (all or nothing) and export."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction

from evals.gating.models import Gate, GoldenSet
from evals.gating.services.errors import GateConfigInvalid
from evals.gating.services.gate_config import gate_save, judge_clean, metric_as_yaml
from evals.gating.services.golden_sets import (
    golden_checksum,
    golden_set_create,
    golden_set_revise,
    member_specs_clean,
)

logger = logging.getLogger(__name__)


def _golden_ref(ref: Any, where: str, made: Mapping[str, GoldenSet]) -> GoldenSet:
    if not isinstance(ref, str) or not ref:
        raise GateConfigInvalid(f"{where}: missing (a golden set name, or name@version)")
    name, _, version = ref.partition("@")
    if name in made and not version:
        return made[name]
    qs = GoldenSet.objects.filter(name=name)
    if version:
        if not (version.isascii() and version.isdigit()):
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
        specs = member_specs_clean(raw.get("members") or [], f"{where}.members")
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
        judge = judge_clean(raw.get("judge"), f"{where}.judge")
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
