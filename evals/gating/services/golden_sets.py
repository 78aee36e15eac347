"""Golden sets: frozen lists of scenarios (and pinned calls), versioned by checksum."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from evals.catalog.models import Transcript
from evals.gating.models import Gate, GoldenSet, GoldenSetMember
from evals.gating.services.errors import GateConfigInvalid

logger = logging.getLogger(__name__)


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


def member_specs_clean(members: Sequence[Any], where: str = "members") -> list[MemberSpec]:
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
        name=name, version=1, specs=member_specs_clean(members), description=description, by=by
    )


@transaction.atomic
def golden_set_revise(
    *, golden_set: GoldenSet, members: Sequence[Any], description: str | None = None, by: str = ""
) -> GoldenSet:
    """Return a new frozen version with these members (the latest one when nothing changed).

    Gates on any older version of the set move to the new version.
    """
    specs = member_specs_clean(members)
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
