"""The agent's decisions that come with a transcript line, or that its turn timings imply.

On a transcript line (every field but `kind` and `choice` optional; `turn` or `at_ms` required):

    "decisions": [{"kind": "turn-taking", "turn": 12, "choice": "wait", "confidence": 0.62,
                   "gap_ms": 340},
                  {"kind": "interruption", "at_ms": 45200, "choice": "go on"}]

A kind with `derive: turn_gap` also gets a decision at every agent turn that follows a user turn
(both timed), unless the line reports decisions of that kind itself: the choice is the kind's first
answer (taking the turn) and `gap_ms` the agent's start minus the user's end.

Decisions are keyed by (call, kind, moment): re-importing the same ones is a no-op; a known moment
with another choice is an error unless the import replaces, which rewrites it (and drops its
labels, which were about the old choice).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from core.importing import Errors, Invalid, chunked, copy_rows
from evals.decisions.models import Decision, DecisionKind, DecisionKindVersion
from evals.decisions.services.cells import decision_cells_compact_on_commit

DECISION_FIELDS = ("kind", "turn", "at_ms", "choice", "confidence", "gap_ms")
MAX_DECISIONS = 5000
DECISION_COLUMNS = (
    "transcript_id",
    "kind_id",
    "kind_version_id",
    "key",
    "turn",
    "at_ms",
    "choice",
    "confidence",
    "gap_ms",
    "source",
    "truth",
    "created_at",
)


@dataclass(frozen=True)
class KindInfo:
    kind_id: int
    version_id: int
    answers: tuple[str, ...]
    derive: str


def decision_kinds_for_import() -> dict[str, KindInfo]:
    """Return active kind id -> the kind and its newest version, as the importer needs them."""
    latest: dict[int, DecisionKindVersion] = {}
    for v in DecisionKindVersion.objects.filter(kind__status=DecisionKind.Status.ACTIVE).order_by(
        "kind_id", "number"
    ):
        latest[v.kind_id] = v
    return {
        k.kind_id: KindInfo(k.pk, latest[k.pk].pk, tuple(latest[k.pk].answers), k.derive)
        for k in DecisionKind.objects.filter(pk__in=list(latest))
    }


def _int(raw: dict, name: str, field: str, *, signed: bool = False) -> int | None:
    value = raw.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise Invalid(field, f"must be a whole number, not {value!r}")
    if (not signed and value < 0) or abs(value) > 2**31 - 1:
        raise Invalid(field, f"out of range: {value!r}")
    return int(value)


def _one(raw: Any, i: int, turns: Sequence[dict], kinds: dict[str, KindInfo]) -> dict:
    f = f"decisions[{i}]"
    if not isinstance(raw, dict):
        raise Invalid(f, "must be an object with kind, choice and turn or at_ms")
    unknown = sorted(set(map(str, raw)) - set(DECISION_FIELDS))
    if unknown:
        raise Invalid(f"{f}.{unknown[0]}", f"unknown field (known: {', '.join(DECISION_FIELDS)})")
    kind_id = raw.get("kind")
    if not isinstance(kind_id, str) or not kind_id:
        raise Invalid(f"{f}.kind", "missing")
    kind = kinds.get(kind_id)
    if kind is None:
        known = ", ".join(sorted(kinds)) or "none yet: import decision kinds first"
        raise Invalid(f"{f}.kind", f"unknown decision kind {kind_id!r} (known: {known})")
    choice = raw.get("choice")
    if choice not in kind.answers:
        raise Invalid(
            f"{f}.choice", f"{choice!r} is not one of {', '.join(kind.answers)} ({kind_id})"
        )
    turn = _int(raw, "turn", f"{f}.turn")
    if turn is not None and turn >= len(turns):
        raise Invalid(
            f"{f}.turn", f"{turn}: the call has {len(turns)} turns (0 to {len(turns) - 1})"
        )
    at_ms = _int(raw, "at_ms", f"{f}.at_ms")
    if turn is None and at_ms is None:
        raise Invalid(f"{f}.turn", "missing: give the turn or the time (at_ms) of the moment")
    confidence = raw.get("confidence")
    if confidence is not None:
        if (
            isinstance(confidence, bool)
            or not isinstance(confidence, (int, float))
            or not 0 <= confidence <= 1
        ):
            raise Invalid(f"{f}.confidence", f"must be a number from 0 to 1, not {confidence!r}")
        confidence = float(confidence)
    if at_ms is None and turn is not None:
        at_ms = turns[turn].get("start_ms")
    return {
        "kind": kind,
        "key": f"turn:{turn}" if turn is not None else f"ms:{at_ms}",
        "turn": turn,
        "at_ms": at_ms,
        "choice": choice,
        "confidence": confidence,
        "gap_ms": _int(raw, "gap_ms", f"{f}.gap_ms", signed=True),
        "source": Decision.Source.REPORTED,
    }


def turn_gaps(turns: Sequence[dict]) -> list[tuple[int, int]]:
    """Return (agent turn index, gap ms) for each timed agent turn right after a timed user turn."""
    out, prev = [], None
    for i, t in enumerate(turns):
        if t["speaker"] not in ("agent", "user"):
            continue
        if (
            t["speaker"] == "agent"
            and prev is not None
            and prev["speaker"] == "user"
            and prev.get("end_ms") is not None
            and t.get("start_ms") is not None
        ):
            out.append((i, t["start_ms"] - prev["end_ms"]))
        prev = t
    return out


def decisions_parse(obj: dict, turns: Sequence[dict], kinds: dict[str, KindInfo]) -> list[dict]:
    """Return a line's decisions (reported, then derived), or raise Invalid naming the field."""
    raw = obj.get("decisions")
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise Invalid("decisions", "must be a list")
    if len(raw) > MAX_DECISIONS:
        raise Invalid("decisions", f"{len(raw):,} decisions, more than {MAX_DECISIONS:,}")
    out, keys = [], {}
    for i, d in enumerate(raw):
        one = _one(d, i, turns, kinds)
        key = (one["kind"].kind_id, one["key"])
        if key in keys:
            raise Invalid(
                f"decisions[{i}]", f"the same moment ({one['key']}) as decisions[{keys[key]}]"
            )
        keys[key] = i
        out.append(one)
    reported = {d["kind"].kind_id for d in out}
    for kind in kinds.values():
        if kind.derive == DecisionKind.Derive.TURN_GAP and kind.kind_id not in reported:
            for index, gap in turn_gaps(turns):
                out.append(
                    {
                        "kind": kind,
                        "key": f"turn:{index}",
                        "turn": index,
                        "at_ms": turns[index]["start_ms"],
                        "choice": kind.answers[0],
                        "confidence": None,
                        "gap_ms": gap,
                        "source": Decision.Source.DERIVED,
                    }
                )
    return out


