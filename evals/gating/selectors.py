"""Reads for golden sets, gates and gate runs: payloads, history, the runs' metric movements."""

from __future__ import annotations

from collections import OrderedDict

from django.db.models import Count, OuterRef, Prefetch, Q, Subquery

from core import stats
from evals.catalog.models import Agent, AgentVersion, Transcript
from evals.gating import output as gate_output
from evals.gating.models import Gate, GateRun, GoldenSet
from evals.judging.models import Judge, Verdict


def gate_agents(gate: Gate) -> list[Agent]:
    """Return the agents a gate gates: those with a call of its golden set (a pinned call, or a
    call of one of its scenarios). Empty while no agent has one yet."""
    members = list(gate.golden_set.members.all())
    scenarios = [m.scenario for m in members]
    pinned = [m.transcript_id for m in members if m.transcript_id]
    calls = Transcript.objects.filter(Q(scenario__in=scenarios) | Q(pk__in=pinned))
    return list(
        Agent.objects.filter(pk__in=calls.values("agent_version__agent_id")).order_by("name")
    )


def gate_candidates(gate: Gate):
    """Return the agent versions a gate may run on: its agents' (every version while it has
    none), newest first within each agent."""
    qs = AgentVersion.objects.select_related("agent").order_by("agent__name", "-version")
    agents = gate_agents(gate)
    return qs.filter(agent__in=agents) if agents else qs


def gate_run_payload(run: GateRun) -> dict:
    """The JSON shape of a gate run (command --format json, API, and the page)."""
    results = run.results or {}
    return {
        "id": run.pk,
        "gate": run.gate.name,
        "status": run.status,
        "passed": run.status == GateRun.Status.PASS,
        "candidate": run.candidate.version,
        "agent": run.candidate.agent.name,
        "baseline": run.baseline.version if run.baseline_id else None,
        "baseline_run": results.get("baseline_run"),
        "golden_set": results.get("golden_set")
        or (
            {
                "name": run.golden_set.name,
                "version": run.golden_set.version,
                "checksum": run.golden_set_checksum,
            }
            if run.golden_set_id
            else None
        ),
        "judge": results.get("judge"),
        "rule_versions": results.get("rule_versions", []),
        "judged": run.judged,
        "problems": results.get("problems", []),
        "notes": results.get("notes", []),
        "metrics": results.get("metrics", []),
        "calls": results.get("calls", {}),
        "error": run.error,
        "created_at": run.created_at.isoformat() if run.created_at else None,
        "url": f"/gates/runs/{run.pk}/",
    }


def gates_with_last_run() -> list[dict]:
    """Every gate with its newest run (one query for the gates, one for the runs)."""
    gate_list = list(
        Gate.objects.select_related("golden_set", "judge").annotate(n_metrics=Count("metrics"))
    )
    newest = (
        GateRun.objects.filter(gate=OuterRef("pk")).order_by("-created_at", "-pk").values("pk")[:1]
    )
    last_ids = dict(Gate.objects.annotate(last=Subquery(newest)).values_list("pk", "last"))
    runs = GateRun.objects.select_related("candidate").in_bulk([i for i in last_ids.values() if i])
    return [{"gate": g, "last": runs.get(last_ids.get(g.pk))} for g in gate_list]


def golden_sets_latest() -> list[GoldenSet]:
    """The newest version of every golden set."""
    newest = GoldenSet.objects.filter(name=OuterRef("name")).order_by("-version").values("pk")[:1]
    return list(GoldenSet.objects.filter(pk=Subquery(newest)).order_by("name"))


def gate_with_metrics(name: str) -> Gate | None:
    return (
        Gate.objects.select_related("golden_set", "judge")
        .prefetch_related("metrics__rule")
        .filter(name=name)
        .first()
    )


def gate_runs_recent(gate: Gate, limit: int = 10) -> list[GateRun]:
    """Return the gate's latest runs, newest first, with the agent versions they name."""
    return list(
        GateRun.objects.filter(gate=gate).select_related("candidate__agent", "baseline")[:limit]
    )