COMPARED = ("choice", "confidence", "gap_ms")


def decisions_write(
    todo: Sequence[tuple[str, int, list[dict]]], *, replace: bool, errors: Errors
) -> tuple[dict[str, int], set[int]]:
    """Store the decisions of (where, transcript pk, decisions) triples; inside the import's
    transaction. Return counts (created, unchanged, rewritten) and the calls that got any.
    Raises ImportFailed (through `errors`) when a known moment has another choice and `replace`
    is off."""
    counts = {"decisions": 0, "decisions_unchanged": 0, "decisions_rewritten": 0}
    touched: set[int] = set()
    pks = [pk for _, pk, ds in todo if ds]
    if not pks:
        return counts, touched
    existing: dict[tuple[int, int, str], Decision] = {}
    for chunk in chunked(pks):
        for d in Decision.objects.filter(transcript_id__in=chunk).only(
            "pk", "transcript_id", "kind_id", "key", *COMPARED
        ):
            existing[(d.transcript_id, d.kind_id, d.key)] = d
    new, stale = [], []
    now = timezone.now()
    for where, pk, ds in todo:
        for i, d in enumerate(ds):
            old = existing.get((pk, d["kind"].kind_id, d["key"]))
            if old is not None and all(getattr(old, f) == d[f] for f in COMPARED):
                counts["decisions_unchanged"] += 1
                continue
            if old is not None:
                if not replace:
                    field = (
                        f"decisions[{i}]" if d["source"] == Decision.Source.REPORTED else "turns"
                    )
                    errors.add(
                        where,
                        field,
                        f"{d['key']} was imported before with choice {old.choice!r} "
                        f"(now {d['choice']!r}); import with replace to overwrite it",
                    )
                    continue
                stale.append(old.pk)
                counts["decisions_rewritten"] += 1
            else:
                counts["decisions"] += 1
            touched.add(pk)
            new.append(
                (
                    pk,
                    d["kind"].kind_id,
                    d["kind"].version_id,
                    d["key"],
                    d["turn"],
                    d["at_ms"],
                    d["choice"],
                    d["confidence"],
                    d["gap_ms"],
                    d["source"],
                    "",
                    now,
                )
            )
    errors.check()
    for chunk in chunked(stale):
        Decision.objects.filter(pk__in=chunk).delete()
    copy_rows(Decision, DECISION_COLUMNS, new, total=len(new))
    decision_cells_compact_on_commit()  # the COPY's triggers appended the cells' deltas
    return counts, touched


def decisions_parser():
    """Return parse(line object, turns) with the active decision kinds loaded once (the
    transcript importer's call part, see apps.py)."""
    kinds = decision_kinds_for_import()
    return lambda obj, turns: decisions_parse(obj, turns, kinds)


def decisions_forget(transcript_ids: list[int]) -> dict[str, int]:
    """Delete the decisions of calls whose turns a replace changed (new ones come with the line)."""
    Decision.objects.filter(transcript_id__in=transcript_ids).delete()
    decision_cells_compact_on_commit()
    return {}