def gate_page_choices(gate: Gate) -> dict:
    """Return what the gate page's settings form offers:
    the golden set's versions and the judges."""
    return {
        "golden_versions": GoldenSet.objects.filter(name=gate.golden_set.name).order_by("-version"),
        "judges": Judge.objects.order_by("name"),
    }


def golden_set_versions(name: str) -> list[GoldenSet]:
    return list(
        GoldenSet.objects.filter(name=name)
        .order_by("-version")
        .prefetch_related(Prefetch("members"), "gates")
    )


def gate_history(gate: Gate) -> list[dict]:
    """Every run of the gate grouped by candidate version (newest first), each metric marked when it
    moved more than the noise against the previous comparable run (older run, same golden set
    checksum and same rule versions): their 95% intervals do not overlap."""
    runs = list(
        GateRun.objects.filter(gate=gate)
        .select_related("candidate__agent", "baseline")
        .prefetch_related("rule_versions")
        .order_by("created_at", "pk")
    )
    rows = []
    previous = None
    for run in runs:
        metrics = (run.results or {}).get("metrics", [])
        rv_key = sorted(rv.pk for rv in run.rule_versions.all())
        comparable = (
            previous is not None
            and previous["checksum"] == run.golden_set_checksum
            and previous["rv_key"] == rv_key
        )
        cells = []
        for i, m in enumerate(metrics):
            prev = previous["metrics"][i] if comparable and i < len(previous["metrics"]) else None
            moved = bool(
                prev
                and prev.get("label") == m.get("label")
                and stats.moved(_interval(prev), _interval(m))
            )
            direction = ""
            if moved and prev.get("value") is not None and m.get("value") is not None:
                direction = "up" if m["value"] > prev["value"] else "down"
            cells.append(
                {
                    "metric": m,
                    "moved": moved,
                    "direction": direction,
                    "value_text": gate_output.fmt(m.get("value")),
                }
            )
        rows.append(
            {
                "run": run,
                "cells": cells,
                "comparable": comparable,
                "reason": ""
                if comparable or previous is None
                else "golden set or rule versions changed",
            }
        )
        if run.status in (GateRun.Status.PASS, GateRun.Status.FAIL):  # decided runs only
            previous = {"checksum": run.golden_set_checksum, "rv_key": rv_key, "metrics": metrics}
    grouped: OrderedDict[str, list[dict]] = OrderedDict()
    for row in reversed(rows):
        grouped.setdefault(str(row["run"].candidate), []).append(row)
    return [{"version": k, "rows": v} for k, v in grouped.items()]


def _interval(m: dict):
    iv = m.get("interval")
    return tuple(iv) if iv else None


def gate_run_verdicts(run: GateRun) -> dict[int, Verdict]:
    """The verdicts cited as evidence in a run's metrics, by id."""
    ids = {
        e["verdict"]
        for m in (run.results or {}).get("metrics", [])
        for e in m.get("evidence", [])
        if e.get("verdict")
    }
    return {
        v.pk: v
        for v in Verdict.objects.filter(pk__in=ids).select_related("rule_version__rule", "judge")
    }


def golden_set_calls(golden_set: GoldenSet) -> dict[str, list[Transcript]]:
    """scenario -> the calls recorded for it, newest agent version first (one per version)."""
    scenarios = list(golden_set.members.values_list("scenario", flat=True))
    out: dict[str, list[Transcript]] = {s: [] for s in scenarios}
    seen = set()
    for t in (
        Transcript.objects.filter(scenario__in=scenarios)
        .select_related("agent_version__agent")
        .order_by("scenario", "-agent_version__version", "-imported_at")
    ):
        key = (t.scenario, t.agent_version_id)
        if key not in seen:
            seen.add(key)
            out[t.scenario].append(t)
    return out
